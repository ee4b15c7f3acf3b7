/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_wait.h"

#include "base/es_log.h"
#include "base/es_signal.h"

#include <assert.h>

int es_wait_init(struct es_wait *w, size_t limit) {
    *w = (struct es_wait){.limit = limit};
    atomic_init(&w->active, false);
    atomic_init(&w->waits, 0);
    atomic_init(&w->wait_ns, 0);
    atomic_init(&w->wait_max_ns, 0);
    int r = uv_mutex_init(&w->lock);
    if (r != 0)
        return r;
    r = uv_cond_init(&w->room);
    if (r != 0)
        uv_mutex_destroy(&w->lock);
    return r;
}

void es_wait_destroy(struct es_wait *w) {
    uv_cond_destroy(&w->room);
    uv_mutex_destroy(&w->lock);
}

/* With the lock held: when a wait that began at `start` must end at the
 * latest (uv_hrtime), or 0 for no bound. */
static uint64_t bound(const struct es_wait *w, uint64_t start) {
    uint64_t b = w->deadline;
    if (w->interrupt_ns != 0 && (b == 0 || start + w->interrupt_ns < b))
        b = start + w->interrupt_ns;
    return b;
}

/* With the lock held: whether the caller, waiting since `start`, must wait
 * (yet). */
static bool must_wait(const struct es_wait *w, size_t len, const atomic_size_t *in_flight,
                      uint64_t start, uint64_t now) {
    if (!atomic_load(&w->active) || w->in_rts_call || w->shut)
        return false;
    uint64_t until = bound(w, start);
    if (until != 0 && now >= until)
        return false;
    /* A chunk larger than the limit on its own passes once the client has
     * taken everything else. */
    uint64_t unsent = w->backlog + atomic_load(in_flight);
    return unsent > 0 && unsent + len > w->limit;
}

bool es_wait_for_room(struct es_wait *w, size_t len, const atomic_size_t *in_flight) {
    if (!atomic_load_explicit(&w->active, memory_order_acquire))
        return false;
    uv_mutex_lock(&w->lock);
    uint64_t start = uv_hrtime(), now = start;
    bool waited = false;
    while (must_wait(w, len, in_flight, start, now)) {
        if (!waited)
            es_signal_chain(); /* a Ctrl-C must reach the loop thread (es_signal.h) */
        waited = true;
        w->waiters++;
        /* Timed only for a bound: every change is broadcast. */
        uint64_t until = bound(w, start);
        if (until != 0)
            uv_cond_timedwait(&w->room, &w->lock, until - now);
        else
            uv_cond_wait(&w->room, &w->lock);
        assert(w->waiters > 0);
        w->waiters--;
        now = uv_hrtime();
    }
    bool active = atomic_load(&w->active);
    bool timed_out = waited && w->deadline != 0 && now >= w->deadline && !w->exit_logged;
    if (timed_out)
        w->exit_logged = true;
    if (waited) {
        /* Counted before the lock is let go: whoever sees no waiter
         * (es_wait_waiting) then sees this wait counted. */
        uint64_t ns = now - start;
        atomic_fetch_add_explicit(&w->waits, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&w->wait_ns, ns, memory_order_relaxed);
        uint64_t max = atomic_load_explicit(&w->wait_max_ns, memory_order_relaxed);
        while (ns > max && !atomic_compare_exchange_weak(&w->wait_max_ns, &max, ns))
            ;
    }
    uv_mutex_unlock(&w->lock);
    if (timed_out)
        es_log("a lossless client did not take the end of the stream within the linger time; "
               "the program exits without waiting for it any longer");
    return active;
}

void es_wait_publish(struct es_wait *w, bool active, uint64_t backlog) {
    if (!active && !atomic_load(&w->active))
        return; /* the common case: nobody ever asked */
    uv_mutex_lock(&w->lock);
    atomic_store_explicit(&w->active, active, memory_order_release);
    w->backlog = active ? backlog : 0;
    /* What is in flight may have shrunk too: let every waiter look again. */
    if (w->waiters > 0)
        uv_cond_broadcast(&w->room);
    uv_mutex_unlock(&w->lock);
}

bool es_wait_full(struct es_wait *w, size_t in_flight) {
    if (!atomic_load(&w->active))
        return false;
    uv_mutex_lock(&w->lock);
    bool full = w->backlog + in_flight > w->limit;
    uv_mutex_unlock(&w->lock);
    return full;
}

void es_wait_rts_call(struct es_wait *w, bool calling) {
    uv_mutex_lock(&w->lock);
    /* A call's begin and end come in pairs, never nested (loop thread). */
    assert(w->in_rts_call != calling);
    w->in_rts_call = calling;
    if (calling)
        uv_cond_broadcast(&w->room);
    uv_mutex_unlock(&w->lock);
}

void es_wait_exiting(struct es_wait *w, unsigned linger_ms) {
    uv_mutex_lock(&w->lock);
    if (w->deadline == 0)
        w->deadline = uv_hrtime() + (uint64_t)linger_ms * 1000000u;
    uv_cond_broadcast(&w->room);
    uv_mutex_unlock(&w->lock);
}

void es_wait_interrupted(struct es_wait *w, unsigned linger_ms) {
    uv_mutex_lock(&w->lock);
    w->interrupt_ns = (uint64_t)(linger_ms > 0 ? linger_ms : 1) * 1000000u;
    uv_cond_broadcast(&w->room);
    uv_mutex_unlock(&w->lock);
}

bool es_wait_waiting(struct es_wait *w) {
    uv_mutex_lock(&w->lock);
    bool any = w->waiters > 0;
    uv_mutex_unlock(&w->lock);
    return any;
}

void es_wait_shutdown(struct es_wait *w) {
    uv_mutex_lock(&w->lock);
    w->shut = true;
    uv_cond_broadcast(&w->room);
    uv_mutex_unlock(&w->lock);
}
