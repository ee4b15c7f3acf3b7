/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "sparks" (client/model/impl.h): SPARK_COUNTERS, which
 * each capability posts with its running totals (at some GCs and when the
 * RTS shuts its capabilities down, so the last ones are the totals that
 * `+RTS -s` prints; +RTS -l's default `p` class), and the spark events, one
 * per spark (+RTS -lf). The model keeps every capability's latest figures
 * (their sum is the program's) and its counters over time, in bounded
 * memory (ES_MODEL_SPARK_POINTS per capability). */
#include "impl.h"

#include <assert.h>
#include <stdlib.h>

/* The event's fields, in order; the pool size follows them. */
enum { F_CREATED, F_DUD, F_OVERFLOWED, F_CONVERTED, F_GCD, F_FIZZLED, F_POOL, F_N };

static void add_point(struct es_model *m, unsigned c, const struct es_model_spark_pt *pt) {
    if (m->spark_pts[c] == NULL) {
        m->spark_pts[c] = malloc(ES_MODEL_SPARK_POINTS * sizeof *m->spark_pts[c]);
        if (m->spark_pts[c] == NULL) {
            m->oom = true;
            return;
        }
    }
    struct es_model_spark_pt *p = m->spark_pts[c];
    unsigned n = m->spark_npts[c];
    if (n == ES_MODEL_SPARK_POINTS) {
        /* Keep the later point of each pair: the counters are running
         * totals, so rates between the points kept stay exact. */
        for (unsigned i = 0; i < n / 2; i++)
            p[i] = p[2 * i + 1];
        n /= 2;
        m->spark_generation++;
    }
    assert(n < ES_MODEL_SPARK_POINTS);
    p[n] = *pt;
    m->spark_npts[c] = n + 1;
}

void es_model_on_spark_counters(struct es_model *m, struct es_model_ev *e) {
    /* Seven u64 fields: one length check, then plain loads. */
    size_t n;
    const uint8_t *p = es_payload_peek(&e->r, &n);
    if (n < 8 * F_N || e->cap == NULL)
        return;
    uint64_t f[F_N];
    for (int i = 0; i < F_N; i++)
        f[i] = es_be64(p + 8 * i);
    struct es_model_spark_pt pt = {.time = e->t, .pool = f[F_POOL]};
    /* As +RTS -s counts them: every spark, pooled or not. */
    pt.v[ES_SPARK_CREATED] = f[F_CREATED] + f[F_DUD] + f[F_OVERFLOWED];
    pt.v[ES_SPARK_DUD] = f[F_DUD];
    pt.v[ES_SPARK_OVERFLOWED] = f[F_OVERFLOWED];
    pt.v[ES_SPARK_CONVERTED] = f[F_CONVERTED];
    pt.v[ES_SPARK_GCD] = f[F_GCD];
    pt.v[ES_SPARK_FIZZLED] = f[F_FIZZLED];
    memcpy(e->cap->sparks, pt.v, sizeof pt.v);
    e->cap->spark_pool = pt.pool;
    m->sparks_seen = true;
    if (!m->figures_only)
        add_point(m, (unsigned)(e->cap - m->caps), &pt);
}

static void spark_event(struct es_model *m, struct es_model_ev *e, enum es_model_spark_ev k) {
    if (e->cap == NULL)
        return;
    e->cap->spark_ev[k]++;
    m->spark_events_seen = true;
}

#define SPARK_EVENT(name, kind)                                                                    \
    void es_model_on_spark_##name(struct es_model *m, struct es_model_ev *e) {                     \
        spark_event(m, e, kind);                                                                   \
    }
SPARK_EVENT(create, ES_SPARK_EV_CREATE)
SPARK_EVENT(dud, ES_SPARK_EV_DUD)
SPARK_EVENT(overflow, ES_SPARK_EV_OVERFLOW)
SPARK_EVENT(run, ES_SPARK_EV_RUN)
SPARK_EVENT(steal, ES_SPARK_EV_STEAL)
SPARK_EVENT(fizzle, ES_SPARK_EV_FIZZLE)
SPARK_EVENT(gc, ES_SPARK_EV_GC)

void es_model_sparks_free(struct es_model *m) {
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++) {
        free(m->spark_pts[c]);
        m->spark_pts[c] = NULL;
        m->spark_npts[c] = 0;
    }
}

static unsigned ncaps(const struct es_model *m) {
    return m->ncaps < ES_MODEL_MAX_CAPS ? m->ncaps : ES_MODEL_MAX_CAPS;
}

void es_model_cap_sparks(const struct es_model *m, unsigned cap, uint64_t out[ES_SPARK_KINDS]) {
    for (int k = 0; k < ES_SPARK_KINDS; k++)
        out[k] = cap < ES_MODEL_MAX_CAPS ? m->caps[cap].sparks[k] : 0;
}

void es_model_sparks(const struct es_model *m, uint64_t out[ES_SPARK_KINDS]) {
    for (int k = 0; k < ES_SPARK_KINDS; k++)
        out[k] = 0;
    for (unsigned c = 0; c < ncaps(m); c++)
        for (int k = 0; k < ES_SPARK_KINDS; k++)
            out[k] += m->caps[c].sparks[k];
}

bool es_model_has_sparks(const struct es_model *m) {
    uint64_t v[ES_SPARK_KINDS];
    es_model_sparks(m, v);
    return m->sparks_seen && v[ES_SPARK_CREATED] > 0;
}

uint64_t es_model_spark_pool(const struct es_model *m, unsigned cap) {
    if (cap < ES_MODEL_MAX_CAPS)
        return m->caps[cap].spark_pool;
    uint64_t n = 0;
    for (unsigned c = 0; c < ncaps(m); c++)
        n += m->caps[c].spark_pool;
    return n;
}

double es_model_spark_rate(const struct es_model *m, unsigned cap) {
    if (cap >= ES_MODEL_MAX_CAPS) {
        double r = 0;
        for (unsigned c = 0; c < ncaps(m); c++)
            r += es_model_spark_rate(m, c);
        return r;
    }
    unsigned n = m->spark_npts[cap];
    if (n == 0)
        return 0;
    const struct es_model_spark_pt *p = m->spark_pts[cap], *b = &p[n - 1];
    /* From the newest point a second or more older than the latest (the
     * counters often come in pairs, at a GC and at exit); without one,
     * since the first event. */
    uint64_t t0 = m->first_time, c0 = 0;
    for (unsigned i = n - 1; i-- > 0;) {
        if (p[i].time + NS_PER_S <= b->time) {
            t0 = p[i].time;
            c0 = p[i].v[ES_SPARK_CREATED];
            break;
        }
    }
    if (b->time <= t0 || b->v[ES_SPARK_CREATED] < c0)
        return 0;
    return (double)(b->v[ES_SPARK_CREATED] - c0) * 1e9 / (double)(b->time - t0);
}

size_t es_model_spark_points(const struct es_model *m, unsigned cap,
                             const struct es_model_spark_pt **pts) {
    *pts = cap < ES_MODEL_MAX_CAPS ? m->spark_pts[cap] : NULL;
    return *pts ? m->spark_npts[cap] : 0;
}

void es_model_spark_events(const struct es_model *m, uint64_t out[ES_SPARK_EV_KINDS]) {
    for (int k = 0; k < ES_SPARK_EV_KINDS; k++)
        out[k] = 0;
    for (unsigned c = 0; c < ncaps(m); c++)
        for (int k = 0; k < ES_SPARK_EV_KINDS; k++)
            out[k] += m->caps[c].spark_ev[k];
}
