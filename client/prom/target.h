/* SPDX-License-Identifier: BSD-3-Clause */
/* One program that `eventlog-socket metrics` follows (client/prom/metrics.c):
 * its address (a SOURCE, or a path a glob matched), its connection, opened
 * again after every end (a restarted program, a new pid, is a new run),
 * and its model, made when a header arrives (a path that sends none costs
 * no model) and freed once its run is no longer shown; the run before a
 * restart stays exported for --linger beside the new one (at most two
 * models per target). What it exports is
 * written by es_promtarget_export as client/prom/text.h's targets.
 *
 * The exporter's fields (`node`, `from_glob`, `matched`, `dead_ticks`,
 * `trial`, `trial_ms`) are client/prom/metrics.c's, which links targets
 * into its queues; the rest is this module's. Thread ownership: the loop
 * thread. */
#ifndef ES_PROMTARGET_H
#define ES_PROMTARGET_H

#include "base/es_queue.h"
#include "source/conn.h"
#include "model/model.h"
#include "scan.h"
#include "text.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* What every target shares: the exporter's loop and connection options,
 * and how long an ended run stays exported. A glob's path is first
 * probed: one connection with `probe_opt` (no retrying, a short deadline
 * for the header), whose end, with or without a header, is told to
 * on_probed(probed_ctx) at once, so that the exporter gives its place to
 * the next path. */
struct es_promtarget_env {
    uv_loop_t *loop;
    const struct es_conn_options *opt;
    const struct es_conn_options *probe_opt;
    void (*on_probed)(void *ctx);
    void *probed_ctx;
    double linger_s;
    bool want[ES_MAX_EVENT_TYPES]; /* the types a figures-only model reads one by one */
};

/* Fill env->want (the rest is the exporter's to set). */
void es_promtarget_env_init(struct es_promtarget_env *env);

struct es_promtarget {
    /* The exporter's (client/prom/metrics.c). */
    struct es_queue_node node;      /* in its targets, or its dead awaiting their free */
    bool from_glob, matched;        /* matched: found by the latest scan */
    unsigned dead_ticks;            /* removed: ticks until it is freed (0: alive) */
    struct es_promscan_cand *trial; /* a glob's path being tried (client/prom/scan.h), or NULL */
    uint64_t trial_ms;              /* since when */
    /* This module's. */
    const struct es_promtarget_env *env;
    char source[300];
    char label[300]; /* the source label: the address as the command writes it
                      * (unix:/path, tcp:HOST:PORT), however it was given */
    /* A connection is opened again after each end; the two alternate,
     * since a closed one is released by the loop later. */
    struct es_conn conns[2];
    unsigned cur;
    bool conn_open;
    bool probing; /* the first connection to a glob's path, not over yet */
    uv_timer_t reconnect;
    struct es_model *model; /* NULL until a header arrives, and once its run is no longer shown */
    uint64_t no_window[2];  /* the reader's window while there is no model */
    bool run;               /* the model holds a run (a header arrived) */
    bool connected;         /* and its connection is open */
    bool exited;            /* the run ended with its end marker */
    bool ignoring;          /* this session reached the exited run's program again */
    int run_pid;            /* the run's server process (SO_PEERCRED), 0: unknown */
    uint64_t bytes;         /* received in the run */
    uint64_t end_ms;        /* when the run ended */
    char peer_program[256];
    int heap_mode_proc; /* GHC 9.0: es_heapmode_of_pid of the server (-1: unknown) */
    /* The run before this one, kept for --linger after a restart so that
     * its final figures are still scraped: at most one. prev == NULL: none. */
    struct es_model *prev;
    int prev_pid;
    uint64_t prev_bytes, prev_end_ms;
    char prev_program[256];
    int prev_heap_mode_proc;
    bool said_error;
    char why[160]; /* why the latest attempt found no eventlog */
};

/* A target for `source`, connecting now (probing it, `from_glob`). NULL
 * when out of memory (said on stderr). */
struct es_promtarget *es_promtarget_new(const struct es_promtarget_env *env, const char *source,
                                        bool from_glob);
/* Whether its current run is exported: connected, or ended less than
 * --linger ago. */
bool es_promtarget_shown(const struct es_promtarget *t);
/* Its exposition targets (the lingering previous run, then the current
 * one) into out[0..1]; returns how many (1 or 2). */
size_t es_promtarget_export(struct es_promtarget *t, struct es_promtext_target out[2]);
/* Free the models of runs no longer shown (the lingering previous run's,
 * and an ended run's once its --linger passed). Returns whether any went. */
bool es_promtarget_tidy(struct es_promtarget *t);
/* Stop following it (its handles closing); es_promtarget_free once the
 * loop has closed them. */
void es_promtarget_stop(struct es_promtarget *t);
void es_promtarget_free(struct es_promtarget *t);

#endif
