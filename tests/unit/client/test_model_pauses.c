/* SPDX-License-Identifier: BSD-3-Clause */
/* The GC pause histogram's buckets (client/model/gc.c): eight per power of
 * two from 1 us, bucket 8k starting at exactly 2^k us, as the exposition's
 * `le` bounds (client/prom/text.c) and the page's percentiles read them.
 * Each pause is one GC of capability 0 fed to a model; the bucket it lands
 * in is compared with floor(8 log2(d / 1 us)) in long double, exactly on
 * the powers of two and a hair (2^-9) either side of the other bounds. */
#include "model/model.h"
#include "model_events.h"
#include "../unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The bucket a pause of `d` ns lands in, or -1 when none changed. */
static int bucket_of(struct es_model *m, uint64_t d) {
    uint64_t before[ES_MODEL_PAUSE_BUCKETS];
    memcpy(before, m->pause_hist, sizeof before);
    uint64_t t = m->now + 1000000;
    struct ev b;
    put(m, mk(&b, ES_EVENT_GC_START, t));
    put(m, u(u(u(u(mk(&b, ES_EVENT_GC_STATS_GHC, t + d), 0, 4), 0, 2), 0, 8), 0, 40));
    put(m, mk(&b, ES_EVENT_GC_END, t + d));
    for (int i = 0; i < ES_MODEL_PAUSE_BUCKETS; i++)
        if (m->pause_hist[i] != before[i])
            return i;
    return -1;
}

static int expected(uint64_t d) {
    if (d < 1000)
        return 0;
    long double b = floorl(8 * log2l((long double)d / 1000));
    return b >= ES_MODEL_PAUSE_BUCKETS - 1 ? ES_MODEL_PAUSE_BUCKETS - 1 : (int)b;
}

UNIT_CASE(model_pauses_buckets) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    struct ev mark;
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 0, 2));

    int edges = 0, near = 0, bad = 0;
    for (unsigned k = 0; k < 39; k++) {
        uint64_t edge = (uint64_t)1000 << k;
        int at = bucket_of(m, edge), below = bucket_of(m, edge - 1);
        edges += at == (int)(8 * k) && below == (k ? (int)(8 * k) - 1 : 0);
        if (at != (int)(8 * k))
            printf("# 2^%u us = %llu ns: bucket %d, not %u\n", k, (unsigned long long)edge, at,
                   8 * k);
        for (unsigned j = 1; j < 8; j++) {
            long double bound = 1000.0L * exp2l(k + j / 8.0L);
            uint64_t hi = (uint64_t)ceill(bound * (1 + 1.0L / 512) + 1);
            uint64_t lo = (uint64_t)floorl(bound * (1 - 1.0L / 512) - 1);
            int bh = bucket_of(m, hi), bl = bucket_of(m, lo);
            near += bh == (int)(8 * k + j) && bl == (int)(8 * k + j - 1);
            bad += bh != expected(hi) || bl != expected(lo);
        }
    }
    ok(edges == 39,
       "a pause of exactly 2^k us starts bucket 8k, 1 ns less is in the one before "
       "(k = 0..38): %d of 39",
       edges);
    ok(near == 39 * 7 && bad == 0,
       "the seven bounds inside each power of two, a hair either side: %d of %d right", near,
       39 * 7);
    ok(bucket_of(m, 999) == 0 && bucket_of(m, 0) == 0, "under 1 us: bucket 0");
    ok(bucket_of(m, (uint64_t)1000 << 40) == ES_MODEL_PAUSE_BUCKETS - 1 &&
           bucket_of(m, UINT64_C(1) << 62) == ES_MODEL_PAUSE_BUCKETS - 1,
       "over 2^39.875 us: the last bucket");
    /* Any pause: at most one bucket from the formula, and only within 2^-10
     * of a bound (the thresholds are kept in 1/1024 us). */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int off = 0, far = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t d = x >> (20 + x % 40);
        int got = bucket_of(m, d), want = expected(d);
        if (got != want) {
            off++;
            long double frac = 8 * log2l((long double)d / 1000) - want;
            far += abs(got - want) > 1 || (frac > 8.0L / 1024 && frac < 1 - 8.0L / 1024);
        }
    }
    ok(far == 0, "20000 random pauses: %d off by one right at a bound, %d elsewhere", off, far);
    ok(m->pause_n == m->gcs, "every GC counted once: %llu", (unsigned long long)m->pause_n);
    es_model_destroy(m);
    free(m);
}
