/* SPDX-License-Identifier: BSD-3-Clause */
/* Spans in the model (model.h, "Spans"): the matcher (client/spans/spans.h)
 * fed the scheduler's and the program's messages, each completed span
 * counted into its label's histogram. Bounded: ES_MODEL_SPAN_LABELS labels
 * and `other`, whatever the program posts. */
#include "impl.h"

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

static void span_done(const struct es_span *s, void *ctx) {
    struct es_model *m = ctx;
    struct es_model_span_label *l = label_of(m, s->label);
    if (l == NULL)
        return;
    double d = (double)(s->end - s->start) / 1e9;
    unsigned b = 0;
    while (b < ES_MODEL_SPAN_BUCKETS - 1 && d > es_model_span_bounds[b])
        b++;
    l->buckets[b]++;
    l->count++;
    l->sum_s += d;
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
    free(m->spans.labels);
    memset(&m->spans, 0, sizeof m->spans);
}
