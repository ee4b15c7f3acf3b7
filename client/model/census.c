/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "heap profile" (client/model/impl.h): the profile's
 * mode, its censuses (the one being read, the latest and the one before,
 * for trends), their labels interned so that censuses compare by index,
 * and cost-centre names for cost-centre stacks. The modes' names and the
 * info tables that name -hi's labels: client/model/ipe.c. */
#include "impl.h"
#include "history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Labels. */

/* Eight bytes a step (a byte loop was most of a census's cost). */
static uint32_t hash_str(const char *s) {
    size_t n = strlen(s);
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (; n >= 8; n -= 8, s += 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ h >> 32);
}

static int labels_grow(struct es_model *m) {
    size_t ncap = m->labels_hash_cap ? m->labels_hash_cap * 2 : 1024;
    uint32_t *nh = calloc(ncap, sizeof *nh);
    char **nl = realloc(m->labels, ncap / 2 * sizeof *nl);
    uint64_t *np = realloc(m->prev_bytes, ncap / 2 * sizeof *np);
    uint32_t *nn = realloc(m->label_len, ncap / 2 * sizeof *nn);
    if (nl)
        m->labels = nl;
    if (np)
        m->prev_bytes = np;
    if (nn)
        m->label_len = nn;
    if (nh == NULL || nl == NULL || np == NULL || nn == NULL) {
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

uint32_t es_model_intern(struct es_model *m, const char *s) {
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
    if (m->nlabels + 1 >= ES_MODEL_MAX_LABELS && strcmp(s, ES_MODEL_OTHER_LABEL) != 0)
        return es_model_intern(m, ES_MODEL_OTHER_LABEL);
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
    m->label_len[i] = (uint32_t)strlen(copy);
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

/* ---- Censuses. */

/* Add line `i` (a label's number) to the census being built. */
static void census_line(struct es_model *m, uint32_t i, uint64_t bytes) {
    m->label_guess = i + 1;
    struct es_model_census *c = &m->building;
    /* The RTS gives every label once per census, but "(other labels)" may
     * collect many: add to an existing line of it. */
    if (m->labels[i][0] == ES_MODEL_OTHER_LABEL[0] &&
        strcmp(m->labels[i], ES_MODEL_OTHER_LABEL) == 0)
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

/* The RTS lists a census's labels in much the same order each time, and
 * labels are numbered as first seen: the one after the last is tried
 * first, without hashing (most lines of a census, most of the cost of a
 * -hT stream's parse before, BENCHMARKS.md). */
static void census_add(struct es_model *m, const char *label, uint64_t bytes) {
    uint32_t g = m->label_guess;
    uint32_t i = g < m->nlabels && strcmp(m->labels[g], label) == 0 ? g : es_model_intern(m, label);
    if (i != UINT32_MAX)
        census_line(m, i, bytes);
}

/* Whether label `i` is the text at `p` (`n` bytes, up to a NUL if any,
 * cut as es_payload_text cuts it into a buffer of `size`): the guess
 * checked in place, without a copy. A label holds no NUL: its end is the
 * text's. */
static bool label_is(const struct es_model *m, uint32_t i, const uint8_t *p, size_t n,
                     size_t size) {
    size_t len = m->label_len[i];
    return len <= n && memcmp(p, m->labels[i], len) == 0 &&
           (len == n || p[len] == '\0' || len == size - 1);
}

/* Census `c` as a history point: its largest labels (the rest summed under
 * "(other labels)"), bytes exact. False when memory ran out. */
static bool census_point(struct es_model *m, const struct es_model_census *c,
                         struct es_model_census_pt *pt) {
    size_t rows = c->n;
    if (rows > ES_MODEL_HIST_CENSUS_ROWS)
        rows = ES_MODEL_HIST_CENSUS_ROWS;
    *pt = (struct es_model_census_pt){c->time, c->total, 0,
                                      malloc((rows ? rows : 1) * sizeof *pt->e)};
    size_t *order = c->n > rows ? malloc(c->n * sizeof *order) : NULL;
    if (pt->e == NULL || (c->n > rows && order == NULL)) {
        free(pt->e);
        free(order);
        return false;
    }
    if (order == NULL) {
        memcpy(pt->e, c->e, rows * sizeof *pt->e);
        pt->n = (uint32_t)rows;
        return true;
    }
    /* The largest rows - 1 labels, and the rest as one. The ranking
     * allocates too: without it there is no point. */
    if (es_model_top_entries(m, order, c->n) != c->n) {
        free(pt->e);
        free(order);
        return false;
    }
    uint64_t rest = c->total;
    for (size_t i = 0; i + 1 < rows; i++) {
        pt->e[i] = c->e[order[i]];
        rest -= pt->e[i].bytes;
    }
    uint32_t other = es_model_intern(m, ES_MODEL_OTHER_LABEL);
    pt->n = (uint32_t)rows - 1;
    if (other != UINT32_MAX)
        pt->e[pt->n++] = (struct es_model_entry){other, rest};
    free(order);
    return true;
}

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
    struct es_model_census_pt pt;
    if (!es_model_hist_census_due(m))
        return;
    if (census_point(m, &m->cur, &pt))
        es_model_hist_census(m, &pt);
    else
        m->oom = true;
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

void es_model_census_free(struct es_model *m) {
    for (size_t i = 0; i < m->nlabels; i++)
        free(m->labels[i]);
    free(m->labels);
    free(m->label_len);
    free(m->label_hash);
    free(m->prev_bytes);
    free(m->cur.e);
    free(m->prev.e);
    free(m->building.e);
    for (size_t i = 0; i < m->ncc; i++)
        free(m->cc_label[i]);
    free(m->cc_label);
    free(m->cc_caf);
}

/* ---- Events. */

void es_model_on_heap_prof_begin(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 1); /* profile id */
    uint64_t interval = es_payload_u64(&e->r);
    uint32_t breakdown = es_payload_u32(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    m->heap_prof = true;
    m->heap_interval_ns = interval;
    m->breakdown = breakdown;
}

/* A cost centre's name as the RTS's .hp writes it in a stack: its label,
 * but a CAF's as MODULE.CAF (rts/ProfHeap.c, fprint_ccs). */
void es_model_on_cost_centre(struct es_model *m, struct es_model_ev *e) {
    struct es_payload *r = &e->r;
    uint32_t id = es_payload_u32(r);
    char label[256], module[256];
    es_payload_text(r, label, sizeof label);
    es_payload_text(r, module, sizeof module);
    if (!es_payload_ok(r) || id >= ES_MODEL_MAX_LABELS)
        return;
    if (id >= m->ncc) {
        size_t n = id + 1 > m->ncc * 2 ? id + 1 : m->ncc * 2;
        char **nc = realloc(m->cc_label, n * sizeof *nc);
        if (nc)
            m->cc_label = nc;
        bool *nf = nc ? realloc(m->cc_caf, n * sizeof *nf) : NULL;
        if (nf == NULL) {
            m->oom = true;
            return;
        }
        memset(nc + m->ncc, 0, (n - m->ncc) * sizeof *nc);
        memset(nf + m->ncc, 0, (n - m->ncc) * sizeof *nf);
        m->cc_caf = nf;
        m->ncc = n;
    }
    bool caf = strcmp(label, "CAF") == 0;
    if (caf) {
        es_utf8_cut(module, 200);
        snprintf(label, sizeof label, "%.200s.CAF", module);
    }
    free(m->cc_label[id]);
    m->cc_label[id] = strdup(label);
    m->cc_caf[id] = caf;
}

void es_model_on_sample_begin(struct es_model *m, struct es_model_ev *e) {
    uint64_t era = es_payload_u64(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    m->in_census = true;
    m->building.n = 0;
    m->building.total = 0;
    m->building.time = e->t;
    m->building.era = era;
}

void es_model_on_sample_string(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 1); /* profile id */
    uint64_t bytes = es_payload_u64(&e->r);
    if (!es_payload_ok(&e->r) || !m->in_census)
        return;
    char label[512];
    uint32_t g = m->label_guess;
    if (g < m->nlabels && label_is(m, g, e->r.p, es_payload_left(&e->r), sizeof label)) {
        census_line(m, g, bytes);
        return;
    }
    es_payload_text(&e->r, label, sizeof label);
    census_add(m, label, bytes);
}

/* A cost-centre stack sample: the label is the stack's cost centres,
 * innermost first, as the RTS's .hp names it (rts/ProfHeap.c, fprint_ccs):
 * joined by '/' but none after a CAF's M.CAF, MAIN alone for the empty
 * stack, without the RTS's "(N)" stack number (the eventlog has none) and
 * whole (heap.c cuts it to the program's -L length for the .hp). */
void es_model_on_sample_cost_centre(struct es_model *m, struct es_model_ev *e) {
    struct es_payload *r = &e->r;
    if (!m->in_census)
        return;
    es_payload_skip(r, 1); /* profile id */
    uint64_t bytes = es_payload_u64(r);
    unsigned depth = es_payload_u8(r);
    char label[512];
    size_t k = 0;
    label[0] = '\0';
    bool sep = false;
    for (unsigned i = 0; i < depth && es_payload_ok(r); i++) {
        uint32_t id = es_payload_u32(r);
        const char *cc = id < m->ncc && m->cc_label[id] ? m->cc_label[id] : NULL;
        char num[16];
        if (cc == NULL) {
            snprintf(num, sizeof num, "(%u)", id);
            cc = num;
        }
        int w = snprintf(label + k, sizeof label - k, "%s%s", sep ? "/" : "", cc);
        sep = !(id < m->ncc && m->cc_caf[id]);
        if (w < 0 || (size_t)w >= sizeof label - k) {
            es_utf8_cut(label, sizeof label - 1); /* between characters */
            break;
        }
        k += (size_t)w;
    }
    if (!es_payload_ok(r))
        return;
    census_add(m, depth ? label : "MAIN", bytes);
}

void es_model_on_sample_end(struct es_model *m, struct es_model_ev *e) {
    (void)e;
    if (m->in_census)
        census_end(m);
}
