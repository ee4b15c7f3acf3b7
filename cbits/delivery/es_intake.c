/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_intake.h"

#include "es_client.h"
#include "es_pool.h"

#include <assert.h>
#include <time.h>

static void on_wake(uv_async_t *h);

int es_intake_init(struct es_intake *in, const struct es_intake_env *env) {
    assert(env->loop != NULL && env->on_error != NULL && env->on_woken != NULL);
    in->env = *env;
    in->closed = false;
    atomic_init(&in->stall_ms, 0);
    atomic_init(&in->stalled, false);
    return uv_mutex_init(&in->lock);
}

int es_intake_open(struct es_intake *in) {
    in->wake.data = in;
    return uv_async_init(in->env.loop, &in->wake, on_wake);
}

void es_intake_close(struct es_intake *in, uv_close_cb cb) {
    uv_mutex_lock(&in->lock);
    assert(!in->closed);
    in->closed = true;
    uv_mutex_unlock(&in->lock);
    uv_close((uv_handle_t *)&in->wake, cb);
}

void es_intake_destroy(struct es_intake *in) {
    uv_mutex_destroy(&in->lock);
}

void es_intake_wake(struct es_intake *in) {
    /* Under the lock, so that the loop cannot close the handle in between. */
    uv_mutex_lock(&in->lock);
    if (!in->closed)
        uv_async_send(&in->wake);
    uv_mutex_unlock(&in->lock);
}

void es_intake_publish_held(struct es_intake *in) {
    struct es_counters *k = in->env.counters;
    size_t held = es_fanout_held(in->env.fan);
    /* A lagging client that caught up or left ends the pool's loans: no
     * backlog to refill. */
    es_pool_note_held(held);
    atomic_store_explicit(&k->bytes_held, held, memory_order_relaxed);
    if (held > atomic_load_explicit(&k->bytes_held_peak, memory_order_relaxed))
        atomic_store_explicit(&k->bytes_held_peak, held, memory_order_relaxed);
}

bool es_intake_take(struct es_intake *in) {
    const struct es_intake_env *e = &in->env;
    struct es_chunk *c = es_walker_take(e->walker);
    bool any = c != NULL;
    size_t bytes = 0;
    while (c != NULL) {
        struct es_chunk *next = c->next;
        bytes += c->len; /* before ingest, which may free or split it */
        if ((c->gap_chunks > 0 || es_bound_notice_due(e->bound)) && es_fanout_have_header(e->fan))
            es_bound_handoff_gap(e->bound, c);
        if (es_fanout_ingest(e->fan, c) != 0)
            e->on_error(UV_ENOMEM, "keeping a chunk for the clients", e->ctx);
        c = next;
    }
    es_inbox_release(e->inbox, bytes);
    return any;
}

/* The stall tests ask for: the loop thread sleeps, a millisecond at a
 * time, until the time is up or the test ends it. */
static void stall(struct es_intake *in) {
    unsigned ms = atomic_exchange(&in->stall_ms, 0);
    if (ms == 0)
        return;
    atomic_store(&in->stalled, true);
    uint64_t until = uv_hrtime() + (uint64_t)ms * 1000000u;
    struct timespec ms1 = {0, 1000000L};
    while (atomic_load(&in->stalled) && uv_hrtime() < until)
        nanosleep(&ms1, NULL);
    atomic_store(&in->stalled, false);
    uv_update_time(in->env.loop);
}

static void on_wake(uv_async_t *h) {
    struct es_intake *in = h->data;
    const struct es_intake_env *e = &in->env;
    stall(in);
    if (es_intake_take(in)) {
        uint64_t now = uv_now(e->loop);
        /* Each client gets to write what it can before its lag is judged:
         * chunks can arrive many at a time (the loop thread was busy, or
         * a client joined just before a burst), and that burst is not the
         * client's fault. */
        es_fanout_each(e->fan, cl, next) {
            es_client_note_progress(cl, now);
            es_client_pump(cl);
            es_bound_check_client(e->bound, cl);
        }
        es_bound_enforce(e->bound);
        es_lossless_notice(e->lossless);
        es_fanout_each(e->fan, cl, next) es_client_pump(cl);
        es_intake_publish_held(in);
        es_lossless_publish(e->lossless);
    }
    e->on_woken(e->ctx);
}

void es_intake_stall(struct es_intake *in, unsigned ms) {
    atomic_store(&in->stall_ms, ms);
    es_intake_wake(in);
}

bool es_intake_stalled(struct es_intake *in) {
    return atomic_load(&in->stalled);
}

void es_intake_unstall(struct es_intake *in) {
    atomic_store(&in->stalled, false);
}
