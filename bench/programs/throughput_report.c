/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/throughput's clocks and counters, and its JSON report of a run
 * through eventlog-socket (throughput.h). */
#define _GNU_SOURCE
#include "throughput.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double tp_now(void) {
    return clock_s(CLOCK_MONOTONIC);
}

/* What a call costs the thread itself, page faults included, without the
 * time it spent preempted. */
double tp_cpu_now(void) {
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* Every thread's, the library's, the clients' and the kernel's work on
 * their behalf. */
double tp_process_cpu_now(void) {
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* A slow call that took no page fault was preempted or slowed by the
 * machine, not by touching memory. */
long tp_faults_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

/* Voluntary switches (it blocked: a lock, a futex) and involuntary ones
 * (the scheduler took the core away). A call whose wall time is far above
 * its CPU time took one. */
void tp_switches_now(long *vol, long *invol) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *vol = ru.ru_nvcsw;
    *invol = ru.ru_nivcsw;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void tp_print_dist(const char *name, double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp);
    printf("\"%s\": {\"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}", name, v[n / 2] * 1e6,
           v[n * 99 / 100] * 1e6, v[n - 1] * 1e6);
}

/* Mode, rate or throughput, and the library's own account of its CPU. */
static void report_totals(const struct socket_run *r) {
    const struct eventlog_socket_stats *st = &r->st;
    printf("{\"mode\": \"%s\", \"clients\": %d, \"writers\": %d, \"window_mib\": %llu, "
           "\"bytes\": %llu, ",
           r->stall       ? "stalled"
           : r->reference ? "cost"
                          : "socket",
           r->nclients, r->nwriters, (unsigned long long)(r->window >> 20), r->bytes);
    double per_client = (double)r->bytes / r->nclients;
    if (r->stall)
        printf("\"rate_mb_per_s\": %.0f, ", r->rate_mb_per_s);
    else
        printf("\"seconds\": %.4f, \"mib_per_s\": %.1f, \"cpu_s_per_gib\": %.4f, ",
               r->last - r->start, per_client / (1 << 20) / (r->last - r->start),
               r->cpu / (per_client / (1 << 30)));
    printf("\"write_seconds\": %.4f, \"chunks_dropped\": %llu, \"bytes_held_peak\": %llu, ",
           r->written - r->start, (unsigned long long)st->chunks_dropped,
           (unsigned long long)st->bytes_held_peak);
    /* The library's own account of its CPU time (eventlog_socket_stats),
     * per GiB the program wrote: writers' copies, walker, loop thread. */
    printf("\"library_cpu_s_per_gib\": %.4f, \"library_cpu_s\": {\"writer\": %.4f, "
           "\"walker\": %.4f, \"loop\": %.4f}, ",
           (double)(st->cpu_ns_writer + st->cpu_ns_walker + st->cpu_ns_loop) / 1e9 /
               ((double)st->bytes_received / (1 << 30)),
           (double)st->cpu_ns_writer / 1e9, (double)st->cpu_ns_walker / 1e9,
           (double)st->cpu_ns_loop / 1e9);
}

/* The slowest calls after each writer's first, the calls that took page
 * faults, and the calls that blocked or were preempted. */
static void report_calls(const struct socket_run *r) {
    /* A writer's first call copies into memory never touched before, and
     * pays for faulting in its pages (once per process): reported apart. */
    double later = 0, later_cpu = 0, unfaulted = 0;
    size_t faulting = 0, faulting_dropping = 0;
    size_t blocked = 0, preempted = 0, copy_blocked = 0, copy_preempted = 0;
    long faults = 0;
    for (int i = 0; i < r->nwriters; i++) {
        const struct writer *w = &r->ws[i];
        for (size_t j = 0; j < w->chunks; j++) {
            if (j > 0) {
                later = w->lat[j] > later ? w->lat[j] : later;
                later_cpu = w->lat_cpu[j] > later_cpu ? w->lat_cpu[j] : later_cpu;
            }
            /* Which calls took page faults (a buffer not ready in the
             * pool), and the slowest of those that took none. */
            faulting += w->faults[j] > 0;
            faulting_dropping += w->faults[j] > 0 && w->dropping[j];
            faults += w->faults[j];
            if (w->faults[j] == 0 && w->lat[j] > unfaulted)
                unfaulted = w->lat[j];
            /* Calls that blocked or were preempted, against the reference
             * copies (whose interval also holds a stats call): where
             * wall-time tails come from on a loaded machine (BENCHMARKS.md,
             * section 3). */
            blocked += w->vol[j] > 0;
            preempted += w->invol[j] > 0;
            copy_blocked += w->copy_vol[j] > 0;
            copy_preempted += w->copy_invol[j] > 0;
        }
    }
    printf("\"write_max_after_first_us\": %.1f, \"write_cpu_max_after_first_us\": %.1f, ",
           later * 1e6, later_cpu * 1e6);
    printf("\"write_calls_faulting\": %zu, \"write_calls_faulting_once_dropping\": %zu, "
           "\"write_faults\": %ld, \"write_max_without_faults_us\": %.1f, ",
           faulting, faulting_dropping, faults, unfaulted * 1e6);
    printf("\"write_calls_blocked\": %zu, \"write_calls_preempted\": %zu, ", blocked, preempted);
    if (r->reference)
        printf("\"copy_calls_blocked\": %zu, \"copy_calls_preempted\": %zu, ", copy_blocked,
               copy_preempted);
}

/* The distributions of all writers' calls and reference copies. */
static void report_dists(const struct socket_run *r) {
    size_t calls = r->calls;
    double *all = calloc(calls, sizeof(double)), *copies = calloc(calls, sizeof(double));
    double *all_cpu = calloc(calls, sizeof(double)), *copies_cpu = calloc(calls, sizeof(double));
    for (int i = 0, k = 0; i < r->nwriters; i++)
        for (size_t j = 0; j < r->ws[i].chunks; j++, k++) {
            all[k] = r->ws[i].lat[j];
            copies[k] = r->ws[i].copy[j];
            all_cpu[k] = r->ws[i].lat_cpu[j];
            copies_cpu[k] = r->ws[i].copy_cpu[j];
        }
    tp_print_dist("write", all, calls);
    printf(", ");
    tp_print_dist("write_cpu", all_cpu, calls);
    if (r->reference) {
        printf(", ");
        tp_print_dist("copy", copies, calls);
        printf(", ");
        tp_print_dist("copy_cpu", copies_cpu, calls);
    }
    free(all);
    free(copies);
    free(all_cpu);
    free(copies_cpu);
}

void tp_report_socket(const struct socket_run *r) {
    report_totals(r);
    report_calls(r);
    report_dists(r);
    printf("}\n");
}
