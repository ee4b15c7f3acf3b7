/* SPDX-License-Identifier: BSD-3-Clause */
/* What a wake-up of the loop thread does with the walked chunks
 * (es_intake.h). */
#include "es_intake.h"

#include "delivery/es_client.h"
#include "delivery/es_pool.h"

#include <assert.h>
#include <time.h>

void es_intake_init(struct es_intake *in, const struct es_intake_env *env) {
    assert(env->loop != NULL && env->walker != NULL && env->fan != NULL);
    in->env = *env;
    atomic_init(&in->stall_ms, 0);
    atomic_init(&in->stalled, false);
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
    struct es_queue taken;
    es_queue_init(&taken);
    bool any = es_walker_take(e->walker, &taken);
    size_t bytes = 0;
    struct es_queue_node *n;
    while ((n = es_queue_pop_head(&taken)) != NULL) {
        struct es_chunk *c = es_chunk_of(n);
        bytes += c->len; /* before ingest, which may free or split it */
        if ((c->gap_chunks > 0 || es_bound_notice_due(e->bound)) && es_fanout_have_header(e->fan))
            es_bound_handoff_gap(e->bound, c);
        es_fanout_ingest(e->fan, c);
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

bool es_intake_run(struct es_intake *in) {
    const struct es_intake_env *e = &in->env;
    stall(in);
    if (!es_intake_take(in))
        return false;
    uint64_t now = uv_now(e->loop);
    /* Each client gets to write what it can before its lag is judged:
     * chunks can arrive many at a time (the loop thread was busy, or a
     * client joined just before a burst), and that burst is not the
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
    return true;
}

void es_intake_stall(struct es_intake *in, unsigned ms) {
    atomic_store(&in->stall_ms, ms);
}

bool es_intake_stalled(struct es_intake *in) {
    return atomic_load(&in->stalled);
}

void es_intake_unstall(struct es_intake *in) {
    atomic_store(&in->stalled, false);
}
