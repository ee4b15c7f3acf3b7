/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "heap profile" (client/model/impl.h): the profile's
 * mode, its censuses (the one being read, the latest and the one before,
 * for trends), their labels interned so that censuses compare by index,
 * and cost-centre names for cost-centre stacks. The modes' names and the
 * info tables that name -hi's labels: client/model/ipe.c. */
#include "impl.h"
#include "history.h"

#include <assert.h>
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
    uint32_t *nq = realloc(m->label_pos, ncap / 2 * sizeof *nq);
    if (nl)
        m->labels = nl;
    if (np)
        m->prev_bytes = np;
    if (nn)
        m->label_len = nn;
    if (nq)
        m->label_pos = nq;
    if (nh == NULL || nl == NULL || np == NULL || nn == NULL || nq == NULL) {
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
    /* Only a plain label is its own text as sent (label_is). */
    size_t len = strlen(copy);
    m->label_len[i] = es_model_label_plain(copy, len) ? (uint32_t)len : ES_MODEL_LABEL_NOT_SENT;
    m->prev_bytes[i] = UINT64_MAX;
    m->label_pos[i] = 0;
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
     * collect many, and a stream may give one twice: a label is one line,
     * its bytes summed, so that every output has one row of it. */
    if (m->label_pos[i] != 0) {
        assert(m->label_pos[i] <= c->n && c->e[m->label_pos[i] - 1].label == i);
        c->e[m->label_pos[i] - 1].bytes += bytes;
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
    m->label_pos[i] = (uint32_t)c->n;
    c->total += bytes;
}

/* The census being built is done with: its labels have no line. */
static void lines_forget(struct es_model *m) {
    for (size_t k = 0; k < m->building.n; k++)
        m->label_pos[m->building.e[k].label] = 0;
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

/* Whether label `i` is what the text at `p` (`n` bytes, up to a NUL if
 * any) is kept as: the guess checked in place, without a copy. A plain
 * label is kept as sent, so the text must be it exactly; a label made
 * plain is never matched here (its label_len is ES_MODEL_LABEL_NOT_SENT),
 * only by es_model_label_clean and intern. */
static bool label_is(const struct es_model *m, uint32_t i, const uint8_t *p, size_t n) {
    size_t len = m->label_len[i];
    return len <= n && memcmp(p, m->labels[i], len) == 0 && (len == n || p[len] == '\0');
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
    lines_forget(m);
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
    free(m->label_pos);
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

/* Cost centre `id`'s name from its label and module as sent: the label,
 * but a CAF's MODULE.CAF, made a label by es_model_label_clean (so that
 * names sent apart stay apart in the stacks). NULL when memory ran out. */
static char *cc_name(const uint8_t *label, size_t llen, const uint8_t *module, size_t mlen,
                     bool caf) {
    char out[ES_MODEL_LABEL_MAX + 1];
    if (!caf) {
        es_model_label_clean(out, label, llen);
        return strdup(out);
    }
    uint8_t *raw = malloc(mlen + 4);
    if (raw == NULL)
        return NULL;
    memcpy(raw, module, mlen);
    memcpy(raw + mlen, ".CAF", 4);
    es_model_label_clean(out, raw, mlen + 4);
    free(raw);
    return strdup(out);
}

/* A cost centre's name as the RTS's .hp writes it in a stack: its label,
 * but a CAF's as MODULE.CAF (rts/ProfHeap.c, fprint_ccs). */
void es_model_on_cost_centre(struct es_model *m, struct es_model_ev *e) {
    struct es_payload *r = &e->r;
    uint32_t id = es_payload_u32(r);
    size_t llen, mlen;
    const uint8_t *label = es_payload_str(r, &llen);
    const uint8_t *module = es_payload_str(r, &mlen);
    if (!es_payload_ok(r) || id >= ES_MODEL_MAX_LABELS)
        return;
    size_t slen;
    const uint8_t *srcloc = es_payload_str(r, &slen);
    es_model_costs_define(m, id, label, llen, module, mlen,
                          es_payload_ok(r) && slen == 10 && memcmp(srcloc, "<built-in>", 10) == 0);
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
    bool caf = llen == 3 && memcmp(label, "CAF", 3) == 0;
    free(m->cc_label[id]);
    m->cc_label[id] = cc_name(label, llen, module, mlen, caf);
    if (m->cc_label[id] == NULL)
        m->oom = true;
    m->cc_caf[id] = caf;
}

void es_model_on_sample_begin(struct es_model *m, struct es_model_ev *e) {
    uint64_t era = es_payload_u64(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    m->in_census = true;
    lines_forget(m);
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
    uint32_t g = m->label_guess;
    if (g < m->nlabels && label_is(m, g, e->r.p, es_payload_left(&e->r))) {
        census_line(m, g, bytes);
        return;
    }
    char label[ES_MODEL_LABEL_MAX + 1];
    size_t len;
    const uint8_t *raw = es_payload_str(&e->r, &len);
    es_model_label_clean(label, raw, len);
    census_add(m, label, bytes);
}

/* Cost centre `id`'s name, or "(id)" in `num` when none came. */
static const char *cc_of(const struct es_model *m, uint32_t id, char num[16]) {
    if (id < m->ncc && m->cc_label[id] != NULL)
        return m->cc_label[id];
    snprintf(num, 16, "(%u)", id);
    return num;
}

/* A cost-centre stack sample: the label is the stack's cost centres,
 * innermost first, as the RTS's .hp names it (rts/ProfHeap.c, fprint_ccs):
 * joined by '/' but none after a CAF's M.CAF, MAIN alone for the empty
 * stack, without the RTS's "(N)" stack number (the eventlog has none) and
 * whole but for label.c's rule (heap.c cuts it to the program's -L length
 * for the .hp). */
void es_model_on_sample_cost_centre(struct es_model *m, struct es_model_ev *e) {
    struct es_payload *r = &e->r;
    if (!m->in_census)
        return;
    es_payload_skip(r, 1); /* profile id */
    uint64_t bytes = es_payload_u64(r);
    unsigned depth = es_payload_u8(r);
    uint32_t ids[256];
    for (unsigned i = 0; i < depth; i++)
        ids[i] = es_payload_u32(r);
    if (!es_payload_ok(r))
        return;
    if (depth == 0) {
        census_add(m, "MAIN", bytes);
        return;
    }
    /* The whole stack, then made a label (cut and renamed when longer
     * than a label may be, so that stacks sharing a long start differ). */
    size_t len = 0;
    for (unsigned i = 0; i < depth; i++) {
        char num[16];
        len += strlen(cc_of(m, ids[i], num)) + 1;
    }
    char small[1024];
    char *text = len <= sizeof small ? small : malloc(len);
    if (text == NULL) {
        m->oom = true;
        return;
    }
    size_t k = 0;
    for (unsigned i = 0; i < depth; i++) {
        char num[16];
        const char *cc = cc_of(m, ids[i], num);
        size_t n = strlen(cc);
        if (i > 0 && !(ids[i - 1] < m->ncc && m->cc_caf[ids[i - 1]]))
            text[k++] = '/';
        memcpy(text + k, cc, n);
        k += n;
    }
    char label[ES_MODEL_LABEL_MAX + 1];
    es_model_label_clean(label, (const uint8_t *)text, k);
    if (text != small)
        free(text);
    census_add(m, label, bytes);
}

void es_model_on_sample_end(struct es_model *m, struct es_model_ev *e) {
    (void)e;
    if (m->in_census)
        census_end(m);
}
