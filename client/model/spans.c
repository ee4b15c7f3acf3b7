/* SPDX-License-Identifier: BSD-3-Clause */
/* Spans in the model (model.h, "Spans"): the matcher (client/spans/spans.h)
 * fed the scheduler's and the program's messages, each completed span
 * counted into its label's histogram. Bounded: ES_MODEL_SPAN_LABELS labels
 * and `other`, whatever the program posts. */
#include "impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double es_model_span_bounds[ES_MODEL_SPAN_BUCKETS - 1] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60};

static struct es_model_span_label *label_of(struct es_model *m, const char *label) {
    struct es_model_spans *sp = &m->spans;
    if (sp->labels == NULL) {
        sp->labels = calloc(ES_MODEL_SPAN_LABELS + 1, sizeof *sp->labels);
        if (sp->labels == NULL) {
            m->oom = true;
            return NULL;
        }
        sp->other = &sp->labels[ES_MODEL_SPAN_LABELS];
        strcpy(sp->other->label, "other");
    }
    for (size_t i = 0; i < sp->n; i++)
        if (strcmp(sp->labels[i].label, label) == 0)
            return &sp->labels[i];
    if (sp->n == ES_MODEL_SPAN_LABELS)
        return sp->other;
    struct es_model_span_label *l = &sp->labels[sp->n++];
    snprintf(l->label, sizeof l->label, "%s", label);
    return l;
}

/* The fine bucket of `ns` (model.h). */
static unsigned fine_of(uint64_t ns) {
    if (ns < 64)
        return (unsigned)ns;
    unsigned e = 63 - (unsigned)__builtin_clzll(ns); /* 2^e <= ns */
    if (e > 47)
        return ES_MODEL_SPAN_FINE - 1;
    return 64 + (e - 6) * 64 + (unsigned)((ns >> (e - 6)) & 63);
}

/* The middle of fine bucket `b`, in ns. */
static double fine_middle(unsigned b) {
    if (b < 64)
        return b;
    unsigned e = (b - 64) / 64 + 6, sub = (b - 64) % 64;
    return ((double)(64 + sub) + 0.5) * (double)(1ull << (e - 6));
}

double es_model_span_quantile(const struct es_model_span_label *l, double q) {
    if (l->fine == NULL || l->count == 0)
        return -1;
    uint64_t rank = (uint64_t)(q * (double)l->count + 0.999999), seen = 0;
    if (rank == 0)
        rank = 1;
    for (unsigned b = 0; b < ES_MODEL_SPAN_FINE; b++) {
        seen += l->fine[b];
        if (seen >= rank) {
            double mid = fine_middle(b);
            return (mid < (double)l->max_ns ? mid : (double)l->max_ns) / 1e9;
        }
    }
    return (double)l->max_ns / 1e9;
}

bool es_model_span_bins(const struct es_model_span_label *l, unsigned n, double *lo_s, double *hi_s,
                        uint64_t *counts) {
    memset(counts, 0, n * sizeof *counts);
    if (l->fine == NULL || l->count == 0 || n == 0)
        return false;
    unsigned first = ES_MODEL_SPAN_FINE, last = 0;
    for (unsigned b = 0; b < ES_MODEL_SPAN_FINE; b++)
        if (l->fine[b] > 0) {
            first = b < first ? b : first;
            last = b;
        }
    double lo = fine_middle(first), hi = fine_middle(last);
    lo = lo < 1 ? 1 : lo;
    hi = hi < lo ? lo : hi;
    double span = log(hi / lo);
    for (unsigned b = first; b <= last; b++) {
        if (l->fine[b] == 0)
            continue;
        double mid = fine_middle(b) < lo ? lo : fine_middle(b);
        unsigned k = span > 0 ? (unsigned)(log(mid / lo) / span * n) : 0;
        counts[k < n ? k : n - 1] += l->fine[b];
    }
    *lo_s = lo / 1e9;
    *hi_s = hi / 1e9;
    return true;
}

const struct es_model_span_label *es_model_span_label_at(const struct es_model *m, size_t i) {
    const struct es_model_spans *sp = &m->spans;
    if (i < sp->n)
        return &sp->labels[i];
    if (i == sp->n && sp->other != NULL && sp->other->count > 0)
        return sp->other;
    return NULL;
}

/* Keep `s` among the latest spans (the page's timeline). */
static void recent(struct es_model *m, const struct es_model_span_label *l,
                   const struct es_span *s) {
    struct es_model_spans *sp = &m->spans;
    if (m->figures_only)
        return;
    if (sp->recent == NULL &&
        (sp->recent = calloc(ES_MODEL_SPAN_RECENT, sizeof *sp->recent)) == NULL) {
        m->oom = true;
        return;
    }
    sp->recent[sp->recent_next] = (struct es_model_span_recent){
        .start = s->start,
        .end = s->end,
        .label = (uint16_t)(l - sp->labels),
        .cap = (int16_t)(s->cap >= 0 && s->cap < INT16_MAX ? s->cap : -1),
        .failed = s->failed};
    sp->recent_next = (sp->recent_next + 1) % ES_MODEL_SPAN_RECENT;
    if (sp->recent_n < ES_MODEL_SPAN_RECENT)
        sp->recent_n++;
}

static void span_done(const struct es_span *s, void *ctx) {
    struct es_model *m = ctx;
    struct es_model_span_label *l = label_of(m, s->label);
    if (l == NULL)
        return;
    uint64_t ns = s->end - s->start;
    if (ns > l->max_ns)
        l->max_ns = ns;
    if (l->fine == NULL && !m->figures_only)
        l->fine = calloc(ES_MODEL_SPAN_FINE, sizeof *l->fine);
    if (l->fine != NULL && l->fine[fine_of(ns)] < UINT32_MAX)
        l->fine[fine_of(ns)]++;
    double d = (double)ns / 1e9;
    unsigned b = 0;
    while (b < ES_MODEL_SPAN_BUCKETS - 1 && d > es_model_span_bounds[b])
        b++;
    l->buckets[b]++;
    l->count++;
    l->failed += s->failed;
    l->sum_s += d;
    recent(m, l, s);
}

void es_model_spans_init(struct es_model *m) {
    m->spans.match = malloc(sizeof *m->spans.match);
    if (m->spans.match != NULL)
        es_spans_init(m->spans.match, span_done, m);
}

void es_model_spans_event(struct es_model *m, const struct es_event *ev, int cap) {
    if (m->spans.match != NULL)
        es_spans_event(m->spans.match, ev, cap);
}

void es_model_spans_free(struct es_model *m) {
    if (m->spans.match != NULL)
        es_spans_destroy(m->spans.match);
    free(m->spans.match);
    for (size_t i = 0; m->spans.labels && i <= ES_MODEL_SPAN_LABELS; i++)
        free(m->spans.labels[i].fine);
    free(m->spans.labels);
    free(m->spans.recent);
    memset(&m->spans, 0, sizeof m->spans);
}
