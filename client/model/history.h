/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's history (client/model/history.c): what the families
 * (client/model/impl.h) record for later, through these functions only:
 * the per-second series, the timeline of the whole run in bounded memory,
 * and the points of pauses, censuses, markers and drop notices. The
 * queries that read it are in client/model/model.h.
 *
 * Pure like the model; run by the thread that owns the model. */
#ifndef ES_MODEL_HISTORY_H
#define ES_MODEL_HISTORY_H

#include "model.h"

#include <stdbool.h>
#include <stdint.h>

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
    if (t >= h->at_lo && t < h->at_hi)
        return &h->tl[h->at_i];
    while (t / h->width >= ES_MODEL_TL_BUCKETS)
        es_model_tl_merge(h);
    unsigned i = (unsigned)(t / h->width);
    while (h->n <= i)
        h->tl[h->n++] = ES_MODEL_EMPTY_BUCKET;
    h->at_i = i;
    h->at_lo = i * h->width;
    h->at_hi = h->at_lo + h->width;
    return &h->tl[i];
}

/* Capability `c` ran Haskell code (kind 0) or collected garbage (kind 1)
 * from `a` to `b`: spread over the timeline buckets it covers. Inline, for
 * a model without history (es_model_figures_only): every run and GC ends
 * here. */
void es_model_tl_spread(struct es_model *m, unsigned c, int kind, uint64_t a, uint64_t b);
static inline void es_model_tl_interval(struct es_model *m, unsigned c, int kind, uint64_t a,
                                        uint64_t b) {
    if (!m->figures_only)
        es_model_tl_spread(m, c, kind, a, b);
}
/* A GC pause for the history. */
void es_model_hist_pause(struct es_model *m, uint64_t start, uint64_t dur, bool major);
/* Whether the census just completed is to be a history point (every
 * census is counted; once the list is full, only every second one is kept,
 * then every fourth...). When it is, census.c builds the point and
 * hands it over with es_model_hist_census. */
bool es_model_hist_census_due(struct es_model *m);
void es_model_hist_census(struct es_model *m, const struct es_model_census_pt *pt);
/* A marker and a drop notice for the history's rings. */
void es_model_hist_mark(struct es_model *m, uint64_t t, const char *text);
void es_model_hist_drop(struct es_model *m, uint64_t t, uint64_t chunks, double mib);
void es_model_history_init(struct es_model_history *h);
void es_model_history_free(struct es_model_history *h);

#endif
