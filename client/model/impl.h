/* SPDX-License-Identifier: BSD-3-Clause */
/* Inside the model (client/model/model.h is its face): what its files share.
 * core.c feeds every event to the handler its type has in one table; each
 * family of events has a file that owns its part of struct es_model, its
 * handlers and its queries:
 *
 *   core.c        the table, blocks (which capability an event is on),
 *                 stream time, the once-a-second work, lifecycle
 *   program.c     who the program is: RTS_IDENTIFIER, PROGRAM_ARGS,
 *                 OSPROCESS_PID, WALL_CLOCK_TIME
 *   gc.c          heap figures and GC: HEAP_*, GC_*, pause histograms
 *   caps.c        capabilities: CAP_CREATE, and RUN_/STOP_THREAD from
 *                 threads.c
 *   census.c      the heap profile: HEAP_PROF_*, census labels
 *   ipe.c         IPE (the info tables -hi's labels name), the profile
 *                 modes' names
 *   label.c       census labels as the command keeps and writes them
 *   notes.c       markers, messages and the library's notices
 *   sparks.c      sparks: SPARK_COUNTERS, the spark events (-lf)
 *   threads.c     threads: *_THREAD (RUN and STOP passed on to caps.c),
 *                 THREAD_RUNNABLE, MIGRATE_THREAD, THREAD_WAKEUP,
 *                 THREAD_LABEL
 *   thread_table.c  the threads followed one by one, which threads.c fills
 *   history.c     the per-second series and the whole run downsampled
 *                 (struct es_model_history), which the families fill
 *                 through client/model/history.h
 *
 * A new family gets a file, its fields in struct es_model, its handlers
 * below and its entries in core.c's table.
 *
 * Pure like the model; run by the thread that owns the model. */
#ifndef ES_MODEL_IMPL_H
#define ES_MODEL_IMPL_H

#include "model.h"

#include "format/es_payload.h"
#include "format/es_utf8.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NS_PER_S 1000000000ull

