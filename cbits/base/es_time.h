/* SPDX-License-Identifier: BSD-3-Clause */
/* Clock helpers shared by the modules that wait with a deadline. Any
 * thread. */
#ifndef ES_TIME_H
#define ES_TIME_H

#include <stdint.h>
#include <time.h>

/* CLOCK_REALTIME `ms` milliseconds from now: a deadline for
 * pthread_cond_timedwait, whose condition variables use that clock. */
static inline struct timespec es_time_realtime_in_ms(unsigned ms) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* A timespec in nanoseconds. */
static inline uint64_t es_time_timespec_ns(const struct timespec *t) {
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* The calling thread's CPU time in nanoseconds. */
static inline uint64_t es_time_thread_cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return es_time_timespec_ns(&t);
}

/* A monotonic clock in milliseconds. */
static inline uint64_t es_time_monotonic_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

#endif
