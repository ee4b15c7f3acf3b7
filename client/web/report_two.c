/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket report RUN_A RUN_B -o OUT.html`: two runs in one
 * self-contained page (client/web/compare.html and compare.js): the table
 * of `compare` (the same join, client/tables/join.h), and charts on shared
 * axes of each run's heap size and live bytes and of the residency of the
 * labels that differ most. The runs are read as `compare` reads them; the
 * page's data is JSON written here from both models' histories (time in
 * seconds since each run's start). Runs on one thread, the loop's. */
#include "tables/join.h"
#include "subcommands.h"
#include "page.h"
#include "http/buf.h"
#include "profile/write.h"
#include "source/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Labels of the table drawn over time, the largest differences first. */
#define TOP_LABELS 5

static void num(struct es_httpbuf *b, double v) {
    if (v < 0)
        ES_HTTPBUF_ADD(b, "null");
    else
        es_httpbuf_printf(b, "%.0f", v);
}

/* A run's facts and its heap size and live bytes over time:
 * [[t, size, live], ...], null where a figure is missing. */
static void run_json(struct es_httpbuf *b, const struct es_join_run *r, char letter) {
    const struct es_model *m = r->model;
    const struct es_model_history *h = &m->h;
    es_httpbuf_printf(b, "{\"letter\":\"%c\",\"name\":", letter);
    es_httpbuf_json_str(b, r->ses.conn->name);
    ES_HTTPBUF_ADD(b, ",\"program\":");
    es_httpbuf_json_str(b, m->program);
    ES_HTTPBUF_ADD(b, ",\"state\":");
    es_httpbuf_json_str(b, r->status == 0 ? "complete" : r->why);
    es_httpbuf_printf(b, ",\"censuses\":%llu,\"end\":%.6f,\"heap\":[",
                      (unsigned long long)m->censuses, (double)m->now / 1e9);
    bool any = false;
    for (unsigned i = 0; i < h->n; i++) {
        const struct es_model_bucket *k = &h->tl[i];
        if (k->heap_size < 0 && k->heap_live < 0)
            continue;
        /* The bucket's middle, but never past the run's end (the last
         * bucket's middle may be: the axes end at the longer run's end). */
        double t = (i + 0.5) * (double)h->width;
        es_httpbuf_printf(b, "%s[%.6f,", any ? "," : "",
                          (t < (double)m->now ? t : (double)m->now) / 1e9);
        num(b, k->heap_size);
        ES_HTTPBUF_ADD(b, ",");
        num(b, k->heap_live);
        ES_HTTPBUF_ADD(b, "]");
        any = true;
    }
    ES_HTTPBUF_ADD(b, "]}");
}

/* The label's residency in each census the run's history kept:
 * [[t, bytes], ...], 0 where a census lacks it. */
static void label_json(struct es_httpbuf *b, const struct es_model *m, const char *label) {
    uint32_t idx = UINT32_MAX;
    for (uint32_t l = 0; l < m->nlabels; l++)
        if (strcmp(es_model_label(m, l), label) == 0) {
            idx = l;
            break;
        }
    ES_HTTPBUF_ADD(b, "[");
    for (size_t i = 0; i < m->h.ncensuses; i++) {
        const struct es_model_census_pt *p = &m->h.censuses[i];
        uint64_t bytes = 0;
        for (uint32_t k = 0; k < p->n && idx != UINT32_MAX; k++)
            if (p->e[k].label == idx)
                bytes = p->e[k].bytes;
        es_httpbuf_printf(b, "%s[%.6f,%llu]", i ? "," : "", (double)p->time / 1e9,
                          (unsigned long long)bytes);
    }
    ES_HTTPBUF_ADD(b, "]");
}

/* The table's rows as `compare --csv` gives them:
 * [label, peak A, peak B, peak B-A, mean A, mean B, mean B-A, note]. */
static void rows_json(struct es_httpbuf *b, const struct es_join_row *rows, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const struct es_join_row *w = &rows[i];
        if (i)
            ES_HTTPBUF_ADD(b, ",");
        ES_HTTPBUF_ADD(b, "[");
        es_httpbuf_json_str(b, w->label);
        es_httpbuf_printf(b, ",%llu,%llu,%lld,%.1f,%.1f,%.1f,", (unsigned long long)w->peak[0],
                          (unsigned long long)w->peak[1],
                          (long long)w->peak[1] - (long long)w->peak[0], w->mean[0], w->mean[1],
                          w->mean[1] - w->mean[0]);
        es_httpbuf_json_str(b, es_join_note(w));
        ES_HTTPBUF_ADD(b, "]");
    }
}

/* Both runs' time profiles: "time":{"samples":[A, B], "rows":[[cost
 * centre, self A %, self B %, self B-A, total A %, total B %, total B-A,
 * note], ...] (compare --time --csv's), "a": TREE, "b": TREE}, the trees as
 * the page's flame graph reads them (client/profile/write.h). */
static void time_json(struct es_httpbuf *b, const struct es_join *cmp,
                      const struct es_join_cost *costs, size_t n) {
    es_httpbuf_printf(b, ",\"time\":{\"samples\":[%llu,%llu],\"rows\":[",
                      (unsigned long long)cmp->run[0].prof->samples,
                      (unsigned long long)cmp->run[1].prof->samples);
    for (size_t i = 0; i < n; i++) {
        const struct es_join_cost *c = &costs[i];
        double pct[4];
        es_join_cost_pcts(cmp, c, pct);
        double sa = pct[0], sb = pct[1], ta = pct[2], tb = pct[3];
        ES_HTTPBUF_ADD(b, "[");
        es_httpbuf_json_str(b, c->name);
        es_httpbuf_printf(b, ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", sa, sb, sb - sa, ta, tb, tb - ta);
        es_httpbuf_json_str(b, es_join_cost_note(c));
        ES_HTTPBUF_ADD(b, "]");
        if (i + 1 < n)
            ES_HTTPBUF_ADD(b, ",");
    }
    ES_HTTPBUF_ADD(b, "],\"a\":");
    if (es_profwrite_tree(b, cmp->run[0].prof, 0) != 0)
        b->oom = true;
    ES_HTTPBUF_ADD(b, ",\"b\":");
    if (es_profwrite_tree(b, cmp->run[1].prof, 0) != 0)
        b->oom = true;
    ES_HTTPBUF_ADD(b, "}");
}

/* Both runs' spans: "spans":[[label, count A, count B, p50 A, p50 B, p99
 * A, p99 B, max A, max B, failed A, failed B], ...] (compare --spans
 * --csv's, in seconds; -1 where a run lacks the label), the largest
 * change of p99 first. */
static void spans_json(struct es_httpbuf *b, const struct es_join_span *sp, size_t n) {
    ES_HTTPBUF_ADD(b, ",\"spans\":[");
    for (size_t i = 0; i < n; i++) {
        const struct es_join_span *s = &sp[i];
        if (i)
            ES_HTTPBUF_ADD(b, ",");
        ES_HTTPBUF_ADD(b, "[");
        es_httpbuf_json_str(b, s->label);
        for (int k = 0; k < 2; k++)
            es_httpbuf_printf(b, ",%llu", (unsigned long long)(s->in[k] ? s->in[k]->count : 0));
        double t[6];
        es_join_span_times(s, t);
        for (int k = 0; k < 6; k++)
            es_httpbuf_printf(b, ",%.9g", t[k]);
        for (int k = 0; k < 2; k++)
            es_httpbuf_printf(b, ",%llu", (unsigned long long)(s->in[k] ? s->in[k]->failed : 0));
        ES_HTTPBUF_ADD(b, "]");
    }
    ES_HTTPBUF_ADD(b, "]");
}

static void page_json(struct es_httpbuf *b, const struct es_join *cmp,
                      const struct es_join_row *rows, size_t n, const struct es_join_cost *costs,
                      size_t ncosts, const struct es_join_span *spans, size_t nspans) {
    ES_HTTPBUF_ADD(b, "{\"runs\":[");
    for (int i = 0; i < 2; i++) {
        if (i)
            ES_HTTPBUF_ADD(b, ",");
        run_json(b, &cmp->run[i], "AB"[i]);
    }
    ES_HTTPBUF_ADD(b, "],\"rows\":[");
    rows_json(b, rows, n);
    ES_HTTPBUF_ADD(b, "],\"top\":[");
    for (size_t i = 0; i < n && i < TOP_LABELS; i++) {
        if (i)
            ES_HTTPBUF_ADD(b, ",");
        ES_HTTPBUF_ADD(b, "{\"label\":");
        es_httpbuf_json_str(b, rows[i].label);
        for (int r = 0; r < 2; r++) {
            es_httpbuf_printf(b, ",\"%c\":", "ab"[r]);
            label_json(b, cmp->run[r].model, rows[i].label);
        }
        ES_HTTPBUF_ADD(b, "}");
    }
    ES_HTTPBUF_ADD(b, "]");
    es_httpbuf_printf(b, ",\"heap\":%s", cmp->have_heap ? "true" : "false");
    if (costs != NULL)
        time_json(b, cmp, costs, ncosts);
    if (spans != NULL)
        spans_json(b, spans, nspans);
    ES_HTTPBUF_ADD(b, "}");
}

/* Write the page; the exit status. */
static int write_two(struct es_join *cmp, const char *out) {
    int status = es_join_check(cmp, ES_JOIN_EITHER);
    if (status != 0)
        return status;
    for (int i = 0; i < 2; i++)
        es_model_extend_to_now(cmp->run[i].model);
    size_t n = 0, ncosts = 0, nspans = 0;
    /* Without heap profiles the heap's rows are none (the page says so). */
    struct es_join_row *rows = cmp->have_heap ? es_join_rows(cmp, &n) : calloc(1, sizeof *rows);
    struct es_join_cost *costs = cmp->have_time ? es_join_costs(cmp, &ncosts) : NULL;
    struct es_join_span *spans = cmp->have_spans ? es_join_spans(cmp, &nspans) : NULL;
    struct es_httpbuf json = {0}, html = {0};
    bool oom =
        rows == NULL || (cmp->have_time && costs == NULL) || (cmp->have_spans && spans == NULL);
    if (!oom) {
        page_json(&json, cmp, rows, n, costs, ncosts, spans, nspans);
        es_webpage_compare(&html, &json);
    }
    oom = oom || json.oom || html.oom;
    FILE *f = oom ? NULL : es_outfile_fopen(out, "wb");
    bool wrote = f != NULL && fwrite(html.p, 1, html.len, f) == html.len;
    if (f != NULL && fclose(f) != 0)
        wrote = false;
    if (!wrote) {
        fprintf(stderr, "eventlog-socket report: cannot write %s: %s\n", out,
                oom ? "out of memory" : strerror(errno));
        status = 2;
    } else {
        status = es_join_warn_partial(cmp, "the report");
        fprintf(stderr, "eventlog-socket report: %s vs %s: %zu labels, %zu cost centres -> %s\n",
                cmp->run[0].ses.conn->name, cmp->run[1].ses.conn->name, n, ncosts, out);
        es_join_say_gaps(cmp);
    }
    free(rows);
    free(spans);
    es_join_costs_free(costs, ncosts);
    es_httpbuf_free(&json);
    es_httpbuf_free(&html);
    return status;
}

int es_report_two(const char *src[2], const char *out, const struct es_conn_options *opt) {
    static struct es_join two;
    es_join_init(&two, "report");
    two.run[0].ses.opt = *opt;
    int status = es_join_read(&two, src);
    if (status < 0)
        status = write_two(&two, out);
    es_join_free(&two);
    return status;
}
