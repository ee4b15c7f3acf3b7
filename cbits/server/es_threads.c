/* SPDX-License-Identifier: BSD-3-Clause */
/* For SCHED_BATCH. */
#define _GNU_SOURCE
#include "es_threads.h"

#include "base/es_time.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

/* Our threads get their fair share of the CPU, but waking one must not
 * preempt the thread that woke it: that is usually an RTS thread still
 * inside writeEventLog, and on a busy machine the call then took as long
 * as the walk it triggered (p50 +30% on two cores, BENCHMARKS.md). Linux's
 * SCHED_BATCH means exactly that; where it is missing or refused, the
 * threads keep the default policy. */
static void run_in_background(uv_thread_t t) {
#ifdef SCHED_BATCH
    struct sched_param p = {.sched_priority = 0};
    pthread_setschedparam(t, SCHED_BATCH, &p);
#else
    (void)t;
#endif
}

int es_threads_start(struct es_threads *t, struct es_walker *walker, struct es_inbox *in,
                     void (*loop_main)(void *), void *arg) {
    assert(!t->started);
    t->walker = walker;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = es_walker_start(walker);
    if (r == 0 && (r = uv_thread_create(&t->loop, loop_main, arg)) != 0) {
        es_inbox_close(in);
        es_walker_join(walker);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0)
        return r;
    t->started = true;
    run_in_background(es_walker_thread(walker));
    run_in_background(t->loop);
    atomic_store(&t->clocks_ok,
                 pthread_getcpuclockid(es_walker_thread(walker), &t->walker_clock) == 0 &&
                     pthread_getcpuclockid(t->loop, &t->loop_clock) == 0);
    return 0;
}

void es_threads_ids(const struct es_threads *t, uv_thread_t *walker, uv_thread_t *loop) {
    assert(t->started);
    *walker = es_walker_thread(t->walker);
    *loop = t->loop;
}

void es_threads_join_loop(struct es_threads *t) {
    assert(t->started);
    if (t->joined)
        return;
    uv_thread_join(&t->loop);
    t->joined = true;
}

/* The thread's CPU time by its clock, into `*last` (what stays once the
 * server stops). */
static uint64_t read_clock(clockid_t clock, atomic_uint_fast64_t *last) {
    struct timespec ts;
    if (clock_gettime(clock, &ts) == 0)
        atomic_store_explicit(last, es_time_timespec_ns(&ts), memory_order_relaxed);
    return atomic_load_explicit(last, memory_order_relaxed);
}

void es_threads_cpu(struct es_threads *t, struct es_counters *k, bool live, uint64_t *walker,
                    uint64_t *loop) {
    live = live && atomic_load(&t->clocks_ok);
    *walker =
        live ? read_clock(t->walker_clock, &k->cpu_walker_ns) : atomic_load(&k->cpu_walker_ns);
    *loop = live ? read_clock(t->loop_clock, &k->cpu_loop_ns) : atomic_load(&k->cpu_loop_ns);
}
