/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's two threads, the walker (es_walker.h) and the loop thread:
 * started together with every signal blocked (the RTS relies on its own
 * threads getting SIGINT, SIGVTALRM, ..., and a write to a vanished client
 * must fail with EPIPE, not raise SIGPIPE before the RTS has installed its
 * handlers), run at SCHED_BATCH, and measured by their CPU clocks
 * (eventlog_socket_stats). Started and joined by the thread that starts
 * and stops the server; the clocks are read from any thread. */
#ifndef ES_THREADS_H
#define ES_THREADS_H

#include "base/es_counters.h"
#include "delivery/es_inbox.h"
#include "delivery/es_walker.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

struct es_threads {
    struct es_walker *walker;
    uv_thread_t loop;
    bool started, joined; /* the loop thread */
    clockid_t walker_clock, loop_clock;
    atomic_bool clocks_ok;
};

/* Start the walker and a loop thread running `loop_main(arg)`. Returns 0,
 * or a libuv error: then neither runs (the walker was stopped through its
 * inbox `in`). */
int es_threads_start(struct es_threads *t, struct es_walker *walker, struct es_inbox *in,
                     void (*loop_main)(void *), void *arg);

/* The walker's and the loop thread's ids, once started (for tests). */
void es_threads_ids(const struct es_threads *t, uv_thread_t *walker, uv_thread_t *loop);

/* Wait for the loop thread to end; later calls return at once. */
void es_threads_join_loop(struct es_threads *t);

/* The CPU time (ns) of the walker and the loop thread so far. Read from
 * their clocks while `live` (the threads surely run: a clock id names a
 * thread id, which another thread may have once this one has ended), and
 * kept in `k`; otherwise what was read last. Any thread. */
void es_threads_cpu(struct es_threads *t, struct es_counters *k, bool live, uint64_t *walker,
                    uint64_t *loop);

#endif
