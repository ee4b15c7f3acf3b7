/* SPDX-License-Identifier: BSD-3-Clause */
/* The time profile's counts (model.h, "Time profile"): each cost-centre
 * sample (PROF_SAMPLE_COST_CENTRE) counted for its innermost cost centre,
 * named as `profile` names frames: MODULE.LABEL, the RTS's own by label.
 * Bounded by the program's cost centres: a counter per id. */
#include "impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for cost centre `id` in the counts. False when memory ran out. */
static bool reserve(struct es_model *m, uint32_t id) {
    struct es_model_costs *k = &m->costs;
    if (id < k->n)
        return true;
    size_t n = id + 1 > k->n * 2 ? id + 1 : k->n * 2;
    char **nf = realloc(k->frame, n * sizeof *nf);
    if (nf)
        k->frame = nf;
    uint64_t *nt = nf ? realloc(k->ticks, n * sizeof *nt) : NULL;
    if (nt)
        k->ticks = nt;
    bool *nb = nt ? realloc(k->builtin, n * sizeof *nb) : NULL;
    if (nb == NULL) {
        m->oom = true;
        return false;
    }
    memset(nf + k->n, 0, (n - k->n) * sizeof *nf);
    memset(nt + k->n, 0, (n - k->n) * sizeof *nt);
    memset(nb + k->n, 0, (n - k->n) * sizeof *nb);
    k->builtin = nb;
    k->n = n;
    return true;
}

void es_model_costs_define(struct es_model *m, uint32_t id, const uint8_t *label, size_t llen,
                           const uint8_t *module, size_t mlen, bool builtin) {
    if (id >= ES_MODEL_MAX_LABELS || !reserve(m, id))
        return;
    char raw[2 * ES_MODEL_LABEL_MAX + 2], out[ES_MODEL_LABEL_MAX + 1];
    /* Each part at most a label's length: the name is cut as a label is. */
    int ll = (int)(llen < ES_MODEL_LABEL_MAX ? llen : ES_MODEL_LABEL_MAX);
    int ml = (int)(mlen < ES_MODEL_LABEL_MAX ? mlen : ES_MODEL_LABEL_MAX);
    int n = builtin ? snprintf(raw, sizeof raw, "%.*s", ll, (const char *)label)
                    : snprintf(raw, sizeof raw, "%.*s.%.*s", ml, (const char *)module, ll,
                               (const char *)label);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
    es_model_label_clean(out, (const uint8_t *)raw, len);
    /* The RTS's MAIN is the root no sample's stack names: a stack of none
     * is MAIN's own time. */
    if (builtin && llen == 4 && memcmp(label, "MAIN", 4) == 0) {
        m->costs.main_id = id;
        m->costs.have_main = true;
        m->costs.ticks[id] += m->costs.main_early;
        m->costs.main_early = 0;
    }
    m->costs.builtin[id] = builtin;
    free(m->costs.frame[id]);
    m->costs.frame[id] = strdup(out);
    if (m->costs.frame[id] == NULL)
        m->oom = true;
}

/* The latest samples, for es_model_recent_costs. */
static void remember(struct es_model *m, uint64_t t, uint32_t id) {
    struct es_model_costs *k = &m->costs;
    if (m->figures_only)
        return;
    if (k->recent == NULL &&
        (k->recent = malloc(ES_MODEL_RECENT_COSTS * sizeof *k->recent)) == NULL) {
        m->oom = true;
        return;
    }
    k->recent[k->recent_next] = (struct es_model_recent_cost){t, id};
    k->recent_next = (k->recent_next + 1) % ES_MODEL_RECENT_COSTS;
    if (k->recent_n < ES_MODEL_RECENT_COSTS)
        k->recent_n++;
}

void es_model_on_prof_sample(struct es_model *m, struct es_model_ev *e) {
    struct es_payload *r = &e->r;
    es_payload_skip(r, 12); /* the capability, the tick count */
    uint8_t depth = es_payload_u8(r);
    uint32_t inner = depth ? es_payload_u32(r) : 0;
    if (!es_payload_ok(r))
        return;
    struct es_model_costs *k = &m->costs;
    k->samples++;
    if (depth == 0)
        inner = k->have_main ? k->main_id : UINT32_MAX;
    if (inner == UINT32_MAX)
        k->main_early++;
    else if (inner < ES_MODEL_MAX_LABELS && reserve(m, inner))
        k->ticks[inner]++;
    else {
        k->unknown++;
        return;
    }
    remember(m, e->t, inner);
}

