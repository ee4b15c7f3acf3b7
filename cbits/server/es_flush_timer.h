/* SPDX-License-Identifier: BSD-3-Clause */
/* The paced flush timer: on GHC >= 9.2, the RTS's buffers are flushed
 * every interval while at least one client is connected, so that events
 * reach clients while the program runs. Paced: a flush is skipped while
 * every capability hands its buffers over within the interval by itself
 * (es_pace.h, via the walker). The flush itself is the caller's function
 * (rts-writer/flush.c); this module only decides when, and keeps
 * lossless waits out of its way: it stops every capability, so no RTS
 * thread may wait for a lossless client meanwhile (es_wait.h), and while
 * a lossless client is full the flush is skipped (es_lossless_full: the
 * flush would hand the RTS's buffers over on the loop thread, which must
 * never wait). The settings may
 * be changed from any thread (es_flush_timer_set); everything else runs on
 * the loop thread. */
#ifndef ES_FLUSH_TIMER_H
#define ES_FLUSH_TIMER_H

#include "base/es_counters.h"
#include "policy/es_lossless.h"
#include "delivery/es_walker.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* Flush now; returns whether it flushed. Loop thread. */
typedef bool (*es_flush_fn)(void *ctx);

struct es_flush_timer {
    uv_timer_t timer;
    struct es_walker *walker;     /* for the pacing */
    struct es_counters *counters; /* flushes, flush_us */
    struct es_lossless *lossless; /* waits released around a flush */
    /* The settings, guarded by `lock`. */
    uv_mutex_t lock;
    es_flush_fn fn;
    void *ctx;
    unsigned interval_ms;
    bool paced;
    /* Loop thread. */
    bool wanted;            /* clients are connected and the server runs */
    bool active;            /* the timer is armed */
    unsigned armed_ms;      /* the interval it was armed with */
    uint64_t last_flush;    /* uv_hrtime of the last flush, or of the start */
    bool flushed_since_arm; /* a flush since the timer started */
};

/* Returns 0 or a libuv error. */
int es_flush_timer_init(struct es_flush_timer *t, struct es_walker *walker,
                        struct es_counters *counters, struct es_lossless *lossless);
/* Create the timer on the loop (the loop thread's, before it runs). */
int es_flush_timer_open(struct es_flush_timer *t, uv_loop_t *loop);
/* After the loop has closed the timer (es_flush_timer_handle), or if it
 * was never opened. */
void es_flush_timer_destroy(struct es_flush_timer *t);

static inline uv_handle_t *es_flush_timer_handle(struct es_flush_timer *t) {
    return (uv_handle_t *)&t->timer;
}

/* Call `fn` every `interval_ms` while wanted (0 or NULL: never); `paced`:
 * only as often as the pacing says. The caller turns pacing off when
 * events of the RTS's global buffer must stay live, as heap profile
 * samples must. Any thread; the caller then wakes the loop thread, which
 * applies it with es_flush_timer_update. */
void es_flush_timer_set(struct es_flush_timer *t, es_flush_fn fn, void *ctx, unsigned interval_ms,
                        bool paced);

/* Start or stop the timer: `wanted` when clients are connected and the
 * server is not stopping. Loop thread. */
void es_flush_timer_update(struct es_flush_timer *t, bool wanted);

#endif
