/* SPDX-License-Identifier: BSD-3-Clause */
#include "text.h"

#include "format/es_classes.h"
#include "format/es_utf8.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a family's writer gets: the target and its common labels, already
 * escaped ("program=\"x\",pid=\"1\",source=\"unix:/a\""). */
struct ctx {
    struct es_httpbuf *b;
    const struct es_promtext_target *t;
    const struct es_model *m;
    const char *lab;
    unsigned top;
};

/* A label value as the format wants it: \\, \" and \n escaped, and valid
 * UTF-8 (cbits/format/es_utf8.h: a byte that starts no character as U+FFFD), or
 * Prometheus rejects the whole scrape; any other control character (C0,
 * DEL, C1), which the format has no escape for, as U+FFFD too. The model's
 * census labels are plain already (model.h, "Census labels"); a source's
 * path and a program's name from /proc may not be. */
static void add_escaped(struct es_httpbuf *b, const char *s) {
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = p[i] < 0x80 ? 1 : es_utf8_len(p + i, n - i);
        bool control = p[i] < 0x20 || p[i] == 0x7f || (k == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0);
        if (p[i] == '\\')
            ES_HTTPBUF_ADD(b, "\\\\");
        else if (p[i] == '"')
            ES_HTTPBUF_ADD(b, "\\\"");
        else if (p[i] == '\n')
            ES_HTTPBUF_ADD(b, "\\n");
        else if (k == 0 || control)
            ES_HTTPBUF_ADD(b, ES_UTF8_REPLACEMENT);
        else
            es_httpbuf_add(b, s + i, k);
        i += k ? k : 1;
    }
}

static void sample_u(struct ctx *c, const char *name, uint64_t v) {
    es_httpbuf_printf(c->b, "%s{%s} %" PRIu64 "\n", name, c->lab, v);
}

static void sample_d(struct ctx *c, const char *name, double v) {
    es_httpbuf_printf(c->b, "%s{%s} %.9g\n", name, c->lab, v);
}

/* A sample with one more label. */
static void sample_l(struct ctx *c, const char *name, const char *key, const char *val, double v) {
    es_httpbuf_printf(c->b, "%s{%s,%s=\"", name, c->lab, key);
    add_escaped(c->b, val);
    es_httpbuf_printf(c->b, "\"} %.17g\n", v);
}

/* ---- The library's side: the connection and the notices. */

static void f_connected(struct ctx *c) {
    sample_u(c, "eventlog_socket_connected", c->t->connected);
}

static void f_received(struct ctx *c) {
    sample_u(c, "eventlog_socket_received_bytes_total", c->t->received_bytes);
}

static void f_dropped(struct ctx *c) {
    sample_d(c, "eventlog_socket_dropped_bytes_total", c->m->dropped_mib * 1048576.0);
}

static void f_lossless(struct ctx *c) {
    sample_d(c, "eventlog_socket_lossless_wait_seconds_total", c->m->lossless_wait_ms / 1e3);
}

static void f_cost(struct ctx *c) {
    if (c->m->cost_notices > 0)
        sample_d(c, "eventlog_socket_cost_cpu_seconds_total", c->m->cost_total_ms / 1e3);
}

static void f_cost_sent(struct ctx *c) {
    if (c->m->cost_notices > 0)
        sample_d(c, "eventlog_socket_cost_sent_bytes_total", c->m->cost_total_mib * 1048576.0);
}

/* ---- Who the program is, and what its eventlog lacks. */

static void f_info(struct ctx *c) {
    const struct es_model *m = c->m;
    /* GHC 9.0 sends RTS_IDENTIFIER at exit (and never, started from
     * Haskell): its header says 9.0 at once. */
    if (m->rts_id[0] == '\0' && !m->no_flush)
        return;
    es_httpbuf_printf(c->b, "ghc_program_info{%s,rts=\"", c->lab);
    add_escaped(c->b, m->rts_id);
    ES_HTTPBUF_ADD(c->b, "\",ghc_version=\"");
    add_escaped(c->b, m->ghc_version[0] ? m->ghc_version : "9.0");
    ES_HTTPBUF_ADD(c->b, "\"} 1\n");
}