/* Whether `id` is the RTS's IDLE. */
static bool is_idle(const struct es_model *m, uint32_t id) {
    return id < m->costs.n && m->costs.frame[id] != NULL &&
           strcmp(m->costs.frame[id], "IDLE") == 0 && m->costs.builtin != NULL &&
           m->costs.builtin[id];
}

size_t es_model_recent_costs(const struct es_model *m, uint64_t window_ns, uint32_t *ids,
                             uint64_t *counts, size_t n, uint64_t *all, uint64_t *idle) {
    const struct es_model_costs *k = &m->costs;
    *all = *idle = 0;
    /* Counted by id; MAIN before its id is known in the last slot. */
    uint64_t *by = calloc(k->n + 1, sizeof *by);
    if (by == NULL || k->recent == NULL) {
        free(by);
        return 0;
    }
    uint64_t from = m->now > window_ns ? m->now - window_ns : 0;
    for (size_t i = 0; i < k->recent_n; i++) {
        const struct es_model_recent_cost *c =
            &k->recent[(k->recent_next + ES_MODEL_RECENT_COSTS - 1 - i) % ES_MODEL_RECENT_COSTS];
        if (c->t < from)
            continue;
        (*all)++;
        if (is_idle(m, c->id))
            (*idle)++;
        else
            by[c->id < k->n ? c->id : k->n]++;
    }
    size_t shown = 0;
    for (size_t j = 0; j < n; j++) { /* n is a handful: pick the largest n times */
        size_t best = SIZE_MAX;
        for (size_t i = 0; i <= k->n; i++)
            if (by[i] > 0 && (best == SIZE_MAX || by[i] > by[best]))
                best = i;
        if (best == SIZE_MAX)
            break;
        ids[shown] = best < k->n ? (uint32_t)best : UINT32_MAX;
        counts[shown++] = by[best];
        by[best] = 0;
    }
    free(by);
    return shown;
}

void es_model_costs_free(struct es_model *m) {
    for (size_t i = 0; i < m->costs.n; i++)
        free(m->costs.frame[i]);
    free(m->costs.frame);
    free(m->costs.ticks);
    free(m->costs.builtin);
    free(m->costs.recent);
    memset(&m->costs, 0, sizeof m->costs);
}

static const struct es_model *sort_model; /* for cmp_ticks: the one thread's */

static int cmp_ticks(const void *a, const void *b) {
    uint64_t x = sort_model->costs.ticks[*(const uint32_t *)a];
    uint64_t y = sort_model->costs.ticks[*(const uint32_t *)b];
    if (x != y)
        return x > y ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

size_t es_model_top_costs(const struct es_model *m, uint32_t *out, size_t n) {
    const struct es_model_costs *k = &m->costs;
    size_t have = 0;
    for (size_t i = 0; i < k->n; i++)
        have += k->ticks[i] > 0;
    uint32_t *all = malloc((have ? have : 1) * sizeof *all);
    if (all == NULL)
        return 0;
    size_t j = 0;
    for (size_t i = 0; i < k->n; i++)
        if (k->ticks[i] > 0)
            all[j++] = (uint32_t)i;
    sort_model = m;
    qsort(all, have, sizeof *all, cmp_ticks);
    sort_model = NULL;
    size_t shown = have < n ? have : n;
    memcpy(out, all, shown * sizeof *out);
    free(all);
    return shown;
}

const char *es_model_cost_name(const struct es_model *m, uint32_t id, char *buf, size_t size) {
    if (id == UINT32_MAX)
        return "MAIN";
    if (id < m->costs.n && m->costs.frame[id] != NULL)
        return m->costs.frame[id];
    snprintf(buf, size, "cost centre %u", (unsigned)id);
    return buf;
}
