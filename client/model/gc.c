/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "heap and GC" (client/model/impl.h): heap size, live
 * bytes and allocation with their series, GC counts, and GC pauses in
 * histograms (since the start, and per second of the last
 * ES_MODEL_SECONDS) for percentiles over any recent window. */
#include "impl.h"
#include "history.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* ---- Heap figures. */

static void heap_allocated(struct es_model *m, struct es_model_cap *c, uint64_t t, uint64_t total) {
    /* Each capability posts its own running total. A capability's first
     * figure is all it allocated before (a client that joined late sees
     * hours of it): it counts in the total, not in the rate or history. */
    uint64_t delta = total > c->allocated ? total - c->allocated : 0;
    /* Likewise the first figure after a drop notice: what it adds was
     * allocated over the lost stretch, which would show as a spike of the
     * rate in the one place it lands. */
    bool first = c->allocated == 0 || c->after_gap;
    c->after_gap = false;
    c->allocated = total;
    m->allocated += delta;
    if (!first) {
        m->alloc_rated += delta;
        es_model_tl_at(m, t)->allocated += (double)delta;
    }
    if (!m->figures_only)
        es_model_series_put(&m->s_alloc, t, first ? 0 : (double)delta, true);
    /* The rate over at least a tenth of a second of figures. */
    if (m->alloc_rate_time == 0) {
        m->alloc_rate_time = t;
        m->alloc_rate_bytes = m->alloc_rated;
    } else if (t > m->alloc_rate_time + NS_PER_S / 10) {
        m->alloc_rate =
            (double)(m->alloc_rated - m->alloc_rate_bytes) * 1e9 / (double)(t - m->alloc_rate_time);
        m->alloc_rate_time = t;
        m->alloc_rate_bytes = m->alloc_rated;
    }
}

void es_model_on_heap_allocated(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 4); /* capset */
    uint64_t v = es_payload_u64(&e->r);
    if (es_payload_ok(&e->r) && e->cap != NULL)
        heap_allocated(m, e->cap, e->t, v);
}

/* HEAP_SIZE or HEAP_LIVE: the latest, the largest, the largest in its
 * timeline bucket, and the series. */
static void heap_figure(struct es_model *m, struct es_model_ev *e, bool live) {
    es_payload_skip(&e->r, 4); /* capset */
    uint64_t v = es_payload_u64(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    uint64_t *latest = live ? &m->heap_live : &m->heap_size;
    uint64_t *max = live ? &m->max_heap_live : &m->max_heap_size;
    *latest = v;
    if (v > *max)
        *max = v;
    struct es_model_bucket *bk = es_model_tl_at(m, e->t);
    double *peak = live ? &bk->heap_live : &bk->heap_size;
    *peak = max_d(*peak, (double)v);
    if (!m->figures_only)
        es_model_series_put(live ? &m->s_live : &m->s_size, e->t, (double)v, false);
}

void es_model_on_heap_size(struct es_model *m, struct es_model_ev *e) {
    heap_figure(m, e, false);
}

void es_model_on_heap_live(struct es_model *m, struct es_model_ev *e) {
    heap_figure(m, e, true);
}

void es_model_on_heap_info(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 4); /* capset */
    unsigned gens = es_payload_u16(&e->r);
    if (es_payload_ok(&e->r) && gens > 0)
        m->generations = gens;
}

/* ---- GC pauses. */

/* floor(8 log2(d / 1 us)), capped: eight buckets per power of two from
 * 1 us, bucket 8k starting at exactly 2^k us (client/prom/text.c's bounds rely on
 * it). In integers, since it runs for every GC: the power of two from the
 * highest bit, then the eighth from thresholds 2^(i/8) in 1/1024 us (a
 * bound inside a power of two is off by less than 2^-10 of it). */