/* Whether the program's eventlog has no heap profile. Censuses say it has
 * (a start from Haskell streams no HEAP_PROF_BEGIN); GHC 9.0 sends both
 * only at exit, so until then its process is asked, and if that cannot
 * tell, nothing is claimed. */
static bool lacks_heap_profile(const struct ctx *c) {
    const struct es_model *m = c->m;
    if (m->heap_prof || m->censuses > 0)
        return false;
    if (m->no_flush && !m->ended)
        return c->t->heap_mode_proc == 0;
    return true;
}

static void f_lacking(struct ctx *c) {
    const struct es_model *m = c->m;
    /* A class switched off while the program runs: "scheduler_events". */
    for (unsigned bit = 1; bit <= ES_CLASSES_ALL; bit <<= 1) {
        if (!es_model_class_switched_off(m, bit))
            continue;
        char what[48];
        snprintf(what, sizeof what, "%s_events", es_classes_name(bit));
        for (char *p = what; *p; p++)
            *p = *p == '-' ? '_' : *p;
        sample_l(c, "ghc_eventlog_lacking_info", "lacks", what, 1);
    }
    if (lacks_heap_profile(c))
        sample_l(c, "ghc_eventlog_lacking_info", "lacks", "heap_profile", 1);
    /* Known from the header, as top and control know it. */
    if (m->no_flush)
        sample_l(c, "ghc_eventlog_lacking_info", "lacks", "live", 1);
    if (!m->sparks_seen && m->gcs > 0)
        sample_l(c, "ghc_eventlog_lacking_info", "lacks", "sparks", 1);
}

/* ---- Heap and GC. */

static void f_heap_size(struct ctx *c) {
    if (c->m->max_heap_size > 0 && !es_model_class_switched_off(c->m, EVENTLOG_SOCKET_EVENTS_GC))
        sample_u(c, "ghc_heap_size_bytes", c->m->heap_size);
}

static void f_heap_live(struct ctx *c) {
    if (c->m->max_heap_live > 0 && !es_model_class_switched_off(c->m, EVENTLOG_SOCKET_EVENTS_GC))
        sample_u(c, "ghc_heap_live_bytes", c->m->heap_live);
}

static void f_allocated(struct ctx *c) {
    if (c->m->allocated > 0)
        sample_u(c, "ghc_allocated_bytes_total", c->m->allocated);
}

static void f_collections(struct ctx *c) {
    const struct es_model *m = c->m;
    unsigned gens = m->generations;
    if (gens > ES_MODEL_MAX_GENS)
        gens = ES_MODEL_MAX_GENS;
    for (unsigned g = 0; g < gens; g++) {
        char gen[16];
        snprintf(gen, sizeof gen, "%u", g);
        sample_l(c, "ghc_gc_collections_total", "generation", gen, (double)m->gen_gcs[g]);
    }
}

/* Bucket bounds of the pause histogram: powers of 4 microseconds from
 * 16 us to about 4 s. They fall on the model's bucket edges (eight per
 * power of two from 1 us: bucket 8k starts at 2^k us), so the counts are
 * exact. */
static void f_pauses(struct ctx *c) {
    const struct es_model *m = c->m;
    const char *name = "ghc_gc_pause_seconds_bucket";
    uint64_t cum = 0;
    unsigned b = 0;
    for (unsigned k = 4; k <= 22; k += 2) {
        for (; b < 8 * k && b < ES_MODEL_PAUSE_BUCKETS; b++)
            cum += m->pause_hist[b];
        es_httpbuf_printf(c->b, "%s{%s,le=\"%.9g\"} %" PRIu64 "\n", name, c->lab,
                          (double)(1ull << k) / 1e6, cum);
    }
    es_httpbuf_printf(c->b, "%s{%s,le=\"+Inf\"} %" PRIu64 "\n", name, c->lab, m->pause_n);
    sample_d(c, "ghc_gc_pause_seconds_sum", (double)m->gc_ns / 1e9);
    sample_u(c, "ghc_gc_pause_seconds_count", m->pause_n);
}

static void f_gc_seconds(struct ctx *c) {
    sample_d(c, "ghc_gc_seconds_total", (double)c->m->gc_ns / 1e9);
}

