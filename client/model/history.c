/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's history (client/model/impl.h), which the families fill: the
 * per-second series of the last ES_MODEL_SERIES seconds, and the whole
 * run in bounded memory (struct es_model_history): the timeline's
 * buckets, the time each capability ran and collected in each, GC pauses,
 * censuses, markers and drop notices. */
#include "impl.h"
#include "history.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Series: a value per second of stream time. */

static double *series_slot(struct es_model_series *s, unsigned i) {
    return &s->v[(s->head + i) % ES_MODEL_SERIES];
}

double es_model_series_at(const struct es_model_series *s, unsigned i) {
    return s->v[(s->head + i) % ES_MODEL_SERIES];
}

void es_model_series_extend(struct es_model_series *s, uint64_t sec, bool carry) {
    if (s->n == 0)
        return;
    uint64_t last = s->first + s->n - 1;
    if (sec <= last)
        return;
    double fill = carry ? *series_slot(s, s->n - 1) : 0;
    if (sec - last >= ES_MODEL_SERIES) {
        /* A gap longer than the whole history: start over. */
        s->head = 0;
        s->n = ES_MODEL_SERIES;
        s->first = sec - ES_MODEL_SERIES + 1;
        for (unsigned i = 0; i < ES_MODEL_SERIES; i++)
            s->v[i] = fill;
        return;
    }
    for (uint64_t t = last + 1; t <= sec; t++) {
        if (s->n < ES_MODEL_SERIES) {
            s->n++;
        } else {
            s->head = (s->head + 1) % ES_MODEL_SERIES;
            s->first++;
        }
        *series_slot(s, s->n - 1) = fill;
    }
}

void es_model_series_put(struct es_model_series *s, uint64_t t, double v, bool add) {
    uint64_t sec = t / NS_PER_S;
    if (s->n == 0) {
        s->first = sec;
        s->n = 1;
        s->head = 0;
        s->v[0] = v;
        return;
    }
    es_model_series_extend(s, sec, !add);
    if (sec < s->first)
        return;
    double *slot = series_slot(s, (unsigned)(sec - s->first));
    *slot = add ? *slot + v : v;
}

/* ---- The timeline. */

void es_model_tl_merge(struct es_model_history *h) {
    unsigned half = (h->n + 1) / 2;
    for (unsigned i = 0; i < half; i++) {
        struct es_model_bucket a = h->tl[2 * i];
        struct es_model_bucket b = 2 * i + 1 < h->n ? h->tl[2 * i + 1] : ES_MODEL_EMPTY_BUCKET;
        h->tl[i] = (struct es_model_bucket){max_d(a.heap_size, b.heap_size),
                                            max_d(a.heap_live, b.heap_live),
                                            a.allocated + b.allocated,
                                            a.gc_ns + b.gc_ns,
                                            a.minor + b.minor,
                                            a.major + b.major};
    }
    for (unsigned i = half; i < ES_MODEL_TL_BUCKETS; i++)
        h->tl[i] = ES_MODEL_EMPTY_BUCKET;
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++) {
        uint64_t *v = h->cap_ns[c];
        if (v == NULL)
            continue;
        for (unsigned i = 0; i < ES_MODEL_TL_BUCKETS / 2; i++) {
            v[2 * i] = v[4 * i] + v[4 * i + 2];
            v[2 * i + 1] = v[4 * i + 1] + v[4 * i + 3];
        }
        memset(v + ES_MODEL_TL_BUCKETS, 0, ES_MODEL_TL_BUCKETS * sizeof *v);
    }
    h->n = half;
    h->width *= 2;
    h->at_hi = 0; /* es_model_tl_at's bucket moved */
    h->generation++;
}

void es_model_tl_spread(struct es_model *m, unsigned c, int kind, uint64_t a, uint64_t b) {
    struct es_model_history *h = &m->h;
    if (b <= a || c >= ES_MODEL_MAX_CAPS)
        return;
    es_model_tl_at(m, b - 1);
    if (h->cap_ns[c] == NULL) {
        h->cap_ns[c] = calloc(2 * ES_MODEL_TL_BUCKETS, sizeof *h->cap_ns[c]);
        if (h->cap_ns[c] == NULL) {
            m->oom = true;
            return;
        }
    }
    uint64_t w = h->width;
    for (uint64_t i = a / w; i <= (b - 1) / w; i++) {
        uint64_t lo = a > i * w ? a : i * w, hi = b < (i + 1) * w ? b : (i + 1) * w;
        h->cap_ns[c][2 * i + (uint64_t)kind] += hi - lo;
    }
}

void es_model_extend_to_now(struct es_model *m) {
    if (m->events > 0)
        es_model_tl_at(m, m->now);
}

