/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's time profile (client/model/costs.c), what `metrics` exports:
 * each cost-centre sample counted for its innermost cost centre, named
 * MODULE.LABEL (the RTS's own by label), MAIN's own time from an empty
 * stack, the top by count; samples cut short left out. */
#include "format/es_event_types.h"
#include "model_events.h"
#include "../unit.h"

#include <stdlib.h>

static void define(struct es_model *m, uint32_t id, const char *label, const char *module,
                   const char *src) {
    struct ev b;
    mk(&b, ES_EVENT_HEAP_PROF_COST_CENTRE, 1);
    u(&b, id, 4);
    str(&b, label, true);
    str(&b, module, true);
    str(&b, src, true);
    u(&b, 0, 1);
    put(m, &b);
}

/* A sample of the stack `ids`, innermost first (as the RTS posts it). */
static void sample(struct es_model *m, uint64_t t, const uint32_t *ids, unsigned depth) {
    struct ev b;
    mk(&b, ES_EVENT_PROF_SAMPLE_COST_CENTRE, t);
    u(&b, 0, 4);
    u(&b, t, 8);
    u(&b, depth, 1);
    for (unsigned i = 0; i < depth; i++)
        u(&b, ids[i], 4);
    put(m, &b);
}

UNIT_CASE(model_costs_by_innermost) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    sample(m, 5, NULL, 0); /* MAIN's, before MAIN is defined */
    define(m, 1, "main", "Main", "Main.hs:3:1-20");
    define(m, 2, "heavy", "Main", "Main.hs:6:1-64");
    define(m, 3, "GC", "GC", "<built-in>");
    define(m, 9, "MAIN", "MAIN", "<built-in>");
    const uint32_t heavy[] = {2, 1}, gc[] = {3}, main_[] = {1};
    for (int i = 0; i < 5; i++)
        sample(m, 10 + i, heavy, 2);
    sample(m, 20, gc, 1);
    sample(m, 21, main_, 1);
    sample(m, 22, NULL, 0);
    sample(m, 23, (const uint32_t[]){77}, 1); /* never defined */
    ok(m->costs.samples == 10, "10 samples: %llu", (unsigned long long)m->costs.samples);
    uint32_t top[4];
    size_t k = es_model_top_costs(m, top, 4);
    char buf[32];
    ok(k == 4 && top[0] == 2 && m->costs.ticks[2] == 5, "Main.heavy first, 5 samples");
    ok(strcmp(es_model_cost_name(m, 2, buf, sizeof buf), "Main.heavy") == 0 &&
           strcmp(es_model_cost_name(m, 3, buf, sizeof buf), "GC") == 0 &&
           strcmp(es_model_cost_name(m, 77, buf, sizeof buf), "cost centre 77") == 0,
       "MODULE.LABEL, the RTS's own by label, an undefined id by number");
    ok(m->costs.ticks[9] == 2 && m->costs.main_early == 0,
       "MAIN's own: the empty stacks before and after its definition (%llu)",
       (unsigned long long)m->costs.ticks[9]);
    ok(m->costs.ticks[1] == 1 && m->costs.ticks[3] == 1, "Main.main and GC once each");
    struct ev b;
    mk(&b, ES_EVENT_PROF_SAMPLE_COST_CENTRE, 30);
    u(&b, 0, 4);
    u(&b, 1, 8);
    u(&b, 3, 1); /* three ids promised, none there */
    put(m, &b);
    ok(m->costs.samples == 10, "a sample cut short is left out");
    es_model_destroy(m);
    free(m);
}

UNIT_CASE(model_costs_recent_window) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    define(m, 1, "old", "Main", "Main.hs:1:1");
    define(m, 2, "new", "Main", "Main.hs:2:1");
    define(m, 3, "IDLE", "IDLE", "<built-in>");
    const uint32_t old[] = {1}, new[] = {2}, idle[] = {3};
    for (uint64_t t = 0; t < 50; t++)
        sample(m, t * 100000000ull, old, 1); /* 0 to 4.9 s */
    for (uint64_t t = 50; t < 200; t++)
        sample(m, t * 100000000ull, t % 3 ? new : idle, 1); /* 5 s to 19.9 s */
    uint32_t ids[4];
    uint64_t counts[4], all, idle_n;
    size_t k = es_model_recent_costs(m, 10000000000ull, ids, counts, 4, &all, &idle_n);
    /* The last 10 s: 9.9 s to 19.9 s, samples 99..199. */
    ok(all == 101, "101 samples in the last 10 s: %llu", (unsigned long long)all);
    ok(idle_n == 34 && k == 1 && ids[0] == 2 && counts[0] == 67,
       "IDLE apart (%llu), new alone (%zu: %llu)", (unsigned long long)idle_n, k,
       (unsigned long long)(k ? counts[0] : 0));
    es_model_destroy(m);
    free(m);
}

UNIT_CASE(model_costs_profiling_rts) {
    ok(es_model_rts_profiled("GHC-9.6.6 rts_thr_p") && es_model_rts_profiled("GHC-9.0.2 rts_p") &&
           es_model_rts_profiled("GHC-9.10.3 rts_thr_p_dyn"),
       "a way with a _p part is a profiling RTS's");
    ok(!es_model_rts_profiled("GHC-9.6.6 rts_thr") &&
           !es_model_rts_profiled("GHC-9.6.6 rts_pdyn") && !es_model_rts_profiled("rts_thr_p") &&
           !es_model_rts_profiled(""),
       "no _p part (or no way after a version): not one");
}