/* ---- Capabilities, threads, sparks. */

static void f_caps(struct ctx *c) {
    const struct es_model *m = c->m;
    unsigned n = m->ncaps;
    if (n > ES_MODEL_MAX_CAPS)
        n = ES_MODEL_MAX_CAPS;
    for (unsigned i = 0; i < n; i++) {
        if (!m->caps[i].seen)
            continue;
        char cap[16];
        snprintf(cap, sizeof cap, "%u", i);
        sample_l(c, "ghc_capability_running_seconds_total", "capability", cap,
                 es_model_cap_busy_s(m, i));
    }
}

static void f_threads(struct ctx *c) {
    if (!es_model_class_switched_off(c->m, EVENTLOG_SOCKET_EVENTS_SCHEDULER))
        sample_u(c, "ghc_threads", es_model_threads(c->m));
}

static void f_sparks(struct ctx *c) {
    static const char *outcome[ES_SPARK_KINDS] = {"created",   "dud", "overflowed",
                                                  "converted", "gcd", "fizzled"};
    if (!c->m->sparks_seen)
        return;
    uint64_t v[ES_SPARK_KINDS];
    es_model_sparks(c->m, v);
    for (int k = 0; k < ES_SPARK_KINDS; k++)
        sample_l(c, "ghc_sparks_total", "outcome", outcome[k], (double)v[k]);
}

/* ---- The heap profile: the latest census's `top` labels and the rest. */

/* The label of the rest: a program's own label of that name is renamed
 * (model.h's rule), so the two are always two series. */
#define REST_LABEL "other"

static void f_census(struct ctx *c) {
    const struct es_model *m = c->m;
    if (m->censuses == 0)
        return;
    size_t *idx = malloc((c->top ? c->top : 1) * sizeof *idx);
    if (idx == NULL) {
        c->b->oom = true;
        return;
    }
    size_t k = es_model_top_entries(m, idx, c->top);
    uint64_t shown = 0;
    for (size_t i = 0; i < k; i++) {
        const struct es_model_entry *e = &m->cur.e[idx[i]];
        const char *label = es_model_label(m, e->label);
        /* The model's own sum of labels past its table counts as other. */
        if (strcmp(label, "(other labels)") == 0)
            continue;
        shown += e->bytes;
        char renamed[sizeof REST_LABEL + ES_MODEL_LABEL_SUFFIX_LEN];
        if (strcmp(label, REST_LABEL) == 0) {
            es_model_label_rename(renamed, sizeof renamed, label, label);
            label = renamed;
        }
        sample_l(c, "ghc_heap_profile_bytes", "label", label, (double)e->bytes);
    }
    free(idx);
    if (m->cur.total > shown || m->cur.n > k)
        sample_l(c, "ghc_heap_profile_bytes", "label", REST_LABEL, (double)(m->cur.total - shown));
}

/* ---- The time profile: samples by innermost cost centre, the `top` with
 * the most, and all samples (the rest is the difference: an "other"
 * series would drop whenever a cost centre joined the top, and a counter
 * must not). */

static void f_costs(struct ctx *c) {
    const struct es_model *m = c->m;
    if (m->costs.samples == 0 || c->top == 0)
        return;
    uint32_t *ids = malloc(c->top * sizeof *ids);
    if (ids == NULL) {
        c->b->oom = true;
        return;
    }
    size_t k = es_model_top_costs(m, ids, c->top);
    for (size_t i = 0; i < k; i++) {
        char buf[32];
        sample_l(c, "ghc_cost_centre_samples_total", "cost_centre",
                 es_model_cost_name(m, ids[i], buf, sizeof buf), (double)m->costs.ticks[ids[i]]);
    }
    free(ids);
}

static void f_profile_samples(struct ctx *c) {
    if (c->m->costs.samples > 0)
        sample_u(c, "ghc_time_profile_samples_total", c->m->costs.samples);
}

/* ---- Spans: each label's durations (the model's first
 * ES_MODEL_SPAN_LABELS labels, later ones as "other"; a program's own
 * label "other" renamed, as a census label is). */

