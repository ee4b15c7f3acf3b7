/* SPDX-License-Identifier: BSD-3-Clause */
/* The parts of bench/throughput shared by its two files: the clocks and
 * counters a writer reads around each call (throughput_report.c), the
 * writer's record of its calls (filled by throughput.c's writer threads),
 * and the JSON report of a run through eventlog-socket, printed by the main
 * thread once every writer has been joined. */
#ifndef BENCH_THROUGHPUT_H
#define BENCH_THROUGHPUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eventlog_socket.h"

/* Seconds on the monotonic clock; the calling thread's CPU time; the
 * whole process's CPU time. */
double tp_now(void);
double tp_cpu_now(void);
double tp_process_cpu_now(void);
/* Page faults and context switches of the calling thread so far. */
long tp_faults_now(void);
void tp_switches_now(long *vol, long *invol);

/* Print "p50/p99/max" of latencies (seconds) in microseconds, as JSON;
 * sorts `v`. */
void tp_print_dist(const char *name, double *v, size_t n);

struct writer {
    pthread_t thread;
    size_t chunks;
    int clients;                /* for pacing by the window; 0: not paced by it */
    double period;              /* seconds between this writer's calls; 0: not paced */
    double phase;               /* offset of its first call */
    bool reference;             /* also time a plain copy before each call */
    double *lat;                /* seconds per writeEventLog call */
    uint8_t *ref;               /* the reference copy's destination */
    double *copy;               /* seconds per reference memcpy */
    double *lat_cpu, *copy_cpu; /* the same in thread CPU time */
    long *faults;               /* page faults taken inside each call */
    /* Context switches inside each call and inside each reference copy:
     * voluntary (blocked), involuntary (preempted). */
    long *vol, *invol, *copy_vol, *copy_invol;
    bool *dropping; /* whether chunks had been dropped before each call */
    uint64_t sent;  /* bytes sent per client, at the last look */
    double sent_at; /* when that was */
    double rate;    /* sending rate seen while waiting, bytes/s */
};

/* A finished run through eventlog-socket ("socket", "cost", "stalled"). */
struct socket_run {
    int nclients, nwriters;
    bool stall, reference;
    uint64_t window;      /* bytes */
    double rate_mb_per_s; /* stalled mode: 0 floods */
    const struct writer *ws;
    size_t calls;                    /* writeEventLog calls of all writers */
    unsigned long long bytes;        /* received by all clients */
    double start, written;           /* first call; all writers done */
    double last;                     /* the last byte a client read */
    double cpu;                      /* process CPU seconds over the run */
    struct eventlog_socket_stats st; /* the library's counters at the end */
};

/* Print the run as one JSON object. */
void tp_report_socket(const struct socket_run *r);

#endif
