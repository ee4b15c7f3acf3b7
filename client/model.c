#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ull

/* GHC's STOP_THREAD status for a thread that has finished
 * (rts/include/rts/EventLogFormat.h). */
#define THREAD_FINISHED 5

/* ---- Payload readers: every field is checked against the payload's
 * length, so a short or garbled event is ignored, never over-read. */

struct rd {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static uint64_t rd_n(struct rd *r, int n) {
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
static void rd_str(struct rd *r, char *out, size_t size) {
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
static void clean(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

/* ---- Series: a value per second of stream time. */

static double *series_slot(struct es_model_series *s, unsigned i) {
    return &s->v[(s->head + i) % ES_MODEL_SERIES];
}

double es_model_series_at(const struct es_model_series *s, unsigned i) {
    return s->v[(s->head + i) % ES_MODEL_SERIES];
}

/* Extend the series up to second `sec`, new points holding `fill`. */
static void series_extend(struct es_model_series *s, uint64_t sec, bool carry) {
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

/* Put `v` at time `t`: the second's value (add: added to it). A value
 * older than the history is dropped. */
static void series_put(struct es_model_series *s, uint64_t t, double v, bool add) {
    uint64_t sec = t / NS_PER_S;
    if (s->n == 0) {
        s->first = sec;
        s->n = 1;
        s->head = 0;
        s->v[0] = v;
        return;
    }
    series_extend(s, sec, !add);
    if (sec < s->first)
        return;
    double *slot = series_slot(s, (unsigned)(sec - s->first));
    *slot = add ? *slot + v : v;
}

/* ---- Labels: interned strings, so censuses compare by index. */

static uint32_t hash_str(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

#define OTHER_LABEL "(other labels)"

static int labels_grow(struct es_model *m) {
    size_t ncap = m->labels_hash_cap ? m->labels_hash_cap * 2 : 1024;
    uint32_t *nh = calloc(ncap, sizeof *nh);
    char **nl = realloc(m->labels, ncap / 2 * sizeof *nl);
    uint64_t *np = realloc(m->prev_bytes, ncap / 2 * sizeof *np);
    if (nl)
        m->labels = nl;
    if (np)
        m->prev_bytes = np;
    if (nh == NULL || nl == NULL || np == NULL) {
        free(nh);
        return -1;
    }
    for (size_t i = 0; i < m->nlabels; i++) {
        size_t j = hash_str(m->labels[i]) & (ncap - 1);
        while (nh[j])
            j = (j + 1) & (ncap - 1);
        nh[j] = (uint32_t)i + 1;
    }
    free(m->label_hash);
    m->label_hash = nh;
    m->labels_hash_cap = ncap;
    return 0;
}

/* The index of `s`, added if new; the "(other labels)" index when the table
 * is full; UINT32_MAX when memory ran out. */
static uint32_t intern(struct es_model *m, const char *s) {
    if (m->labels_hash_cap) {
        size_t j = hash_str(s) & (m->labels_hash_cap - 1);
        while (m->label_hash[j]) {
            uint32_t i = m->label_hash[j] - 1;
            if (strcmp(m->labels[i], s) == 0)
                return i;
            j = (j + 1) & (m->labels_hash_cap - 1);
        }
    }
    /* The last place is kept for "(other labels)". */
    if (m->nlabels + 1 >= ES_MODEL_MAX_LABELS && strcmp(s, OTHER_LABEL) != 0)
        return intern(m, OTHER_LABEL);
    if (m->nlabels >= ES_MODEL_MAX_LABELS)
        return UINT32_MAX;
    /* Keep the table at most half full. */
    if ((m->nlabels + 1) * 2 > m->labels_hash_cap && labels_grow(m) < 0) {
        m->oom = true;
        return UINT32_MAX;
    }
    char *copy = strdup(s);
    if (copy == NULL) {
        m->oom = true;
        return UINT32_MAX;
    }
    uint32_t i = (uint32_t)m->nlabels++;
    m->labels[i] = copy;
    m->prev_bytes[i] = UINT64_MAX;
    size_t j = hash_str(s) & (m->labels_hash_cap - 1);
    while (m->label_hash[j])
        j = (j + 1) & (m->labels_hash_cap - 1);
    m->label_hash[j] = i + 1;
    return i;
}

const char *es_model_label(const struct es_model *m, uint32_t i) {
    return i < m->nlabels ? m->labels[i] : "?";
}

int64_t es_model_prev_bytes(const struct es_model *m, uint32_t i) {
    if (i >= m->nlabels || m->prev_bytes[i] == UINT64_MAX)
        return -1;
    return (int64_t)m->prev_bytes[i];
}

static void census_add(struct es_model *m, const char *label, uint64_t bytes) {
    uint32_t i = intern(m, label);
    if (i == UINT32_MAX)
        return;
    struct es_model_census *c = &m->building;
    /* The RTS gives every label once per census, but "(other labels)" may
     * collect many: add to an existing line of it. */
    if (strcmp(m->labels[i], OTHER_LABEL) == 0)
        for (size_t k = 0; k < c->n; k++)
            if (c->e[k].label == i) {
                c->e[k].bytes += bytes;
                c->total += bytes;
                return;
            }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 64;
        struct es_model_entry *ne = realloc(c->e, ncap * sizeof *ne);
        if (ne == NULL) {
            m->oom = true;
            return;
        }
        c->e = ne;
        c->cap = ncap;
    }
    c->e[c->n++] = (struct es_model_entry){i, bytes};
    c->total += bytes;
}

static void hist_census(struct es_model *m);

static void census_end(struct es_model *m) {
    /* prev_bytes: the old `cur` becomes the previous census. */
    for (size_t k = 0; k < m->prev.n; k++)
        m->prev_bytes[m->prev.e[k].label] = UINT64_MAX;
    for (size_t k = 0; k < m->cur.n; k++)
        m->prev_bytes[m->cur.e[k].label] = m->cur.e[k].bytes;
    struct es_model_census old = m->prev;
    m->prev = m->cur;
    m->cur = m->building;
    m->building = old;
    m->building.n = 0;
    m->building.total = 0;
    m->in_census = false;
    m->censuses++;
    hist_census(m);
}

struct ranked {
    uint64_t bytes;
    size_t i;
};

static int by_bytes(const void *a, const void *b) {
    uint64_t x = ((const struct ranked *)a)->bytes, y = ((const struct ranked *)b)->bytes;
    return x < y ? 1 : x > y ? -1 : 0;
}

size_t es_model_top_entries(const struct es_model *m, size_t *out, size_t n) {
    size_t total = m->cur.n;
    struct ranked *all = malloc((total ? total : 1) * sizeof *all);
    if (all == NULL)
        return 0;
    for (size_t i = 0; i < total; i++)
        all[i] = (struct ranked){m->cur.e[i].bytes, i};
    qsort(all, total, sizeof *all, by_bytes);
    size_t k = total < n ? total : n;
    for (size_t i = 0; i < k; i++)
        out[i] = all[i].i;
    free(all);
    return k;
}

static void cost_centre(struct es_model *m, struct rd *r) {
    uint32_t id = (uint32_t)rd_n(r, 4);
    char label[256];
    rd_str(r, label, sizeof label);
    if (r->bad || id >= ES_MODEL_MAX_LABELS)
        return;
    if (id >= m->ncc) {
        size_t n = id + 1 > m->ncc * 2 ? id + 1 : m->ncc * 2;
        char **nc = realloc(m->cc_label, n * sizeof *nc);
        if (nc == NULL) {
            m->oom = true;
            return;
        }
        memset(nc + m->ncc, 0, (n - m->ncc) * sizeof *nc);
        m->cc_label = nc;
        m->ncc = n;
    }
    free(m->cc_label[id]);
    m->cc_label[id] = strdup(label);
}

/* A cost-centre stack sample: the label is the stack's cost centres,
 * innermost first, joined by '/'. */
static void sample_cost_centre(struct es_model *m, struct rd *r) {
    rd_n(r, 1); /* profile id */
    uint64_t bytes = rd_n(r, 8);
    unsigned depth = (unsigned)rd_n(r, 1);
    char label[512];
    size_t k = 0;
    label[0] = '\0';
    for (unsigned i = 0; i < depth && !r->bad; i++) {
        uint32_t id = (uint32_t)rd_n(r, 4);
        const char *cc = id < m->ncc && m->cc_label[id] ? m->cc_label[id] : NULL;
        char num[16];
        if (cc == NULL) {
            snprintf(num, sizeof num, "(%u)", id);
            cc = num;
        }
        int w = snprintf(label + k, sizeof label - k, "%s%s", i ? "/" : "", cc);
        if (w < 0 || (size_t)w >= sizeof label - k) {
            k = sizeof label - 1;
            break;
        }
        k += (size_t)w;
    }
    if (r->bad)
        return;
    census_add(m, depth ? label : "MAIN", bytes);
}

/* ---- The whole run, downsampled (struct es_model_history). */

static const struct es_model_bucket empty_bucket = {-1, -1, 0, 0, 0, 0};

static double max_d(double a, double b) {
    return a > b ? a : b;
}

/* Halve the timeline: bucket pairs become one bucket twice as wide. */
static void tl_merge(struct es_model_history *h) {
    unsigned half = (h->n + 1) / 2;
    for (unsigned i = 0; i < half; i++) {
        struct es_model_bucket a = h->tl[2 * i];
        struct es_model_bucket b = 2 * i + 1 < h->n ? h->tl[2 * i + 1] : empty_bucket;
        h->tl[i] = (struct es_model_bucket){max_d(a.heap_size, b.heap_size),
                                            max_d(a.heap_live, b.heap_live),
                                            a.allocated + b.allocated,
                                            a.gc_ns + b.gc_ns,
                                            a.minor + b.minor,
                                            a.major + b.major};
    }
    for (unsigned i = half; i < ES_MODEL_TL_BUCKETS; i++)
        h->tl[i] = empty_bucket;
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
    h->generation++;
}

/* The bucket of time `t`, the timeline widened and extended as needed. */
static struct es_model_bucket *tl_at(struct es_model *m, uint64_t t) {
    struct es_model_history *h = &m->h;
    while (t / h->width >= ES_MODEL_TL_BUCKETS)
        tl_merge(h);
    unsigned i = (unsigned)(t / h->width);
    while (h->n <= i)
        h->tl[h->n++] = empty_bucket;
    return &h->tl[i];
}

/* Capability `c` ran Haskell code (kind 0) or collected garbage (kind 1)
 * from `a` to `b`: spread over the buckets it covers. */
static void tl_interval(struct es_model *m, unsigned c, int kind, uint64_t a, uint64_t b) {
    struct es_model_history *h = &m->h;
    if (b <= a || c >= ES_MODEL_MAX_CAPS)
        return;
    tl_at(m, b - 1);
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

/* A pause for the history: once the list is full, each point stands for
 * twice as many pauses as before, the longest of them. */
static void hist_pause(struct es_model *m, uint64_t start, uint64_t dur, bool major) {
    struct es_model_history *h = &m->h;
    if (h->pauses == NULL) {
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

/* The census just completed (m->cur) for the history: once the list is
 * full, every other one is dropped and only every second one after. */
static void hist_census(struct es_model *m) {
    struct es_model_history *h = &m->h;
    if (h->censuses == NULL) {
        h->censuses = calloc(ES_MODEL_HIST_CENSUSES, sizeof *h->censuses);
        if (h->censuses == NULL) {
            m->oom = true;
            return;
        }
    }
    if (h->census_seen++ % h->census_stride != 0)
        return;
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
    const struct es_model_census *c = &m->cur;
    size_t rows = c->n <= ES_MODEL_HIST_CENSUS_ROWS ? c->n : ES_MODEL_HIST_CENSUS_ROWS;
    struct es_model_census_pt pt = {c->time, c->total, 0, malloc((rows ? rows : 1) * sizeof *pt.e)};
    size_t *order = c->n > rows ? malloc(c->n * sizeof *order) : NULL;
    if (pt.e == NULL || (c->n > rows && order == NULL)) {
        free(pt.e);
        free(order);
        m->oom = true;
        return;
    }
    if (order == NULL) {
        memcpy(pt.e, c->e, rows * sizeof *pt.e);
        pt.n = (uint32_t)rows;
    } else {
        /* The largest rows - 1 labels, and the rest as one. */
        es_model_top_entries(m, order, c->n);
        uint64_t rest = c->total;
        for (size_t i = 0; i + 1 < rows; i++) {
            pt.e[i] = c->e[order[i]];
            rest -= pt.e[i].bytes;
        }
        uint32_t other = intern(m, OTHER_LABEL);
        pt.n = (uint32_t)rows - 1;
        if (other != UINT32_MAX)
            pt.e[pt.n++] = (struct es_model_entry){other, rest};
        free(order);
    }
    h->censuses[h->ncensuses++] = pt;
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

/* ---- Threads: an open-addressing set of live thread ids. */

static size_t thread_slot(const struct es_model *m, uint32_t id) {
    size_t j = (id * 2654435761u) & (m->threads_cap - 1);
    while (m->threads[j] && m->threads[j] != id)
        j = (j + 1) & (m->threads_cap - 1);
    return j;
}

static void thread_alive(struct es_model *m, uint32_t id) {
    if (id == 0)
        return;
    if ((m->threads_n + 1) * 2 > m->threads_cap) {
        if (m->threads_cap >= 2 * ES_MODEL_MAX_THREADS) {
            m->threads_saturated = true;
            return;
        }
        size_t ncap = m->threads_cap ? m->threads_cap * 2 : 256;
        uint32_t *nt = calloc(ncap, sizeof *nt);
        if (nt == NULL) {
            m->oom = true;
            return;
        }
        uint32_t *old = m->threads;
        size_t ocap = m->threads_cap;
        m->threads = nt;
        m->threads_cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i])
                m->threads[thread_slot(m, old[i])] = old[i];
        free(old);
    }
    size_t j = thread_slot(m, id);
    if (m->threads[j] == 0) {
        m->threads[j] = id;
        m->threads_n++;
    }
}

static void thread_finished(struct es_model *m, uint32_t id) {
    if (m->threads_cap == 0 || id == 0)
        return;
    size_t j = thread_slot(m, id);
    if (m->threads[j] == 0)
        return;
    /* Backward-shift deletion keeps every probe chain whole. */
    size_t mask = m->threads_cap - 1;
    m->threads[j] = 0;
    m->threads_n--;
    for (size_t k = (j + 1) & mask; m->threads[k]; k = (k + 1) & mask) {
        size_t home = (m->threads[k] * 2654435761u) & mask;
        /* Move the entry at k into the hole at j if its home is not in (j, k]. */
        bool between = j < k ? (home > j && home <= k) : (home > j || home <= k);
        if (!between) {
            m->threads[j] = m->threads[k];
            m->threads[k] = 0;
            j = k;
        }
    }
}

size_t es_model_threads(const struct es_model *m) {
    return m->threads_n;
}

/* ---- GC pauses. */

static unsigned pause_bucket(uint64_t d) {
    if (d < 1000)
        return 0;
    double b = 8 * log2((double)d / 1000.0);
    return b >= ES_MODEL_PAUSE_BUCKETS - 1 ? ES_MODEL_PAUSE_BUCKETS - 1 : (unsigned)b;
}

/* The value a bucket stands for: its geometric middle. */
static uint64_t bucket_value(unsigned b) {
    return b == 0 ? 500 : (uint64_t)(1000.0 * exp2((b + 0.5) / 8.0));
}

/* Count (sign +1) or uncount (-1) a pause that ended at `end` in the
 * histograms: since start, and its second's if that is recent. */
static void pause_count(struct es_model *m, uint64_t end, uint64_t d, int sign) {
    unsigned b = pause_bucket(d);
    m->pause_hist[b] += (uint64_t)(int64_t)sign;
    uint64_t sec = end / NS_PER_S, now = m->now / NS_PER_S;
    if (sec + ES_MODEL_SECONDS <= now)
        return; /* older than every slot */
    struct es_model_second *slot = &m->secs[sec % ES_MODEL_SECONDS];
    if (slot->sec != sec + 1) {
        if (sign < 0 || slot->sec > sec + 1)
            return; /* the slot holds a later second now */
        memset(slot, 0, sizeof *slot);
        slot->sec = sec + 1;
    }
    slot->hist[b] += (uint32_t)sign;
    slot->gc_ns += (uint64_t)(int64_t)sign * d;
    if (sign > 0 && d > slot->max)
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
    hist_pause(m, start, end - start, major);
    tl_at(m, end)->gc_ns += end - start;
    m->pause_n++;
    pause_count(m, end, end - start, +1);
    m->gc_ns += end - start;
    if (end - start > m->pause_max)
        m->pause_max = end - start;
}

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

/* ---- Capabilities. */

static uint64_t cap_busy(const struct es_model *m, unsigned c) {
    const struct es_model_cap *cp = &m->caps[c];
    uint64_t b = cp->busy_ns;
    if (cp->running_since && m->now > cp->running_since)
        b += m->now - cp->running_since;
    return b;
}

/* Once a second of stream time, a snapshot of every capability's busy
 * time, so a share over the last seconds is a difference. */
static void snapshot(struct es_model *m) {
    uint64_t last = m->snap_n ? m->snap_t[(m->snap_n - 1) % 8] : 0;
    if (m->snap_n && m->now / NS_PER_S <= last / NS_PER_S)
        return;
    unsigned k = m->snap_n % 8;
    m->snap_t[k] = m->now;
    for (unsigned c = 0; c < m->ncaps; c++)
        m->snap_busy[k][c] = cap_busy(m, c);
    for (unsigned c = m->ncaps; c < ES_MODEL_MAX_CAPS; c++)
        m->snap_busy[k][c] = 0;
    m->snap_n++;
}

double es_model_cap_share(const struct es_model *m, unsigned cap, uint64_t window_ns) {
    if (cap >= m->ncaps || cap >= ES_MODEL_MAX_CAPS || m->now <= m->first_time)
        return 0;
    uint64_t t0 = m->first_time, b0 = 0;
    if (window_ns) {
        /* The newest snapshot at least `window_ns` old, or the oldest kept. */
        unsigned kept = m->snap_n < 8 ? m->snap_n : 8;
        for (unsigned i = 0; i < kept; i++) {
            unsigned k = (m->snap_n - 1 - i) % 8;
            t0 = m->snap_t[k];
            b0 = m->snap_busy[k][cap];
            if (m->now - t0 >= window_ns)
                break;
        }
    }
    if (m->now <= t0)
        return 0;
    uint64_t b = cap_busy(m, cap);
    double share = b > b0 ? (double)(b - b0) / (double)(m->now - t0) : 0;
    return share > 1 ? 1 : share;
}

static struct es_model_cap *cap_of(struct es_model *m) {
    uint16_t c = m->block_cap == ES_GLOBAL_CAP ? 0 : m->block_cap;
    return c < ES_MODEL_MAX_CAPS ? &m->caps[c] : NULL;
}

static void see_cap(struct es_model *m, unsigned c) {
    if (c < ES_MODEL_MAX_CAPS) {
        m->caps[c].seen = true;
        if (c + 1 > m->ncaps)
            m->ncaps = c + 1;
    }
}

/* ---- Events. */

static void note(struct es_model *m, enum es_model_note_kind kind, uint64_t t, struct rd *r) {
    struct es_model_note *n = &m->notes[m->notes_n % ES_MODEL_NOTES];
    n->time = t;
    n->kind = kind;
    /* The text is the whole payload (no NUL in GHC's). */
    size_t k = r->left < ES_MODEL_NOTE_LEN - 1 ? r->left : ES_MODEL_NOTE_LEN - 1;
    memcpy(n->text, r->p, k);
    n->text[k] = '\0';
    clean(n->text);
    m->notes_n++;
    if (kind == ES_NOTE_MARKER) {
        struct es_model_mark *h = &m->h.marks[m->h.marks_n++ % ES_MODEL_HIST_MARKS];
        h->time = t;
        memcpy(h->text, n->text, sizeof h->text);
    }
}

/* The library's drop notice (cbits/es_notice.c): "eventlog-socket: dropped
 * N chunks (X MiB)". */
static bool drop_notice(struct es_model *m, uint64_t t, const struct rd *r) {
    static const char prefix[] = "eventlog-socket: dropped ";
    char text[128];
    if (r->left >= sizeof text || r->left < sizeof prefix - 1 ||
        memcmp(r->p, prefix, sizeof prefix - 1) != 0)
        return false;
    memcpy(text, r->p, r->left);
    text[r->left] = '\0';
    unsigned long long chunks;
    double mib;
    if (sscanf(text + sizeof prefix - 1, "%llu chunks (%lf MiB)", &chunks, &mib) != 2)
        return false;
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++)
        m->caps[c].after_gap = true;
    m->drops++;
    m->dropped_chunks += chunks;
    m->dropped_mib += mib;
    m->last_drop_time = t;
    m->h.drops[m->h.drops_n++ % ES_MODEL_HIST_DROPS] = (struct es_model_drop){t, chunks, mib};
    return true;
}

/* The library's wait notice (cbits/es_notice.c): "eventlog-socket: the
 * program waited X ms (N times) for lossless clients in the last S s". */
static bool wait_notice(struct es_model *m, uint64_t t, const struct rd *r) {
    static const char prefix[] = "eventlog-socket: the program waited ";
    char text[160];
    if (r->left >= sizeof text || r->left < sizeof prefix - 1 ||
        memcmp(r->p, prefix, sizeof prefix - 1) != 0)
        return false;
    memcpy(text, r->p, r->left);
    text[r->left] = '\0';
    double ms;
    unsigned long long times;
    if (sscanf(text + sizeof prefix - 1, "%lf ms (%llu times)", &ms, &times) != 2 || ms < 0)
        return false;
    m->wait_notices++;
    m->lossless_waits += times;
    m->lossless_wait_ms += ms;
    m->last_wait_time = t;
    return true;
}

/* The library's cost notice (cbits/es_notice.c): "eventlog-socket:
 * streaming cost X ms of CPU in the last S s (RTS threads W, walker K,
 * loop L), M MiB sent". */
static bool cost_notice(struct es_model *m, const struct rd *r) {
    static const char prefix[] = "eventlog-socket: streaming cost ";
    char text[200];
    if (r->left >= sizeof text || r->left < sizeof prefix - 1 ||
        memcmp(r->p, prefix, sizeof prefix - 1) != 0)
        return false;
    memcpy(text, r->p, r->left);
    text[r->left] = '\0';
    double ms, secs, rts, walker, loop, mib;
    if (sscanf(text + sizeof prefix - 1,
               "%lf ms of CPU in the last %lf s (RTS threads %lf, walker %lf, loop %lf), %lf MiB "
               "sent",
               &ms, &secs, &rts, &walker, &loop, &mib) != 6 ||
        !(ms >= 0) || !(secs > 0) || !(mib >= 0))
        return false;
    m->cost_notices++;
    m->cost_ms_per_s = ms / secs;
    m->cost_rts_ms_per_s = rts / secs;
    m->cost_walker_ms_per_s = walker / secs;
    m->cost_loop_ms_per_s = loop / secs;
    m->cost_total_ms += ms;
    m->cost_total_mib += mib;
    return true;
}

double es_model_cost_s_per_gib(const struct es_model *m) {
    if (!(m->cost_total_mib > 0))
        return -1;
    return (m->cost_total_ms / 1000) / (m->cost_total_mib / 1024);
}

static void program_args(struct es_model *m, struct rd *r) {
    rd_n(r, 4); /* capset */
    if (r->bad)
        return;
    /* NUL-separated arguments, argv[0] first. */
    size_t k = 0;
    const uint8_t *p = r->p, *end = r->p + r->left;
    bool first = true;
    while (p < end) {
        const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
        size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
        if (first) {
            const uint8_t *base = p;
            for (size_t i = 0; i < len; i++)
                if (p[i] == '/')
                    base = p + i + 1;
            size_t bl = (size_t)(p + len - base);
            if (bl >= sizeof m->program)
                bl = sizeof m->program - 1;
            memcpy(m->program, base, bl);
            m->program[bl] = '\0';
            clean(m->program);
        }
        if (k + (first ? 0 : 1) + len < sizeof m->args) {
            if (!first)
                m->args[k++] = ' ';
            memcpy(m->args + k, p, len);
            k += len;
        }
        first = false;
        p += len + 1;
    }
    m->args[k] = '\0';
    clean(m->args);
}

static void rts_identifier(struct es_model *m, struct rd *r) {
    rd_n(r, 4); /* capset */
    rd_str(r, m->rts_id, sizeof m->rts_id);
    clean(m->rts_id);
    /* "GHC-9.6.6 rts_thr": the version is what follows "GHC-". */
    const char *v = strstr(m->rts_id, "GHC-");
    m->ghc_version[0] = '\0';
    if (v) {
        v += 4;
        size_t len = strcspn(v, " ");
        if (len >= sizeof m->ghc_version)
            len = sizeof m->ghc_version - 1;
        memcpy(m->ghc_version, v, len);
        m->ghc_version[len] = '\0';
    }
}

static void heap_allocated(struct es_model *m, uint64_t t, uint64_t total) {
    struct es_model_cap *c = cap_of(m);
    if (c == NULL)
        return;
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
        tl_at(m, t)->allocated += (double)delta;
    }
    series_put(&m->s_alloc, t, first ? 0 : (double)delta, true);
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

/* Once per second of stream time (checked without a division, since it
 * runs for every event): the capabilities' snapshot, and the heap series
 * carried through quiet seconds. */
static void second_passed(struct es_model *m) {
    if (m->now < m->next_second)
        return;
    uint64_t sec = m->now / NS_PER_S;
    m->next_second = (sec + 1) * NS_PER_S;
    snapshot(m);
    series_extend(&m->s_size, sec, true);
    series_extend(&m->s_live, sec, true);
    series_extend(&m->s_alloc, sec, false);
}

void es_model_event(struct es_model *m, const struct es_event *ev) {
    struct rd r = {ev->payload, ev->payload_len, false};
    uint64_t t = ev->time;
    if (m->events++ == 0 || t < m->first_time)
        m->first_time = t;
    if (t > m->now)
        m->now = t;

    /* Which capability's block this event is in. */
    if (ev->type == ES_EVENT_BLOCK_MARKER) {
        uint64_t size = rd_n(&r, 4);
        rd_n(&r, 8); /* end time */
        uint16_t cap = (uint16_t)rd_n(&r, 2);
        m->block_cap = r.bad ? ES_GLOBAL_CAP : cap;
        m->block_left = size > ev->len ? size - ev->len : 0;
        if (!r.bad && cap != ES_GLOBAL_CAP)
            see_cap(m, cap);
        second_passed(m);
        return;
    }
    if (m->block_left >= ev->len) {
        m->block_left -= ev->len;
    } else {
        /* Outside any block: no capability is known. */
        m->block_left = 0;
        m->block_cap = ES_GLOBAL_CAP;
    }
    struct es_model_cap *cap = cap_of(m);

    switch (ev->type) {
    case ES_EVENT_CREATE_THREAD: {
        uint32_t id = (uint32_t)rd_n(&r, 4);
        if (!r.bad) {
            thread_alive(m, id);
            m->threads_created++;
        }
        break;
    }
    case ES_EVENT_RUN_THREAD: {
        uint32_t id = (uint32_t)rd_n(&r, 4);
        if (!r.bad)
            thread_alive(m, id);
        if (cap && !r.bad)
            cap->running_since = t ? t : 1;
        break;
    }
    case ES_EVENT_STOP_THREAD: {
        uint32_t id = (uint32_t)rd_n(&r, 4);
        uint16_t status = (uint16_t)rd_n(&r, 2);
        if (r.bad)
            break;
        if (cap && cap->running_since) {
            if (t > cap->running_since)
                cap->busy_ns += t - cap->running_since;
            tl_interval(m, (unsigned)(cap - m->caps), 0, cap->running_since, t);
            cap->running_since = 0;
        }
        if (status == THREAD_FINISHED)
            thread_finished(m, id);
        break;
    }
    case ES_EVENT_GC_START:
        if (cap) {
            cap->gc_since = t ? t : 1;
            cap->gc_stats = false;
            cap->gc_end = 0;
        }
        break;
    case ES_EVENT_GC_END:
        if (cap && cap->gc_since) {
            tl_interval(m, (unsigned)(cap - m->caps), 1, cap->gc_since, t);
            if (cap->gc_stats) {
                gc_pause(m, cap->gc_since, t, cap->gc_major);
            } else {
                cap->gc_start = cap->gc_since;
                cap->gc_end = t;
            }
            cap->gc_since = 0;
            cap->gc_stats = false;
        }
        break;
    case ES_EVENT_GC_STATS_GHC: {
        rd_n(&r, 4); /* capset */
        unsigned gen = (unsigned)rd_n(&r, 2);
        uint64_t copied = rd_n(&r, 8);
        if (r.bad)
            break;
        m->gcs++;
        bool major = gen + 1 >= m->generations && gen > 0;
        if (major)
            m->major_gcs++;
        else
            m->minor_gcs++;
        if (major)
            tl_at(m, t)->major++;
        else
            tl_at(m, t)->minor++;
        m->last_copied = copied;
        /* This capability led the GC: its interval is the pause. */
        if (cap && cap->gc_since) {
            cap->gc_stats = true;
            cap->gc_major = major;
        } else if (cap && cap->gc_end) {
            gc_pause(m, cap->gc_start, cap->gc_end, major);
            cap->gc_end = 0;
        }
        break;
    }
    case ES_EVENT_HEAP_INFO_GHC: {
        rd_n(&r, 4); /* capset */
        unsigned gens = (unsigned)rd_n(&r, 2);
        if (!r.bad && gens > 0)
            m->generations = gens;
        break;
    }
    case ES_EVENT_HEAP_SIZE: {
        rd_n(&r, 4); /* capset */
        uint64_t v = rd_n(&r, 8);
        if (r.bad)
            break;
        m->heap_size = v;
        if (v > m->max_heap_size)
            m->max_heap_size = v;
        struct es_model_bucket *bk = tl_at(m, t);
        bk->heap_size = max_d(bk->heap_size, (double)v);
        series_put(&m->s_size, t, (double)v, false);
        break;
    }
    case ES_EVENT_HEAP_LIVE: {
        rd_n(&r, 4); /* capset */
        uint64_t v = rd_n(&r, 8);
        if (r.bad)
            break;
        m->heap_live = v;
        if (v > m->max_heap_live)
            m->max_heap_live = v;
        struct es_model_bucket *bk = tl_at(m, t);
        bk->heap_live = max_d(bk->heap_live, (double)v);
        series_put(&m->s_live, t, (double)v, false);
        break;
    }
    case ES_EVENT_HEAP_ALLOCATED: {
        rd_n(&r, 4); /* capset */
        uint64_t v = rd_n(&r, 8);
        if (!r.bad)
            heap_allocated(m, t, v);
        break;
    }
    case ES_EVENT_CAP_CREATE: {
        unsigned c = (unsigned)rd_n(&r, 2);
        if (!r.bad)
            see_cap(m, c);
        break;
    }
    case ES_EVENT_RTS_IDENTIFIER:
        rts_identifier(m, &r);
        break;
    case ES_EVENT_PROGRAM_ARGS:
        program_args(m, &r);
        break;
    case ES_EVENT_OSPROCESS_PID: {
        rd_n(&r, 4); /* capset */
        uint32_t pid = (uint32_t)rd_n(&r, 4);
        if (!r.bad)
            m->pid = pid;
        break;
    }
    case ES_EVENT_WALL_CLOCK_TIME: {
        rd_n(&r, 4); /* capset */
        uint64_t sec = rd_n(&r, 8);
        uint32_t nsec = (uint32_t)rd_n(&r, 4);
        /* The wall clock at time t: the RTS started t ns earlier. */
        if (!r.bad) {
            uint64_t wall_ns = sec * NS_PER_S + nsec;
            m->wall_start_s = wall_ns > t ? (wall_ns - t) / NS_PER_S : 0;
        }
        break;
    }
    case ES_EVENT_USER_MARKER:
        note(m, ES_NOTE_MARKER, t, &r);
        break;
    case ES_EVENT_USER_MSG:
        /* A wait notice is also kept as a message: when and how long the
         * program waited is worth reading in the list. A cost notice, once
         * a second, would crowd the list out: it is only counted. */
        if (!drop_notice(m, t, &r) && !cost_notice(m, &r)) {
            wait_notice(m, t, &r);
            note(m, ES_NOTE_MESSAGE, t, &r);
        }
        break;
    case ES_EVENT_HEAP_PROF_BEGIN: {
        rd_n(&r, 1); /* profile id */
        uint64_t interval = rd_n(&r, 8);
        uint32_t breakdown = (uint32_t)rd_n(&r, 4);
        if (r.bad)
            break;
        m->heap_prof = true;
        m->heap_interval_ns = interval;
        m->breakdown = breakdown;
        break;
    }
    case ES_EVENT_HEAP_PROF_COST_CENTRE:
        cost_centre(m, &r);
        break;
    case ES_EVENT_HEAP_PROF_SAMPLE_BEGIN:
    case ES_EVENT_HEAP_BIO_PROF_SAMPLE_BEGIN: {
        uint64_t era = rd_n(&r, 8);
        if (r.bad)
            break;
        m->in_census = true;
        m->building.n = 0;
        m->building.total = 0;
        m->building.time = t;
        m->building.era = era;
        break;
    }
    case ES_EVENT_HEAP_PROF_SAMPLE_STRING: {
        rd_n(&r, 1); /* profile id */
        uint64_t bytes = rd_n(&r, 8);
        char label[512];
        rd_str(&r, label, sizeof label);
        if (!r.bad && m->in_census)
            census_add(m, label, bytes);
        break;
    }
    case ES_EVENT_HEAP_PROF_SAMPLE_COST_CENTRE:
        if (m->in_census)
            sample_cost_centre(m, &r);
        break;
    case ES_EVENT_HEAP_PROF_SAMPLE_END:
        if (m->in_census)
            census_end(m);
        break;
    default:
        break;
    }
    second_passed(m);
}

void es_model_header(struct es_model *m, const struct es_header *hdr) {
    (void)hdr; /* the sizes were used by the reader; nothing else is needed */
    m->block_cap = ES_GLOBAL_CAP;
}

void es_model_extend_to_now(struct es_model *m) {
    if (m->events > 0)
        tl_at(m, m->now);
}

void es_model_end(struct es_model *m) {
    /* Threads still running at the end ran until the last event. */
    for (unsigned c = 0; c < m->ncaps; c++) {
        struct es_model_cap *cp = &m->caps[c];
        if (cp->running_since) {
            if (m->now > cp->running_since)
                cp->busy_ns += m->now - cp->running_since;
            tl_interval(m, c, 0, cp->running_since, m->now);
            cp->running_since = 0;
        }
    }
    m->ended = true;
}

void es_model_init(struct es_model *m) {
    memset(m, 0, sizeof *m);
    m->generations = 2;
    m->block_cap = ES_GLOBAL_CAP;
    m->h.width = ES_MODEL_TL_WIDTH0;
    m->h.pause_group = 1;
    m->h.census_stride = 1;
}

void es_model_destroy(struct es_model *m) {
    for (size_t i = 0; i < m->nlabels; i++)
        free(m->labels[i]);
    free(m->labels);
    free(m->label_hash);
    free(m->prev_bytes);
    free(m->cur.e);
    free(m->prev.e);
    free(m->building.e);
    for (size_t i = 0; i < m->ncc; i++)
        free(m->cc_label[i]);
    free(m->cc_label);
    free(m->threads);
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++)
        free(m->h.cap_ns[c]);
    free(m->h.pauses);
    for (size_t i = 0; i < m->h.ncensuses; i++)
        free(m->h.censuses[i].e);
    free(m->h.censuses);
    memset(m, 0, sizeof *m);
}

void es_model_reset(struct es_model *m) {
    es_model_destroy(m);
    es_model_init(m);
}