static void span_series(struct ctx *c, const struct es_model_span_label *l, const char *label) {
    uint64_t cum = 0;
    for (unsigned b = 0; b < ES_MODEL_SPAN_BUCKETS; b++) {
        cum += l->buckets[b];
        es_httpbuf_printf(c->b, "ghc_span_duration_seconds_bucket{%s,label=\"", c->lab);
        add_escaped(c->b, label);
        if (b + 1 < ES_MODEL_SPAN_BUCKETS)
            es_httpbuf_printf(c->b, "\",le=\"%.9g\"} %" PRIu64 "\n", es_model_span_bounds[b], cum);
        else
            es_httpbuf_printf(c->b, "\",le=\"+Inf\"} %" PRIu64 "\n", cum);
    }
    sample_l(c, "ghc_span_duration_seconds_sum", "label", label, l->sum_s);
    sample_l(c, "ghc_span_duration_seconds_count", "label", label, (double)l->count);
}

/* `fn` for each label the spans' families export: the model's first
 * labels (a program's own "other" renamed), then "other". */
static void each_span_label(struct ctx *c,
                            void (*fn)(struct ctx *c, const struct es_model_span_label *l,
                                       const char *label)) {
    const struct es_model_span_label *l;
    for (size_t i = 0; (l = es_model_span_label_at(c->m, i)) != NULL; i++) {
        const char *label = l->label;
        char renamed[sizeof REST_LABEL + ES_MODEL_LABEL_SUFFIX_LEN];
        if (l == c->m->spans.other)
            label = REST_LABEL;
        else if (strcmp(label, REST_LABEL) == 0) {
            es_model_label_rename(renamed, sizeof renamed, label, label);
            label = renamed;
        }
        fn(c, l, label);
    }
}

static void failed_series(struct ctx *c, const struct es_model_span_label *l, const char *label) {
    sample_l(c, "ghc_span_failures_total", "label", label, (double)l->failed);
}

static void f_spans(struct ctx *c) {
    each_span_label(c, span_series);
}

static void f_span_failures(struct ctx *c) {
    each_span_label(c, failed_series);
}

/* ---- The families, in the order written. */

static const struct family {
    const char *name, *type, *help;
    bool needs_model; /* written only for targets with an eventlog */
    void (*fn)(struct ctx *c);
} families[] = {
    {"eventlog_socket_connected", "gauge",
     "Whether the exporter is connected to the program's eventlog-socket (1) or not (0).", false,
     f_connected},
    {"eventlog_socket_received_bytes_total", "counter",
     "Eventlog bytes the exporter received from the program.", true, f_received},
    {"eventlog_socket_dropped_bytes_total", "counter",
     "Eventlog bytes the program's library dropped for this exporter, from its drop notices.", true,
     f_dropped},
    {"eventlog_socket_lossless_wait_seconds_total", "counter",
     "Seconds the program waited for lossless clients, from its wait notices.", true, f_lossless},
    {"eventlog_socket_cost_cpu_seconds_total", "counter",
     "CPU seconds the program spent streaming its eventlog, from its cost notices.", true, f_cost},
    {"eventlog_socket_cost_sent_bytes_total", "counter",
     "Eventlog bytes the program sent in the periods of its cost notices.", true, f_cost_sent},
    {"ghc_program_info", "gauge", "The program's RTS, from its eventlog.", true, f_info},
    {"ghc_eventlog_lacking_info", "gauge",
     "What the program's eventlog lacks, one series each: heap_profile (no heap profiling "
     "mode: run with +RTS -hT, or another -h), live (GHC before 9.2 cannot flush its eventlog: "
     "figures arrive in 2 MiB steps and at exit), sparks (GCs but no spark counters: +RTS -l "
     "without p), scheduler_events, gc_events, ... (a class of events switched off while the "
     "program runs: its gauges are absent until it is back).",
     true, f_lacking},
    {"ghc_heap_size_bytes", "gauge", "The heap's size at the latest GC.", true, f_heap_size},
    {"ghc_heap_live_bytes", "gauge", "Live bytes in the heap at the latest GC.", true, f_heap_live},
    {"ghc_allocated_bytes_total", "counter",
     "Bytes allocated, as the capabilities posted at their GCs.", true, f_allocated},
    {"ghc_gc_collections_total", "counter", "Garbage collections, by the generation collected.",
     true, f_collections},
    {"ghc_gc_pause_seconds", "histogram", "GC pauses: the leading capability's GC interval.", true,
     f_pauses},
    {"ghc_gc_seconds_total", "counter", "Seconds of GC pauses in all.", true, f_gc_seconds},
    {"ghc_capability_running_seconds_total", "counter",
     "Seconds each capability ran Haskell threads.", true, f_caps},
    {"ghc_threads", "gauge", "Haskell threads alive (created or seen running, not finished).", true,
     f_threads},
    {"ghc_sparks_total", "counter",
     "Sparks from spark counters: created (every spark, as +RTS -s counts them) and what became "
     "of them (converted, fizzled, gcd, dud, overflowed; the rest are still in the pool).",
     true, f_sparks},
    {"ghc_heap_profile_bytes", "gauge",
     "Bytes by label in the latest heap census: the largest labels, the rest as other.", true,
     f_census},
    {"ghc_time_profile_samples_total", "counter",
     "Cost-centre samples: one per tick per capability while cost-centre profiling runs in a "
     "program built with -prof.",
     true, f_profile_samples},
    {"ghc_cost_centre_samples_total", "counter",
     "Cost-centre samples by their innermost cost centre (MODULE.LABEL; the RTS's own, such as "
     "GC and IDLE, by label): the cost centres with the most; the rest is "
     "ghc_time_profile_samples_total less their sum.",
     true, f_costs},
    {"ghc_span_duration_seconds", "histogram",
     "Durations of the program's spans (\"START label\" ... \"STOP label\" in one thread), by "
     "label: the first 64 labels, later ones as other.",
     true, f_spans},
    {"ghc_span_failures_total", "counter",
     "Spans ended by an exception (withSpan's \"FAIL label\" before its STOP), by label: the "
     "labels of ghc_span_duration_seconds.",
     true, f_span_failures},
};

