/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's sparks (client/model/sparks.c) on hand-made events: the
 * counters as +RTS -s counts them (created = pooled + dud + overflowed),
 * summed over the capabilities; the pool; the rate over the last second or
 * more; the points per capability stay bounded (halved when full, the
 * latest kept); the spark events (-lf) counted by kind; a program whose
 * counters are all zero has no sparks; short payloads are ignored; reset
 * frees everything (the ASan build checks). */
#include "format/es_header.h"
#include "model/model.h"
#include "../unit.h"

#include <string.h>

#define S 1000000000ull

struct ev {
    struct es_event e;
    uint8_t p[64];
    size_t n;
};

static void put(struct es_model *m, uint16_t type, uint64_t t, const uint64_t *v, int n, int w) {
    struct ev b;
    memset(&b, 0, sizeof b);
    for (int i = 0; i < n; i++, b.n += (size_t)w)
        es_put_be(b.p + b.n, v[i], w);
    b.e.type = type;
    b.e.time = t;
    b.e.payload = b.p;
    b.e.payload_len = b.n;
    b.e.len = 10 + b.n;
    es_model_event(m, &b.e);
}

/* Everything after this is capability `cap`'s. */
static void block(struct es_model *m, uint64_t t, unsigned cap) {
    struct ev b;
    memset(&b, 0, sizeof b);
    es_put_be(b.p, 0xffffffff, 4);
    es_put_be(b.p + 12, cap, 2);
    b.n = 14;
    b.e.type = ES_EVENT_BLOCK_MARKER;
    b.e.time = t;
    b.e.payload = b.p;
    b.e.payload_len = b.n;
    b.e.len = 10 + b.n;
    es_model_event(m, &b.e);
}

/* SPARK_COUNTERS: created (pooled), dud, overflowed, converted, gc'd,
 * fizzled, remaining. */
static void counters(struct es_model *m, uint64_t t, uint64_t cr, uint64_t dud, uint64_t ovf,
                     uint64_t conv, uint64_t gcd, uint64_t fiz, uint64_t pool) {
    uint64_t v[7] = {cr, dud, ovf, conv, gcd, fiz, pool};
    put(m, ES_EVENT_SPARK_COUNTERS, t, v, 7, 8);
}

UNIT_CASE(model_sparks_zero) {
    static struct es_model m;
    es_model_init(&m);
    ok(!m.sparks_seen && !es_model_has_sparks(&m), "no counters: nothing seen");
    block(&m, 0, 0);
    counters(&m, 1, 0, 0, 0, 0, 0, 0, 0);
    ok(m.sparks_seen && !es_model_has_sparks(&m), "counters of zeros: seen, but no sparks");
    es_model_destroy(&m);
}

