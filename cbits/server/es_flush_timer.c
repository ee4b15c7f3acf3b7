/* SPDX-License-Identifier: BSD-3-Clause */
/* The paced flush timer (es_flush_timer.h). */
#include "es_flush_timer.h"

#define ES_NS_PER_MS UINT64_C(1000000)

int es_flush_timer_init(struct es_flush_timer *t, struct es_walker *walker,
                        struct es_counters *counters, struct es_lossless *lossless) {
    *t = (struct es_flush_timer){.walker = walker, .counters = counters, .lossless = lossless};
    return uv_mutex_init(&t->lock);
}

int es_flush_timer_open(struct es_flush_timer *t, uv_loop_t *loop) {
    t->timer.data = t;
    return uv_timer_init(loop, &t->timer);
}

void es_flush_timer_destroy(struct es_flush_timer *t) {
    uv_mutex_destroy(&t->lock);
}

static void on_timer(uv_timer_t *h);

/* Fire at `due` (uv_hrtime), or at once if that has passed. */
static void arm(struct es_flush_timer *t, uint64_t due) {
    uint64_t now = uv_hrtime();
    uint64_t ms = due > now ? (due - now + ES_NS_PER_MS - 1) / ES_NS_PER_MS : 0;
    uv_timer_start(&t->timer, on_timer, ms, 0);
}

static void on_timer(uv_timer_t *h) {
    struct es_flush_timer *t = h->data;
    uv_mutex_lock(&t->lock);
    es_flush_fn fn = t->fn;
    void *ctx = t->ctx;
    uint64_t interval = (uint64_t)t->interval_ms * ES_NS_PER_MS;
    bool paced = t->paced;
    uv_mutex_unlock(&t->lock);
    if (fn == NULL || interval == 0 || !t->wanted) {
        t->active = false; /* es_flush_timer_update starts it again */
        return;
    }
    uint64_t now = uv_hrtime();
    /* The first time after the timer starts, there is no flush to pace
     * from: capabilities that never handed a block over are unknown. */
    if (paced && t->flushed_since_arm) {
        uint64_t due = es_walker_next_flush(t->walker, t->last_flush, interval);
        /* The timer counts in milliseconds: within one, it is due now. */
        if (due > now + ES_NS_PER_MS) {
            arm(t, due);
            return;
        }
    }
    /* Every buffer is emptied during the flush: from its start on, nothing
     * older is left in one. */
    t->last_flush = now;
    t->flushed_since_arm = true;
    bool flushed = false;
    if (!es_lossless_full(t->lossless)) {
        es_lossless_rts_call(t->lossless, true);
        flushed = fn(ctx);
        es_lossless_rts_call(t->lossless, false);
    }
    if (flushed) {
        atomic_fetch_add_explicit(&t->counters->flushes, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&t->counters->flush_us, (uv_hrtime() - now) / 1000,
                                  memory_order_relaxed);
    }
    arm(t, t->last_flush + interval);
}

void es_flush_timer_set(struct es_flush_timer *t, es_flush_fn fn, void *ctx, unsigned interval_ms,
                        bool paced) {
    uv_mutex_lock(&t->lock);
    t->fn = fn;
    t->ctx = ctx;
    t->interval_ms = interval_ms;
    t->paced = paced;
    uv_mutex_unlock(&t->lock);
}

void es_flush_timer_update(struct es_flush_timer *t, bool wanted) {
    uv_mutex_lock(&t->lock);
    bool want = t->fn != NULL && t->interval_ms > 0;
    unsigned ms = t->interval_ms;
    uv_mutex_unlock(&t->lock);
    t->wanted = wanted;
    want = want && wanted;
    if (want && (!t->active || ms != t->armed_ms)) {
        if (!t->active) {
            t->last_flush = uv_hrtime();
            t->flushed_since_arm = false;
        }
        /* A new interval counts from the last flush, so a shorter one may
         * fire at once. */
        t->armed_ms = ms;
        arm(t, t->last_flush + (uint64_t)ms * ES_NS_PER_MS);
        t->active = true;
    } else if (!want && t->active) {
        uv_timer_stop(&t->timer);
        t->active = false;
    }
}