/* The common labels of target `t`. */
static void labels_of(struct es_httpbuf *l, const struct es_promtext_target *t) {
    ES_HTTPBUF_ADD(l, "program=\"");
    add_escaped(l, t->program ? t->program : "");
    if (t->pid)
        es_httpbuf_printf(l, "\",pid=\"%" PRIu32 "\",source=\"", t->pid);
    else
        ES_HTTPBUF_ADD(l, "\",pid=\"\",source=\"");
    add_escaped(l, t->source ? t->source : "");
    ES_HTTPBUF_ADD(l, "\"");
    es_httpbuf_add(l, "", 1); /* the NUL, not counted in len */
    if (!l->oom)
        l->len--;
}

/* Families known once a program's header has come (GHC 9.0 sends nothing
 * else for its first 2 MiB): who it is and what its eventlog lacks. */
/* cppcheck-suppress constParameter ; fn is a function, not a pointer to data */
static bool from_header(void (*fn)(struct ctx *c)) {
    return fn == f_info || fn == f_lacking;
}

void es_promtext_write(struct es_httpbuf *b, const struct es_promtext_target *t, size_t n,
                       unsigned top) {
    struct es_httpbuf *labs = calloc(n ? n : 1, sizeof *labs);
    if (labs == NULL) {
        b->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        labels_of(&labs[i], &t[i]);
        if (labs[i].oom)
            b->oom = true;
    }
    for (size_t f = 0; f < sizeof families / sizeof *families && !b->oom; f++) {
        const struct family *fa = &families[f];
        size_t start = b->len;
        es_httpbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", fa->name, fa->help, fa->name,
                          fa->type);
        size_t head = b->len;
        for (size_t i = 0; i < n; i++) {
            const struct es_model *m = t[i].m;
            if (fa->needs_model && (m == NULL || (m->events == 0 && !from_header(fa->fn))))
                continue;
            struct ctx c = {b, &t[i], m, labs[i].p, top};
            fa->fn(&c);
        }
        /* A family without samples is left out. */
        if (b->len == head && !b->oom)
            b->len = start;
    }
    for (size_t i = 0; i < n; i++)
        es_httpbuf_free(&labs[i]);
    free(labs);
}
