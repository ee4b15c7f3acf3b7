/* SPDX-License-Identifier: BSD-3-Clause */
/* The sparks part of the web view's JSON (client/web/sparks.h). */
#include "sparks.h"

/* Capabilities whose counters over time are written, and points per
 * capability at most (every k-th point beyond: the counters are running
 * totals, so rates between the points written stay exact). */
#define WEB_SPARK_CAPS   64
#define WEB_SPARK_POINTS 128

static void counts(struct es_httpbuf *out, const uint64_t *v, int n) {
    ES_HTTPBUF_ADD(out, "[");
    for (int k = 0; k < n; k++)
        es_httpbuf_printf(out, "%s%llu", k ? "," : "", (unsigned long long)v[k]);
    ES_HTTPBUF_ADD(out, "]");
}

static void points(struct es_httpbuf *out, const struct es_model *m, unsigned c) {
    const struct es_model_spark_pt *p;
    size_t n = c < WEB_SPARK_CAPS ? es_model_spark_points(m, c, &p) : 0;
    size_t step = (n + WEB_SPARK_POINTS - 1) / WEB_SPARK_POINTS;
    ES_HTTPBUF_ADD(out, ",\"pts\":[");
    bool any = false;
    /* From the newest backwards, so the latest point is always written. */
    size_t first = n == 0 ? 0 : (n - 1) % (step ? step : 1);
    for (size_t i = first; i < n; i += step) {
        es_httpbuf_printf(out, "%s[%llu,", any ? "," : "", (unsigned long long)p[i].time);
        for (int k = 0; k < ES_SPARK_KINDS; k++)
            es_httpbuf_printf(out, "%llu,", (unsigned long long)p[i].v[k]);
        es_httpbuf_printf(out, "%llu]", (unsigned long long)p[i].pool);
        any = true;
    }
    ES_HTTPBUF_ADD(out, "]");
}

/* What changes whenever anything written changes: every counters event
 * adds a point (or halves them: the generation), every spark event a
 * count; the capabilities seen add rows. */
static uint64_t signature(const struct es_model *m, const uint64_t e[ES_SPARK_EV_KINDS]) {
    uint64_t s = m->spark_generation * 1000003u + m->ncaps * 7919u + m->sparks_seen + 1;
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS && c < m->ncaps; c++)
        s = s * 31 + m->spark_npts[c];
    for (int k = 0; k < ES_SPARK_EV_KINDS; k++)
        s = s * 31 + e[k];
    return s;
}

void es_websparks_json(struct es_httpbuf *out, const struct es_model *m, bool whole,
                       uint64_t *sig) {
    uint64_t v[ES_SPARK_KINDS], e[ES_SPARK_EV_KINDS];
    es_model_spark_events(m, e);
    uint64_t now = signature(m, e);
    if (!whole && now == *sig)
        return;
    *sig = now;
    es_model_sparks(m, v);
    es_httpbuf_printf(out,
                      ",\"sparks\":{\"seen\":%s,\"any\":%s,\"events\":%s,\"pool\":%llu,"
                      "\"rate\":%.1f,\"v\":",
                      m->sparks_seen ? "true" : "false", es_model_has_sparks(m) ? "true" : "false",
                      m->spark_events_seen ? "true" : "false",
                      (unsigned long long)es_model_spark_pool(m, ES_MODEL_MAX_CAPS),
                      es_model_spark_rate(m, ES_MODEL_MAX_CAPS));
    counts(out, v, ES_SPARK_KINDS);
    ES_HTTPBUF_ADD(out, ",\"ev\":");
    counts(out, e, ES_SPARK_EV_KINDS);
    ES_HTTPBUF_ADD(out, ",\"caps\":[");
    unsigned n = m->ncaps;
    if (n > ES_MODEL_MAX_CAPS)
        n = ES_MODEL_MAX_CAPS;
    for (unsigned c = 0; m->sparks_seen && c < n; c++) {
        es_model_cap_sparks(m, c, v);
        es_httpbuf_printf(out, "%s{\"pool\":%llu,\"rate\":%.1f,\"v\":", c ? "," : "",
                          (unsigned long long)es_model_spark_pool(m, c), es_model_spark_rate(m, c));
        counts(out, v, ES_SPARK_KINDS);
        ES_HTTPBUF_ADD(out, ",\"ev\":");
        counts(out, m->caps[c].spark_ev, ES_SPARK_EV_KINDS);
        points(out, m, c);
        ES_HTTPBUF_ADD(out, "}");
    }
    ES_HTTPBUF_ADD(out, "]}");
}