/* Text for display: control characters become spaces. */
static inline void clean_text(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

/* ---- The event as a handler gets it. */

struct es_model_ev {
    struct es_payload r;      /* the payload, not yet read (format/es_payload.h) */
    uint64_t t;               /* the event's time */
    struct es_model_cap *cap; /* its block's capability (global: 0); NULL past the table */
};

typedef void es_model_handler(struct es_model *m, struct es_model_ev *e);

/* program.c */
es_model_handler es_model_on_rts_identifier, es_model_on_program_args, es_model_on_pid,
    es_model_on_wall_clock, es_model_on_capset_create;

/* gc.c */
es_model_handler es_model_on_gc_start, es_model_on_gc_end, es_model_on_gc_stats,
    es_model_on_heap_info, es_model_on_heap_size, es_model_on_heap_live, es_model_on_heap_allocated;

/* caps.c */
es_model_handler es_model_on_cap_create;
/* RUN_THREAD and STOP_THREAD on capability `cp` (NULL: none known) at `t`,
 * from client/model/threads.c's handlers once the event has been read. */
void es_model_cap_run(struct es_model_cap *cp, uint64_t t);
void es_model_cap_stop(struct es_model *m, struct es_model_cap *cp, uint64_t t);
/* Capability `c` exists (a block or CAP_CREATE named it). */
void es_model_see_cap(struct es_model *m, unsigned c);
/* Once a second of stream time: every capability's busy time so far. */
void es_model_snapshot(struct es_model *m);
/* The end of the stream: runs still open end at the last event. */
void es_model_caps_end(struct es_model *m);
/* Scheduler events (`runs`) or GC events (`gcs`) were switched on or off
 * at `t` (an event classes notice): a run still open ends there, a GC
 * still open is forgotten, so that an end the RTS did not post is not
 * taken for a long run or a long pause. */
void es_model_caps_classes_switched(struct es_model *m, uint64_t t, bool runs, bool gcs);

/* census.c */
es_model_handler es_model_on_heap_prof_begin, es_model_on_cost_centre, es_model_on_sample_begin,
    es_model_on_sample_string, es_model_on_sample_cost_centre, es_model_on_sample_end;
#define ES_MODEL_OTHER_LABEL "(other labels)"
/* label_len of a label that is not the text sent (es_model_label_clean
 * renamed it, or it is the model's own "(other labels)"). */
#define ES_MODEL_LABEL_NOT_SENT UINT32_MAX
/* The index of label `s`, added if new; the "(other labels)" index when
 * the table is full; UINT32_MAX when memory ran out. */
uint32_t es_model_intern(struct es_model *m, const char *s);
void es_model_census_free(struct es_model *m);

/* costs.c */
es_model_handler es_model_on_prof_sample;
/* HEAP_PROF_COST_CENTRE, as census.c reads it: the time profile's name of
 * cost centre `id` (`builtin`: one of the RTS's own, named by its label). */
void es_model_costs_define(struct es_model *m, uint32_t id, const uint8_t *label, size_t llen,
                           const uint8_t *module, size_t mlen, bool builtin);
void es_model_costs_free(struct es_model *m);
/* Spans (spans.c): the matcher made, fed a scheduler event or a message
 * of capability `cap` (-1: none), freed. */
void es_model_spans_init(struct es_model *m);
void es_model_spans_event(struct es_model *m, const struct es_event *ev, int cap);
void es_model_spans_free(struct es_model *m);

/* ipe.c */
es_model_handler es_model_on_ipe;
void es_model_ipe_free(struct es_model *m);

/* notes.c */
es_model_handler es_model_on_user_marker, es_model_on_user_msg;

/* sparks.c */
es_model_handler es_model_on_spark_counters, es_model_on_spark_create, es_model_on_spark_dud,
    es_model_on_spark_overflow, es_model_on_spark_run, es_model_on_spark_steal,
    es_model_on_spark_fizzle, es_model_on_spark_gc;
void es_model_sparks_free(struct es_model *m);

/* thread_table.c: the threads followed one by one, which
 * threads.c fills. */
#define ES_MODEL_THREAD_SLOTS (2 * ES_MODEL_THREADS_KEPT) /* hash slots: index + 1, 0 empty */
#define ES_MODEL_THREAD_NONE  UINT32_MAX
struct es_model_thread_table {
    struct es_model_thread t[ES_MODEL_THREADS_KEPT];
    uint32_t slot[ES_MODEL_THREAD_SLOTS];
    uint32_t free_idx[ES_MODEL_THREADS_KEPT]; /* a stack of unused records */
    uint32_t nfree;
    /* Finished records: first those that finished less than SETTLE_NS ago
     * (a ring, in the order their ends came), then a min-heap of the
     * others (unlabelled first, then by running time, then by finishing
     * time), and each record's place in the heap (ES_MODEL_THREAD_NONE: not in it). */
    uint32_t settling[ES_MODEL_THREADS_KEPT], settling_head, settling_n;
    uint32_t heap[ES_MODEL_THREADS_KEPT], heap_n;
    uint32_t heap_pos[ES_MODEL_THREADS_KEPT];
    /* Each capability's run in progress: which thread, since when (0: none). */
    struct {
        uint32_t id;
        uint64_t since;
    } run_on[ES_MODEL_MAX_CAPS];
    /* The ids of threads no longer followed, by their low bits (thread ids
     * count up, so these are the latest): a late event of one of them
     * (from a capability whose block came after its end) adds no thread. */
    uint32_t gone[ES_MODEL_THREADS_KEPT];
    /* Live threads over the run: the change of the count in each bucket of
     * `width` ns (doubled, pairs merged, when the run outgrows them), from
     * the time of the first change on. */
    uint64_t width, first_change;
    unsigned nb;
    int64_t delta[ES_MODEL_TL_BUCKETS];
};

/* The table, made on first use; NULL when memory ran out. */
struct es_model_thread_table *es_model_thread_table(struct es_model *m);
/* The record of thread `id`, added if new (`created`: its CREATE_THREAD
 * time, 0 when first seen otherwise); NULL when it is not followed. */
struct es_model_thread *es_model_thread_get(struct es_model *m, uint32_t id, uint64_t created);
/* The record of thread `id`, NULL when it is not followed. */
const struct es_model_thread *es_model_thread_find(const struct es_model *m, uint32_t id);
/* Followed thread `th` finished: once settled it may make room. */
void es_model_thread_ended(struct es_model *m, const struct es_model_thread *th);
/* Its running time or label changed: its place among the finished. */
void es_model_thread_rekey(struct es_model *m, const struct es_model_thread *th);
/* Threads that began before the stream. */
uint64_t es_model_threads_before(const struct es_model *m);
/* Threads followed that began while scheduler events were off: seen, never
 * created, younger than every thread seen before they were first switched
 * off; 0 when they never were. Such a thread is not one begun before the
 * stream. */
uint64_t es_model_threads_in_gaps(const struct es_model *m);
bool es_model_thread_in_gap(const struct es_model *m, uint32_t id);
/* Scheduler events were switched off (an event classes notice): threads
 * first seen from now on with higher ids than any so far began in a gap. */
void es_model_threads_sched_off(struct es_model *m);

/* threads.c */
es_model_handler es_model_on_thread_create, es_model_on_thread_run, es_model_on_thread_stop,
    es_model_on_thread_runnable, es_model_on_thread_moved, es_model_on_thread_label;
/* The end of the stream: runs still open end at the last event. */
void es_model_threads_end(struct es_model *m);
void es_model_threads_free(struct es_model *m);

static inline double max_d(double a, double b) {
    return a > b ? a : b;
}

#endif