UNIT_CASE(model_sparks_counters) {
    static struct es_model m;
    es_model_init(&m);
    block(&m, 0, 0);
    counters(&m, 1, 0, 0, 0, 0, 0, 0, 0);
    counters(&m, 1 * S, 100, 5, 3, 40, 20, 10, 30);
    block(&m, 1 * S, 1);
    counters(&m, 1 * S, 7, 1, 0, 50, 2, 4, 1);
    uint64_t v[ES_SPARK_KINDS];
    es_model_sparks(&m, v);
    ok(v[ES_SPARK_CREATED] == 116 && v[ES_SPARK_DUD] == 6 && v[ES_SPARK_OVERFLOWED] == 3 &&
           v[ES_SPARK_CONVERTED] == 90 && v[ES_SPARK_GCD] == 22 && v[ES_SPARK_FIZZLED] == 14,
       "totals: created %llu (108 + 8: pooled, duds and overflowed), converted %llu",
       (unsigned long long)v[ES_SPARK_CREATED], (unsigned long long)v[ES_SPARK_CONVERTED]);
    es_model_cap_sparks(&m, 0, v);
    ok(v[ES_SPARK_CREATED] == 108 && v[ES_SPARK_CONVERTED] == 40, "capability 0's own");
    ok(es_model_spark_pool(&m, 0) == 30 && es_model_spark_pool(&m, ES_MODEL_MAX_CAPS) == 31,
       "pool: 30 on cap 0, 31 in all");
    ok(es_model_has_sparks(&m), "has sparks");

    /* Rate: cap 0 from 108 at 1 s to 308 at 3 s, a second point at 3 s
     * too (counters often come in pairs). */
    block(&m, 3 * S, 0);
    counters(&m, 3 * S, 290, 15, 3, 100, 50, 20, 10);
    counters(&m, 3 * S, 290, 15, 3, 100, 50, 20, 0);
    double r = es_model_spark_rate(&m, 0);
    ok(r > 99.9 && r < 100.1, "rate over the last second or more: %.1f/s (200 in 2 s)", r);
    double r1 = es_model_spark_rate(&m, 1); /* 8 since the first event (time 1 ns) */
    ok(r1 > 7.9 && r1 < 8.1, "a younger capability: since the first event, %.2f/s", r1);

    const struct es_model_spark_pt *p;
    size_t n = es_model_spark_points(&m, 0, &p);
    ok(n == 4 && p[3].time == 3 * S && p[3].pool == 0 && p[1].v[ES_SPARK_CREATED] == 108,
       "points of cap 0: %zu, the latest last", n);

    /* Many counters: bounded, halved, the latest kept, times in order. */
    uint64_t gen = m.spark_generation;
    for (uint64_t i = 1; i <= 1000; i++)
        counters(&m, 3 * S + i * 1000000, 290 + i, 15, 3, 100, 50, 20, i % 7);
    n = es_model_spark_points(&m, 0, &p);
    bool ordered = true;
    for (size_t i = 1; i < n; i++)
        ordered = ordered && p[i - 1].time < p[i].time;
    ok(n <= ES_MODEL_SPARK_POINTS && n >= ES_MODEL_SPARK_POINTS / 2 && m.spark_generation > gen &&
           ordered && p[n - 1].v[ES_SPARK_CREATED] == 1308,
       "1000 more points: %zu kept, halved %llu times, ordered, the latest kept", n,
       (unsigned long long)(m.spark_generation - gen));

    /* A short payload is ignored. */
    put(&m, ES_EVENT_SPARK_COUNTERS, 10 * S, (uint64_t[]){1, 2, 3}, 3, 8);
    es_model_cap_sparks(&m, 0, v);
    ok(v[ES_SPARK_CREATED] == 1308, "a short SPARK_COUNTERS is ignored");

    es_model_reset(&m);
    ok(!m.sparks_seen && es_model_spark_points(&m, 0, &p) == 0, "reset forgets the sparks");
    es_model_destroy(&m);
}

/* Spark events, on capability 1. */
UNIT_CASE(model_sparks_events) {
    static struct es_model m;
    es_model_init(&m);
    ok(!m.spark_events_seen, "no spark events yet");
    block(&m, 4 * S, 1);
    static const uint16_t types[] = {ES_EVENT_SPARK_CREATE, ES_EVENT_SPARK_CREATE,
                                     ES_EVENT_SPARK_DUD,    ES_EVENT_SPARK_RUN,
                                     ES_EVENT_SPARK_FIZZLE, ES_EVENT_SPARK_GC};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        put(&m, types[i], 4 * S, NULL, 0, 0);
    put(&m, ES_EVENT_SPARK_STEAL, 4 * S, (uint64_t[]){0}, 1, 2);
    put(&m, ES_EVENT_SPARK_OVERFLOW, 4 * S, NULL, 0, 0);
    uint64_t e[ES_SPARK_EV_KINDS];
    es_model_spark_events(&m, e);
    ok(m.spark_events_seen && e[ES_SPARK_EV_CREATE] == 2 && e[ES_SPARK_EV_DUD] == 1 &&
           e[ES_SPARK_EV_OVERFLOW] == 1 && e[ES_SPARK_EV_RUN] == 1 && e[ES_SPARK_EV_STEAL] == 1 &&
           e[ES_SPARK_EV_FIZZLE] == 1 && e[ES_SPARK_EV_GC] == 1,
       "spark events counted by kind");
    ok(m.caps[1].spark_ev[ES_SPARK_EV_CREATE] == 2 && m.caps[0].spark_ev[ES_SPARK_EV_CREATE] == 0,
       "on the capability of their block");
    es_model_destroy(&m);
}
