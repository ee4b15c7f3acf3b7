/* SPDX-License-Identifier: BSD-3-Clause */
#include "rows.h"

#include "profile/prof.h"
#include "spans/spans.h"

#include "csv.h"
#include "format/es_event_names.h"
#include "format/es_event_types.h"
#include "format/es_payload.h"

#include <stdlib.h>
#include <string.h>

/* Capabilities whose GC intervals are followed (for durations); events of
 * higher ones get rows without a duration. */
#define ES_ROWS_MAX_CAPS 1024

/* A GC_STATS_GHC's figures, as read. */
struct gc_stats {
    uint64_t time, gen, v[6], balanced; /* v: copied ... par_copied, in the columns' order */
    bool have_balanced;
};

struct es_rows_gc_cap {
    uint64_t since;      /* its GC_START, while in_gc */
    uint64_t start, end; /* its last closed GC interval, while closed */
    bool in_gc, closed;
    bool held;             /* a stats row waits for this GC's end */
    struct gc_stats stats; /* its figures */
};

static const struct {
    const char *name, *columns, *hint;
} kinds[ES_ROWS_KINDS] = {
    [ES_ROWS_GC] = {"gc",
                    "time_s,capability,event,generation,duration_s,copied_bytes,slop_bytes,"
                    "fragmentation_bytes,par_threads,par_max_copied_bytes,par_copied_bytes,"
                    "par_balanced_copied_bytes",
                    "the RTS posts GC events with +RTS -l (the default event classes)"},
    [ES_ROWS_HEAP] = {"heap",
                      "time_s,capability,heap_size_bytes,live_bytes,blocks_size_bytes,"
                      "allocated_bytes",
                      "the RTS posts heap figures at each GC with +RTS -l"},
    [ES_ROWS_CENSUS] = {"census", "time_s,label,bytes",
                        "run the program with +RTS -hT (or another -h mode) and -l"},
    [ES_ROWS_MARKERS] = {"markers", "time_s,capability,marker",
                         "the program posts markers with Debug.Trace.traceMarkerIO"},
    [ES_ROWS_SPARKS] = {"sparks",
                        "time_s,capability,event,created,dud,overflowed,converted,fizzled,gcd,"
                        "remaining,victim_capability",
                        "spark counters come from the threaded RTS with +RTS -l; each spark's "
                        "own events with +RTS -lf"},
    [ES_ROWS_THREADS] = {"threads",
                         "time_s,capability,thread,event,status,blocked_on,other_capability,"
                         "label",
                         "the RTS posts thread events with +RTS -l (scheduler class s)"},
    [ES_ROWS_PROFILE] = {"profile", "time_s,capability,stack",
                         "cost-centre samples come from a program built with ghc -prof "
                         "-fprof-auto, run with +RTS -p -l (or profiled while it runs: "
                         "eventlog-socket profile ADDR)"},
    [ES_ROWS_SPANS] = {"spans",
                       "label,thread,capability,start_s,duration_s,parent,failed,os_thread",
                       "the program marks a span with traceEventIO \"START label\" and "
                       "\"STOP label\" (or traceMarkerIO) in one thread; +RTS -l's scheduler "
                       "events tell the threads apart"},
};

static void span_row(const struct es_span *s, void *ctx);

int es_rows_kind(const char *name) {
    for (int k = 0; k < ES_ROWS_KINDS; k++)
        if (strcmp(name, kinds[k].name) == 0)
            return k;
    return -1;
}

const char *es_rows_kind_name(enum es_rows_kind k) {
    return kinds[k].name;
}

const char *es_rows_columns(enum es_rows_kind k) {
    return kinds[k].columns;
}

const char *es_rows_hint(enum es_rows_kind k) {
    return kinds[k].hint;
}

int es_rows_init(struct es_rows *t, enum es_rows_kind k, FILE *out) {
    memset(t, 0, sizeof *t);
    t->kind = k;
    t->out = out;
    if (k == ES_ROWS_GC && (t->gc = calloc(ES_ROWS_MAX_CAPS, sizeof *t->gc)) == NULL)
        return -1;
    if (k == ES_ROWS_PROFILE) {
        if ((t->prof = malloc(sizeof *t->prof)) == NULL)
            return -1;
        es_prof_init(t->prof);
    }
    if (k == ES_ROWS_SPANS) {
        if ((t->spans = malloc(sizeof *t->spans)) == NULL)
            return -1;
        es_spans_init(t->spans, span_row, t);
    }
    fprintf(out, "%s\n", kinds[k].columns);
    return 0;
}

