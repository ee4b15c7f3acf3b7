/* SPDX-License-Identifier: BSD-3-Clause */
/* The counters behind eventlog_socket_stats(). Written by the library's
 * threads (mostly the loop thread), read by any thread: relaxed atomics,
 * each counter on its own. */
#ifndef ES_COUNTERS_H
#define ES_COUNTERS_H

#include <stdatomic.h>

struct es_counters {
    atomic_uint_fast64_t clients_connected;
    atomic_uint_fast64_t clients_accepted;
    atomic_uint_fast64_t clients_lagged;   /* disconnected for falling behind */
    atomic_uint_fast64_t clients_refused;  /* turned away at the limits */
    atomic_uint_fast64_t clients_lossless; /* connected now (es_wait.h) */
    atomic_uint_fast64_t cpu_writer_ns;    /* RTS threads inside es_server_submit */
    atomic_uint_fast64_t cpu_walker_ns;    /* the threads' CPU clocks, last read */
    atomic_uint_fast64_t cpu_loop_ns;
    atomic_uint_fast64_t bytes_sent;
    atomic_uint_fast64_t chunks_dropped; /* per client, plus lost before any client */
    atomic_uint_fast64_t bytes_dropped;
    /* Lost on the loop thread before any client got them (the hand-off's
     * losses are es_inbox's to count). */
    atomic_uint_fast64_t chunks_lost;
    atomic_uint_fast64_t bytes_lost;
    atomic_uint_fast64_t bytes_held;
    atomic_uint_fast64_t bytes_held_peak;
    atomic_uint_fast64_t flushes;      /* flush timer calls that flushed */
    atomic_uint_fast64_t flush_us;     /* time in them */
    atomic_uint_fast64_t window_bytes; /* in the flight recorder's window now */
    atomic_uint_fast64_t windows_sent; /* clients that were sent the window */
};

#endif