/* ---- Points. */

/* Once the list is full, each point stands for twice as many pauses as
 * before, the longest of them. */
void es_model_hist_pause(struct es_model *m, uint64_t start, uint64_t dur, bool major) {
    struct es_model_history *h = &m->h;
    if (m->figures_only)
        return;
    if (h->pauses == NULL) {
        assert(h->npauses == 0); /* allocated with the first pause */
        h->pauses = malloc(ES_MODEL_HIST_PAUSES * sizeof *h->pauses);
        if (h->pauses == NULL) {
            m->oom = true;
            return;
        }
    }
    if (h->pause_pending == 0 || dur > h->pending.dur)
        h->pending = (struct es_model_pause){start, dur, major};
    if (++h->pause_pending < h->pause_group)
        return;
    if (h->npauses == ES_MODEL_HIST_PAUSES) {
        for (size_t i = 0; i < ES_MODEL_HIST_PAUSES / 2; i++) {
            struct es_model_pause *a = &h->pauses[2 * i], *b = &h->pauses[2 * i + 1];
            h->pauses[i] = b->dur > a->dur ? *b : *a;
        }
        h->npauses = ES_MODEL_HIST_PAUSES / 2;
        h->pause_group *= 2;
        h->generation++;
    }
    h->pauses[h->npauses++] = h->pending;
    h->pause_pending = 0;
}

/* Once the list is full, every other census is dropped and only every
 * second one kept after. */
bool es_model_hist_census_due(struct es_model *m) {
    struct es_model_history *h = &m->h;
    if (m->figures_only)
        return false;
    if (h->censuses == NULL) {
        h->censuses = calloc(ES_MODEL_HIST_CENSUSES, sizeof *h->censuses);
        if (h->censuses == NULL) {
            m->oom = true;
            return false;
        }
    }
    return h->census_seen++ % h->census_stride == 0;
}

void es_model_hist_census(struct es_model *m, const struct es_model_census_pt *pt) {
    struct es_model_history *h = &m->h;
    assert(h->censuses != NULL);
    if (h->ncensuses == ES_MODEL_HIST_CENSUSES) {
        for (size_t i = 0; i < ES_MODEL_HIST_CENSUSES / 2; i++) {
            free(h->censuses[2 * i + 1].e);
            h->censuses[i] = h->censuses[2 * i];
        }
        memset(h->censuses + ES_MODEL_HIST_CENSUSES / 2, 0,
               ES_MODEL_HIST_CENSUSES / 2 * sizeof *h->censuses);
        h->ncensuses = ES_MODEL_HIST_CENSUSES / 2;
        h->census_stride *= 2;
        h->generation++;
    }
    h->censuses[h->ncensuses++] = *pt;
}

void es_model_hist_mark(struct es_model *m, uint64_t t, const char *text) {
    struct es_model_mark *h = &m->h.marks[m->h.marks_n++ % ES_MODEL_HIST_MARKS];
    h->time = t;
    snprintf(h->text, sizeof h->text, "%s", text);
}

void es_model_hist_drop(struct es_model *m, uint64_t t, uint64_t chunks, double mib) {
    m->h.drops[m->h.drops_n++ % ES_MODEL_HIST_DROPS] = (struct es_model_drop){t, chunks, mib};
}

size_t es_model_marks_kept(const struct es_model *m) {
    return m->h.marks_n < ES_MODEL_HIST_MARKS ? (size_t)m->h.marks_n : ES_MODEL_HIST_MARKS;
}

const struct es_model_mark *es_model_mark_at(const struct es_model *m, size_t i) {
    uint64_t first = m->h.marks_n - es_model_marks_kept(m);
    return &m->h.marks[(first + i) % ES_MODEL_HIST_MARKS];
}

size_t es_model_drops_kept(const struct es_model *m) {
    return m->h.drops_n < ES_MODEL_HIST_DROPS ? (size_t)m->h.drops_n : ES_MODEL_HIST_DROPS;
}

const struct es_model_drop *es_model_drop_at(const struct es_model *m, size_t i) {
    uint64_t first = m->h.drops_n - es_model_drops_kept(m);
    return &m->h.drops[(first + i) % ES_MODEL_HIST_DROPS];
}

/* ---- Lifecycle. */

void es_model_history_init(struct es_model_history *h) {
    h->width = ES_MODEL_TL_WIDTH0;
    h->pause_group = 1;
    h->census_stride = 1;
}

void es_model_history_free(struct es_model_history *h) {
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++)
        free(h->cap_ns[c]);
    free(h->pauses);
    for (size_t i = 0; i < h->ncensuses; i++)
        free(h->censuses[i].e);
    free(h->censuses);
}