void es_rows_destroy(struct es_rows *t) {
    free(t->gc);
    t->gc = NULL;
    if (t->prof)
        es_prof_destroy(t->prof);
    free(t->prof);
    t->prof = NULL;
    if (t->spans)
        es_spans_destroy(t->spans);
    free(t->spans);
    t->spans = NULL;
}

/* The start of a row: time and capability (empty for none). */
static void row_start(struct es_rows *t, uint64_t time, int cap) {
    es_csv_time(t->out, time);
    if (cap == ES_ROWS_NO_CAP)
        fputs(",", t->out);
    else
        fprintf(t->out, ",%d", cap);
    t->rows++;
}

static void u64_cell(FILE *f, uint64_t v, bool have) {
    if (have)
        fprintf(f, ",%llu", (unsigned long long)v);
    else
        fputc(',', f);
}

/* ---- gc */

static void duration_cell(FILE *f, uint64_t a, uint64_t b, bool have) {
    fputc(',', f);
    if (have && b >= a)
        es_csv_time(f, b - a);
}

static void stats_row(struct es_rows *t, const struct gc_stats *st, int cap,
                      const struct es_rows_gc_cap *g) {
    row_start(t, st->time, cap);
    fprintf(t->out, ",stats,%llu", (unsigned long long)st->gen);
    duration_cell(t->out, g ? g->start : 0, g ? g->end : 0, g && g->closed);
    for (int i = 0; i < 6; i++)
        fprintf(t->out, ",%llu", (unsigned long long)st->v[i]);
    u64_cell(t->out, st->balanced, st->have_balanced);
    fputc('\n', t->out);
}

/* A stats row held back for its collection's end, written now (with the
 * pause when the end has come). */
static void release_stats(struct es_rows *t, int cap) {
    struct es_rows_gc_cap *g = &t->gc[cap];
    if (!g->held)
        return;
    g->held = false;
    stats_row(t, &g->stats, cap, g);
    g->closed = false;
}

/* GC_STATS_GHC: the capability that led the collection posts it with its
 * GC_END, before or after it in the stream (GHC 9.0 writes the stats
 * first, and the end with an earlier time): the row, with the pause of the
 * collection (that capability's GC_START to GC_END), waits for the end
 * when it came first. */
static void gc_stats(struct es_rows *t, const struct es_event *ev, int cap) {
    struct es_payload r = es_payload_of(ev);
    struct gc_stats st = {.time = ev->time};
    es_payload_skip(&r, 4); /* capset */
    st.gen = es_payload_u16(&r);
    static const int width[6] = {8, 8, 8, 4, 8, 8};
    for (int i = 0; i < 6; i++)
        st.v[i] = es_payload_uint(&r, width[i]);
    if (!es_payload_ok(&r)) {
        t->garbled++;
        return;
    }
    /* Older RTSs end the payload here. */
    st.balanced = es_payload_u64(&r);
    st.have_balanced = es_payload_ok(&r);
    struct es_rows_gc_cap *g = cap >= 0 && cap < ES_ROWS_MAX_CAPS ? &t->gc[cap] : NULL;
    if (g == NULL) {
        stats_row(t, &st, cap, NULL);
        return;
    }
    release_stats(t, cap);
    if (g->in_gc) {
        g->held = true;
        g->stats = st;
        g->closed = false; /* an older interval is not this collection's */
        return;
    }
    stats_row(t, &st, cap, g);
    g->closed = false;
}

