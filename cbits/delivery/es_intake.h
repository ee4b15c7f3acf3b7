/* SPDX-License-Identifier: BSD-3-Clause */
/* The loop's wake-and-take path: the walker (or any thread) wakes the loop
 * thread, which takes the walked chunks into the stream (es_fanout.h),
 * lets every client write, judges lag (es_bound.h), sends wait notices and
 * publishes what the library holds (es_lossless.h). Owns the loop's wake
 * handle, and a stall of the loop thread that only tests ask for
 * (es_server_test.h). Wakes come from any thread, even once the handle is
 * closed; everything else runs on the loop thread. */
#ifndef ES_INTAKE_H
#define ES_INTAKE_H

#include "es_bound.h"
#include "base/es_counters.h"
#include "es_fanout.h"
#include "es_inbox.h"
#include "es_lossless.h"
#include "es_walker.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <uv.h>

/* What the intake works on, and whom it tells. The pointers outlive it. */
struct es_intake_env {
    uv_loop_t *loop;
    struct es_walker *walker;
    struct es_inbox *inbox;
    struct es_fanout *fan;
    struct es_bound *bound;
    struct es_lossless *lossless;
    struct es_counters *counters; /* bytes_held, bytes_held_peak */
    /* A chunk could not be kept (the first such error is the server's). */
    void (*on_error)(int err, const char *what, void *ctx);
    /* After every wake-up, whatever it brought. */
    void (*on_woken)(void *ctx);
    void *ctx;
};

struct es_intake {
    uv_async_t wake;
    struct es_intake_env env;
    uv_mutex_t lock; /* guards `closed` against wakes from other threads */
    bool closed;     /* the handle is closing: wakes are dropped */
    atomic_uint stall_ms;
    atomic_bool stalled;
};

/* Returns 0 or a libuv error; then nothing is left to undo. */
int es_intake_init(struct es_intake *in, const struct es_intake_env *env);
/* Create the wake handle on the loop (before the loop runs). Returns 0 or
 * a libuv error. */
int es_intake_open(struct es_intake *in);
/* Close the wake handle: later wakes do nothing. Loop thread, or the
 * starting thread before the loop runs. */
void es_intake_close(struct es_intake *in, uv_close_cb cb);
/* After the loop has closed the handle (or never opened it). */
void es_intake_destroy(struct es_intake *in);

/* Wake the loop thread. Any thread. */
void es_intake_wake(struct es_intake *in);

/* Take in what the walker handed over; returns whether there was any. */
bool es_intake_take(struct es_intake *in);

/* Refresh the held-bytes counters after memory changed. */
void es_intake_publish_held(struct es_intake *in);

/* Tests: make the loop thread sleep `ms` at its next wake-up, as if it
 * were stuck; whether it sleeps in it now; end the sleep early. Any
 * thread. */
void es_intake_stall(struct es_intake *in, unsigned ms);
bool es_intake_stalled(struct es_intake *in);
void es_intake_unstall(struct es_intake *in);

#endif
