/* Inside the model (client/model.h is its face): what its files share.
 * model.c feeds every event to the handler its type has in one table; each
 * family of events has a file that owns its part of struct es_model, its
 * handlers and its queries:
 *
 *   model.c          the table, blocks (which capability an event is on),
 *                    stream time, the once-a-second work, lifecycle
 *   model_program.c  who the program is: RTS_IDENTIFIER, PROGRAM_ARGS,
 *                    OSPROCESS_PID, WALL_CLOCK_TIME
 *   model_gc.c       heap figures and GC: HEAP_*, GC_*, pause histograms
 *   model_caps.c     capabilities and threads: CAP_CREATE, *_THREAD
 *   model_census.c   the heap profile: HEAP_PROF_*, census labels
 *   model_notes.c    markers, messages and the library's notices
 *   model_sparks.c   spark counters: SPARK_COUNTERS
 *   model_history.c  the per-second series and the whole run downsampled
 *                    (struct es_model_history), which the families fill
 *
 * A new family gets a file, its fields in struct es_model, its handlers
 * below and its entries in model.c's table.
 *
 * Pure like the model; run by the thread that owns the model. */
#ifndef ES_MODEL_IMPL_H
#define ES_MODEL_IMPL_H

#include "model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NS_PER_S 1000000000ull

/* ---- Payload reading: every field is checked against the payload's
 * length, so a short or garbled event is ignored, never over-read. Inline:
 * every event is read with these. */

struct rd {
    const uint8_t *p;
    size_t left;
    bool bad;
};

/* A big-endian field of `n` bytes (0 and r->bad once the payload ends). */
static inline uint64_t rd_n(struct rd *r, int n) {
    if (r->bad || r->left < (size_t)n) {
        r->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | r->p[i];
    r->p += n;
    r->left -= (size_t)n;
    return v;
}

/* A NUL-terminated string (or the rest of the payload when the NUL is
 * missing), copied into `out` cut to fit. */
static inline void rd_str(struct rd *r, char *out, size_t size) {
    const uint8_t *nul = r->bad ? NULL : memchr(r->p, 0, r->left);
    size_t len = r->bad ? 0 : nul ? (size_t)(nul - r->p) : r->left;
    size_t k = len < size - 1 ? len : size - 1;
    if (k)
        memcpy(out, r->p, k);
    out[k] = '\0';
    if (!r->bad) {
        size_t used = nul ? len + 1 : len;
        r->p += used;
        r->left -= used;
    }
}

/* Text for display: control characters become spaces. */
static inline void clean_text(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

/* ---- The event as a handler gets it. */

struct es_model_ev {
    struct rd r;              /* the payload, not yet read */
    uint64_t t;               /* the event's time */
    struct es_model_cap *cap; /* its block's capability (global: 0); NULL past the table */
};

typedef void es_model_handler(struct es_model *m, struct es_model_ev *e);

/* model_program.c */
es_model_handler es_model_on_rts_identifier, es_model_on_program_args, es_model_on_pid,
    es_model_on_wall_clock;

/* model_gc.c */
es_model_handler es_model_on_gc_start, es_model_on_gc_end, es_model_on_gc_stats,
    es_model_on_heap_info, es_model_on_heap_size, es_model_on_heap_live, es_model_on_heap_allocated;

/* model_caps.c */
es_model_handler es_model_on_create_thread, es_model_on_run_thread, es_model_on_stop_thread,
    es_model_on_cap_create;
/* Capability `c` exists (a block or CAP_CREATE named it). */
void es_model_see_cap(struct es_model *m, unsigned c);
/* Once a second of stream time: every capability's busy time so far. */
void es_model_snapshot(struct es_model *m);
/* The end of the stream: runs still open end at the last event. */
void es_model_caps_end(struct es_model *m);
void es_model_caps_free(struct es_model *m);

/* model_census.c */
es_model_handler es_model_on_heap_prof_begin, es_model_on_cost_centre, es_model_on_sample_begin,
    es_model_on_sample_string, es_model_on_sample_cost_centre, es_model_on_sample_end,
    es_model_on_ipe;
#define ES_MODEL_OTHER_LABEL "(other labels)"
/* The index of label `s`, added if new; the "(other labels)" index when
 * the table is full; UINT32_MAX when memory ran out. */
uint32_t es_model_intern(struct es_model *m, const char *s);
void es_model_census_free(struct es_model *m);

/* model_notes.c */
es_model_handler es_model_on_user_marker, es_model_on_user_msg;

/* model_sparks.c */
es_model_handler es_model_on_spark_counters;

/* ---- model_history.c: what the families record for later. */

/* Put `v` at time `t` in a series: the second's value (add: added to
 * it). A value older than the series is dropped. */
void es_model_series_put(struct es_model_series *s, uint64_t t, double v, bool add);
/* Extend the series to second `sec`, new points carrying the last value
 * (carry) or 0. */
void es_model_series_extend(struct es_model_series *s, uint64_t sec, bool carry);

/* Halve the timeline: bucket pairs become one bucket twice as wide. */
void es_model_tl_merge(struct es_model_history *h);

/* A timeline bucket with nothing in it yet. */
#define ES_MODEL_EMPTY_BUCKET ((struct es_model_bucket){-1, -1, 0, 0, 0, 0})

/* The timeline bucket of time `t`, the timeline widened and extended as
 * needed. Inline: heap and GC events land here. */
static inline struct es_model_bucket *es_model_tl_at(struct es_model *m, uint64_t t) {
    struct es_model_history *h = &m->h;
    while (t / h->width >= ES_MODEL_TL_BUCKETS)
        es_model_tl_merge(h);
    unsigned i = (unsigned)(t / h->width);
    while (h->n <= i)
        h->tl[h->n++] = ES_MODEL_EMPTY_BUCKET;
    return &h->tl[i];
}

/* Capability `c` ran Haskell code (kind 0) or collected garbage (kind 1)
 * from `a` to `b`: spread over the timeline buckets it covers. */
void es_model_tl_interval(struct es_model *m, unsigned c, int kind, uint64_t a, uint64_t b);
/* A GC pause for the history. */
void es_model_hist_pause(struct es_model *m, uint64_t start, uint64_t dur, bool major);
/* The census just completed (m->cur) for the history. */
void es_model_hist_census(struct es_model *m);
/* A marker and a drop notice for the history's rings. */
void es_model_hist_mark(struct es_model *m, uint64_t t, const char *text);
void es_model_hist_drop(struct es_model *m, uint64_t t, uint64_t chunks, double mib);
void es_model_history_init(struct es_model_history *h);
void es_model_history_free(struct es_model_history *h);

static inline double max_d(double a, double b) {
    return a > b ? a : b;
}

#endif