static void gc_row(struct es_rows *t, const struct es_event *ev, int cap) {
    if (ev->type == ES_EVENT_GC_STATS_GHC) {
        gc_stats(t, ev, cap);
        return;
    }
    const char *name = es_event_names_of(ev->type, ES_FAMILY_GC);
    if (name == NULL)
        return;
    struct es_rows_gc_cap *g = cap >= 0 && cap < ES_ROWS_MAX_CAPS ? &t->gc[cap] : NULL;
    bool have = false;
    uint64_t since = 0;
    if (g && ev->type == ES_EVENT_GC_START) {
        g->in_gc = true;
        g->since = ev->time;
    } else if (g && ev->type == ES_EVENT_GC_END && g->in_gc) {
        have = true;
        since = g->since;
        g->in_gc = false;
        g->closed = true;
        g->start = g->since;
        g->end = ev->time;
    }
    /* A held stats row goes out before any later row of its capability:
     * with the pause at its collection's end, without it otherwise. */
    if (g)
        release_stats(t, cap);
    row_start(t, ev->time, cap);
    fprintf(t->out, ",%s,", name);
    duration_cell(t->out, since, ev->time, have);
    fputs(",,,,,,,\n", t->out);
}

void es_rows_finish(struct es_rows *t) {
    for (int c = 0; t->gc && c < ES_ROWS_MAX_CAPS; c++)
        release_stats(t, c);
    if (t->spans)
        es_spans_settle(t->spans); /* the last block's STARTs and waiting STOPs */
}

/* ---- heap */

static void heap_row(struct es_rows *t, const struct es_event *ev, int cap) {
    int col;
    switch (ev->type) {
    case ES_EVENT_HEAP_SIZE:
        col = 0;
        break;
    case ES_EVENT_HEAP_LIVE:
        col = 1;
        break;
    case ES_EVENT_BLOCKS_SIZE:
        col = 2;
        break;
    case ES_EVENT_HEAP_ALLOCATED:
        col = 3;
        break;
    default:
        return;
    }
    struct es_payload r = es_payload_of(ev);
    es_payload_skip(&r, 4); /* capset */
    uint64_t v = es_payload_u64(&r);
    if (!es_payload_ok(&r)) {
        t->garbled++;
        return;
    }
    row_start(t, ev->time, cap);
    for (int i = 0; i < 4; i++)
        u64_cell(t->out, v, i == col);
    fputc('\n', t->out);
}

/* ---- markers */

static void marker_row(struct es_rows *t, const struct es_event *ev, int cap) {
    if (ev->type != ES_EVENT_USER_MARKER)
        return;
    row_start(t, ev->time, cap);
    fputc(',', t->out);
    es_csv_text(t->out, (const char *)ev->payload, ev->payload_len);
    fputc('\n', t->out);
}

/* ---- sparks */

static void spark_row(struct es_rows *t, const struct es_event *ev, int cap) {
    const char *name = es_event_names_of(ev->type, ES_FAMILY_SPARK);
    if (name == NULL)
        return;
    struct es_payload r = es_payload_of(ev);
    uint64_t v[7] = {0}, victim = 0;
    bool counters = ev->type == ES_EVENT_SPARK_COUNTERS, steal = ev->type == ES_EVENT_SPARK_STEAL;
    /* created, dud, overflowed, converted, gcd, fizzled, remaining */
    for (int i = 0; counters && i < 7; i++)
        v[i] = es_payload_u64(&r);
    if (steal)
        victim = es_payload_u16(&r);
    if (!es_payload_ok(&r)) {
        t->garbled++;
        return;
    }
    row_start(t, ev->time, cap);
    fprintf(t->out, ",%s", name);
    /* The columns' order: created, dud, overflowed, converted, fizzled, gcd, remaining. */
    static const int order[7] = {0, 1, 2, 3, 5, 4, 6};
    for (int i = 0; i < 7; i++)
        u64_cell(t->out, v[order[i]], counters);
    u64_cell(t->out, victim, steal);
    fputc('\n', t->out);
}

/* ---- threads */