static unsigned pause_bucket(uint64_t d) {
    static const uint32_t eighth[8] = {1024000, 1116680, 1217749, 1327964,
                                       1448155, 1579224, 1722156, 1878025};
    if (d < 1000)
        return 0;
    unsigned k = 63u - (unsigned)__builtin_clzll(d / 1000);
    if (8 * k >= ES_MODEL_PAUSE_BUCKETS - 1)
        return ES_MODEL_PAUSE_BUCKETS - 1;
    assert(d >= (uint64_t)1000 << k);
#define ABOVE(j) (d >= (((uint64_t)eighth[j] << k) + 1023) >> 10)
    unsigned i = ABOVE(4) ? 4 : 0; /* a binary search of the seven */
    i += ABOVE(i + 2) ? 2 : 0;
    i += ABOVE(i + 1) ? 1 : 0;
#undef ABOVE
    return 8 * k + i;
}

/* The value a bucket stands for: its geometric middle. */
static uint64_t bucket_value(unsigned b) {
    return b == 0 ? 500 : (uint64_t)(1000.0 * exp2((b + 0.5) / 8.0));
}

/* Count a pause that ended at `end` in the histograms: since start, and
 * its second's if that is recent. */
static void pause_count(struct es_model *m, uint64_t end, uint64_t d) {
    unsigned b = pause_bucket(d);
    m->pause_hist[b]++;
    uint64_t sec = end / NS_PER_S, now = m->now / NS_PER_S;
    if (sec + ES_MODEL_SECONDS <= now || m->figures_only)
        return; /* older than every slot, or no history kept */
    struct es_model_second *slot = &m->secs[sec % ES_MODEL_SECONDS];
    if (slot->sec != sec + 1) {
        if (slot->sec > sec + 1)
            return; /* the slot holds a later second now */
        memset(slot, 0, sizeof *slot);
        slot->sec = sec + 1;
    }
    slot->hist[b]++;
    slot->gc_ns += d;
    if (d > slot->max)
        slot->max = d;
}

/* Count a GC pause. The capabilities of a parallel GC each post their own
 * GC_START and GC_END, but only the one that led it posts GC_STATS_GHC, in
 * its own block next to its interval (just before or after its GC_END): its
 * interval is the pause. Blocks of capabilities arrive in any order, so
 * the pairing is per capability. */
static void gc_pause(struct es_model *m, uint64_t start, uint64_t end, bool major) {
    if (end < start)
        return;
    es_model_hist_pause(m, start, end - start, major);
    es_model_tl_at(m, end)->gc_ns += end - start; /* figures only: a bucket no one reads */
    m->pause_n++;
    pause_count(m, end, end - start);
    m->gc_ns += end - start;
    if (end - start > m->pause_max)
        m->pause_max = end - start;
}

void es_model_on_gc_start(struct es_model *m, struct es_model_ev *e) {
    (void)m;
    struct es_model_cap *cap = e->cap;
    if (cap) {
        cap->gc_since = e->t ? e->t : 1;
        cap->gc_stats = false;
        cap->gc_end = 0;
    }
}

void es_model_on_gc_end(struct es_model *m, struct es_model_ev *e) {
    struct es_model_cap *cap = e->cap;
    if (cap == NULL || cap->gc_since == 0)
        return;
    es_model_tl_interval(m, (unsigned)(cap - m->caps), 1, cap->gc_since, e->t);
    if (cap->gc_stats) {
        gc_pause(m, cap->gc_since, e->t, cap->gc_major);
    } else {
        cap->gc_start = cap->gc_since;
        cap->gc_end = e->t;
    }
    cap->gc_since = 0;
    cap->gc_stats = false;
}

void es_model_on_gc_stats(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 4); /* capset */
    unsigned gen = es_payload_u16(&e->r);
    uint64_t copied = es_payload_u64(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    m->gcs++;
    m->gen_gcs[gen < ES_MODEL_MAX_GENS ? gen : ES_MODEL_MAX_GENS - 1]++;
    bool major = gen + 1 >= m->generations && gen > 0;
    if (major)
        m->major_gcs++;
    else
        m->minor_gcs++;
    if (major)
        es_model_tl_at(m, e->t)->major++;
    else
        es_model_tl_at(m, e->t)->minor++;
    m->last_copied = copied;
    /* This capability led the GC: its interval is the pause. */
    struct es_model_cap *cap = e->cap;
    if (cap && cap->gc_since) {
        cap->gc_stats = true;
        cap->gc_major = major;
    } else if (cap && cap->gc_end) {
        gc_pause(m, cap->gc_start, cap->gc_end, major);
        cap->gc_end = 0;
    }
}

