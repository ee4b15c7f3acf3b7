/* The model's family "sparks" (client/model_impl.h): SPARK_COUNTERS, which
 * each capability posts with its running totals (at GCs and at the end,
 * when the RTS samples sparks: +RTS -l's default `p` class). The model
 * keeps every capability's latest figures; their sum is the program's. */
#include "model_impl.h"

void es_model_on_spark_counters(struct es_model *m, struct es_model_ev *e) {
    uint64_t v[ES_SPARK_KINDS];
    /* created, dud, overflowed, converted, gc'd, fizzled, then the sparks
     * still in the pool (not kept). */
    for (int i = 0; i < ES_SPARK_KINDS; i++)
        v[i] = rd_n(&e->r, 8);
    if (e->r.bad || e->cap == NULL)
        return;
    memcpy(e->cap->sparks, v, sizeof v);
    m->sparks_seen = true;
}

void es_model_sparks(const struct es_model *m, uint64_t out[ES_SPARK_KINDS]) {
    for (int k = 0; k < ES_SPARK_KINDS; k++)
        out[k] = 0;
    unsigned n = m->ncaps < ES_MODEL_MAX_CAPS ? m->ncaps : ES_MODEL_MAX_CAPS;
    for (unsigned c = 0; c < n; c++)
        for (int k = 0; k < ES_SPARK_KINDS; k++)
            out[k] += m->caps[c].sparks[k];
}