static void thread_row(struct es_rows *t, const struct es_event *ev, int cap) {
    const char *name = es_event_names_of(ev->type, ES_FAMILY_THREAD);
    if (name == NULL)
        return;
    struct es_payload r = es_payload_of(ev);
    uint64_t id = es_payload_u32(&r), status = 0, blocked_on = 0, other = 0;
    if (ev->type == ES_EVENT_STOP_THREAD) {
        status = es_payload_u16(&r);
        blocked_on = es_payload_u32(&r);
    } else if (ev->type == ES_EVENT_MIGRATE_THREAD || ev->type == ES_EVENT_THREAD_WAKEUP) {
        other = es_payload_u16(&r);
    }
    if (!es_payload_ok(&r)) {
        t->garbled++;
        return;
    }
    row_start(t, ev->time, cap);
    fprintf(t->out, ",%llu,%s,", (unsigned long long)id, name);
    if (ev->type == ES_EVENT_STOP_THREAD) {
        const struct es_stop_status *s = es_event_names_stop_status((unsigned)status);
        if (s)
            fputs(s->code, t->out);
        else
            fprintf(t->out, "status_%llu", (unsigned long long)status);
    }
    u64_cell(t->out, blocked_on, blocked_on != 0);
    u64_cell(t->out, other,
             ev->type == ES_EVENT_MIGRATE_THREAD || ev->type == ES_EVENT_THREAD_WAKEUP);
    fputc(',', t->out);
    if (ev->type == ES_EVENT_THREAD_LABEL) {
        size_t len;
        const uint8_t *label = es_payload_rest(&r, &len);
        es_csv_text(t->out, (const char *)label, len);
    }
    fputc('\n', t->out);
}

/* ---- profile */

/* A cost-centre sample: its own capability, its stack root first as the
 * .folded file has it; the names from the definitions before it. */
static void profile_row(struct es_rows *t, const struct es_event *ev) {
    if (ev->type == ES_EVENT_HEAP_PROF_COST_CENTRE) {
        es_prof_event(t->prof, ev);
        return;
    }
    if (ev->type != ES_EVENT_PROF_SAMPLE_COST_CENTRE)
        return;
    uint32_t capno, depth, ids[256];
    if (!es_prof_read_sample(ev, &capno, ids, &depth)) {
        t->garbled++;
        return;
    }
    row_start(t, ev->time, capno > INT32_MAX ? ES_ROWS_NO_CAP : (int)capno);
    char stack[8192], name[1024];
    size_t n = 0;
    for (uint32_t i = 0; i < (depth ? depth : 1) && n < sizeof stack - 1; i++) {
        const char *f = depth ? es_prof_name(t->prof, ids[i], name, sizeof name) : "MAIN";
        int w = snprintf(stack + n, sizeof stack - n, "%s%s", i ? ";" : "", f);
        n = w < 0 ? n : n + (size_t)w < sizeof stack ? n + (size_t)w : sizeof stack - 1;
    }
    fputc(',', t->out);
    es_csv_text(t->out, stack, n);
    fputc('\n', t->out);
}

/* ---- spans: a row when a span ends (spans.h matches them). */

static void span_row(const struct es_span *s, void *ctx) {
    struct es_rows *t = ctx;
    es_csv_str(t->out, s->label);
    u64_cell(t->out, s->thread, s->thread != 0);
    if (s->cap >= 0)
        fprintf(t->out, ",%d", s->cap);
    else
        fputc(',', t->out);
    fputc(',', t->out);
    es_csv_time(t->out, s->start);
    fputc(',', t->out);
    es_csv_time(t->out, s->end - s->start);
    fputc(',', t->out);
    es_csv_str(t->out, s->parent);
    fprintf(t->out, ",%s", s->failed ? "true" : "false");
    u64_cell(t->out, s->os_thread, s->os_thread != 0);
    fputc('\n', t->out);
    t->rows++;
}

void es_rows_event(struct es_rows *t, const struct es_event *ev, int cap) {
    switch (t->kind) {
    case ES_ROWS_GC:
        gc_row(t, ev, cap);
        break;
    case ES_ROWS_HEAP:
        heap_row(t, ev, cap);
        break;
    case ES_ROWS_MARKERS:
        marker_row(t, ev, cap);
        break;
    case ES_ROWS_SPARKS:
        spark_row(t, ev, cap);
        break;
    case ES_ROWS_THREADS:
        thread_row(t, ev, cap);
        break;
    case ES_ROWS_PROFILE:
        profile_row(t, ev);
        break;
    case ES_ROWS_SPANS:
        es_spans_event(t->spans, ev, cap);
        break;
    case ES_ROWS_CENSUS:
    case ES_ROWS_KINDS:
        break;
    }
}