/* ---- Queries. */

/* How many seconds, the current one included, a window covers. */
static unsigned window_secs(uint64_t window_ns) {
    uint64_t n = (window_ns + NS_PER_S - 1) / NS_PER_S;
    return n == 0 ? 1 : n > ES_MODEL_SECONDS ? ES_MODEL_SECONDS : (unsigned)n;
}

/* The slot of the second `i` seconds before the current one, if it holds
 * that second. */
static const struct es_model_second *slot_in_window(const struct es_model *m, unsigned i) {
    uint64_t now = m->now / NS_PER_S;
    if (i > now)
        return NULL;
    uint64_t sec = now - i;
    const struct es_model_second *slot = &m->secs[sec % ES_MODEL_SECONDS];
    return slot->sec == sec + 1 ? slot : NULL;
}

static uint64_t hist_pct(const uint64_t *hist, uint64_t n, double p, uint64_t max) {
    if (n == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(p * (double)n), seen = 0;
    if (rank == 0)
        rank = 1;
    for (unsigned b = 0; b < ES_MODEL_PAUSE_BUCKETS; b++) {
        seen += hist[b];
        if (seen >= rank) {
            uint64_t v = bucket_value(b);
            return v < max ? v : max;
        }
    }
    return max;
}

uint64_t es_model_pause_pct(const struct es_model *m, double p, uint64_t window_ns) {
    if (window_ns == 0) {
        uint64_t n = 0;
        for (unsigned b = 0; b < ES_MODEL_PAUSE_BUCKETS; b++)
            n += m->pause_hist[b];
        return hist_pct(m->pause_hist, n, p, m->pause_max);
    }
    uint64_t hist[ES_MODEL_PAUSE_BUCKETS] = {0}, n = 0, max = 0;
    unsigned w = window_secs(window_ns);
    for (unsigned i = 0; i < w; i++) {
        const struct es_model_second *slot = slot_in_window(m, i);
        if (slot == NULL)
            continue;
        for (unsigned b = 0; b < ES_MODEL_PAUSE_BUCKETS; b++) {
            hist[b] += slot->hist[b];
            n += slot->hist[b];
        }
        if (slot->max > max)
            max = slot->max;
    }
    return hist_pct(hist, n, p, max);
}

uint64_t es_model_pause_max(const struct es_model *m, uint64_t window_ns) {
    if (window_ns == 0)
        return m->pause_max;
    uint64_t max = 0;
    unsigned w = window_secs(window_ns);
    for (unsigned i = 0; i < w; i++) {
        const struct es_model_second *slot = slot_in_window(m, i);
        if (slot && slot->max > max)
            max = slot->max;
    }
    return max;
}

double es_model_gc_share(const struct es_model *m, uint64_t window_ns) {
    uint64_t span = m->now - m->first_time;
    if (span == 0 || m->events == 0)
        return 0;
    double share;
    unsigned w = window_secs(window_ns);
    /* The window's seconds: whole ones, and the current one so far. */
    uint64_t now_sec = m->now / NS_PER_S;
    uint64_t from = now_sec + 1 >= w ? (now_sec + 1 - w) * NS_PER_S : 0;
    if (from < m->first_time)
        from = m->first_time;
    if (window_ns == 0 || m->now <= from) {
        share = (double)m->gc_ns / (double)span;
    } else {
        uint64_t sum = 0;
        for (unsigned i = 0; i < w; i++) {
            const struct es_model_second *slot = slot_in_window(m, i);
            if (slot)
                sum += slot->gc_ns;
        }
        share = (double)sum / (double)(m->now - from);
    }
    return share > 1 ? 1 : share;
}
