/* SPDX-License-Identifier: BSD-3-Clause */
/* What `eventlog-socket top` draws (client/top/top.c runs the loop, the
 * connection and the keys): one screen from the model and the view's
 * state, with ncurses. Called on the loop's thread only, between initscr
 * and endwin. */
#include "draw.h"
#include "sparks.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MINUTE_NS 60000000000ull
/* The threads that ran most, shown by name. */
#define TOP_THREADS 3

/* ---- Formatting. */

static void fmt_bytes(char *out, size_t size, double b) {
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double a = b < 0 ? -b : b;
    while (a >= 1024 && u < 4) {
        a /= 1024;
        b /= 1024;
        u++;
    }
    snprintf(out, size, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

static void fmt_ns(char *out, size_t size, uint64_t ns) {
    if (ns < 1000000)
        snprintf(out, size, "%.0fus", (double)ns / 1e3);
    else if (ns < 10000000000ull)
        snprintf(out, size, "%.1fms", (double)ns / 1e6);
    else
        snprintf(out, size, "%.1fs", (double)ns / 1e9);
}

static void fmt_duration(char *out, size_t size, uint64_t ns) {
    uint64_t s = ns / 1000000000ull;
    if (s < 60)
        snprintf(out, size, "%.1f s", (double)ns / 1e9);
    else if (s < 3600)
        snprintf(out, size, "%llum%02llus", (unsigned long long)(s / 60),
                 (unsigned long long)(s % 60));
    else
        snprintf(out, size, "%lluh%02llum", (unsigned long long)(s / 3600),
                 (unsigned long long)(s / 60 % 60));
}

/* Print at (y, x), cut to the screen's width. */
static void put(int y, int x, attr_t a, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(int y, int x, attr_t a, const char *fmt, ...) {
    if (y >= LINES || x >= COLS)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    attron(a);
    mvaddnstr(y, x, buf, COLS - x);
    attroff(a);
}

/* A sparkline of the last `width` points of a series, scaled to its own
 * maximum over those points. */
static void sparkline(bool utf8, int y, int x, int width, const struct es_model_series *s) {
    static const char *bars[] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                 "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char ascii[] = "_.,-=+*#";
    if (width <= 0 || y >= LINES || x >= COLS)
        return;
    if (x + width > COLS)
        width = COLS - x;
    unsigned n = s->n < (unsigned)width ? s->n : (unsigned)width;
    double max = 0;
    for (unsigned i = s->n - n; i < s->n; i++)
        if (es_model_series_at(s, i) > max)
            max = es_model_series_at(s, i);
    move(y, x);
    for (unsigned i = s->n - n; i < s->n; i++) {
        double v = es_model_series_at(s, i);
        int k = max > 0 ? (int)(v / max * 7.999) : 0;
        if (k < 0)
            k = 0;
        if (utf8)
            addstr(bars[k]);
        else
            addch((chtype)ascii[k]);
    }
}

/* A bar of `width` cells filled `share` (0..1). */
static void bar(bool utf8, int y, int x, int width, double share) {
    if (y >= LINES || x + width > COLS)
        return;
    int full = (int)(share * width + 0.5);
    move(y, x);
    for (int i = 0; i < width; i++) {
        if (utf8)
            addstr(i < full ? "\xe2\x96\x88" : "\xe2\x96\x91");
        else
            addch(i < full ? '#' : '.');
    }
}

/* ---- The screen. */

static const char *state_text(const struct es_top_view *v) {
    switch (v->state) {
    case ES_TOP_CONNECTING:
        return "connecting";
    case ES_TOP_WAITING:
        return "waiting for the program (--retry)";
    case ES_TOP_LIVE:
        return "live";
    case ES_TOP_EXITED:
        return v->retry ? "program exited (--retry: waiting for the next run)" : "program exited";
    case ES_TOP_LOST:
        return "connection lost";
    }
    return "";
}

static int draw_header(const struct es_top_view *v, int y) {
    const struct es_model *m = v->model;
    const char *name = m->program[0] ? m->program : v->program[0] ? v->program : "?";
    uint32_t pid = m->pid ? m->pid : v->pid;
    char pidtxt[32] = "";
    if (pid)
        snprintf(pidtxt, sizeof pidtxt, " (pid %u)", pid);
    char rate[32], up[32];
    fmt_bytes(rate, sizeof rate, v->bytes_s);
    fmt_duration(up, sizeof up, m->now);
    move(y, 0);
    clrtoeol();
    /* GHC 9.0's header says so long before its RTS_IDENTIFIER (at exit);
     * program time is unknown until the first event of the program's own
     * (the library's answer to the window request may come first, at
     * time 0). */
    char title[600], tail[400];
    int tw = snprintf(title, sizeof title, " %s%s  GHC %s  up %s ", name, pidtxt,
                      m->ghc_version[0] ? m->ghc_version
                      : m->no_flush     ? "9.0"
                                        : "?",
                      m->events > 0 && m->now > 0 ? up : "?");
    const char *state = state_text(v);
    int sw = (int)strlen(state);
    if (tw + 1 + sw > COLS && v->retry &&
        (v->state == ES_TOP_EXITED || v->state == ES_TOP_WAITING)) {
        state = v->state == ES_TOP_EXITED ? "exited, --retry waits" : "waiting (--retry)";
        sw = (int)strlen(state);
    }
    int rw = snprintf(tail, sizeof tail, "  %s  %s/s", v->source, rate);
    /* Positions from the texts' lengths (the cursor wraps to the line's
     * start after its last column): what does not fit goes, the source
     * and rate first, then the end of the state. */
    if (tw + 1 + sw + rw > COLS)
        rw = 0;
    put(y, 0, A_REVERSE | A_BOLD, "%s", title);
    int x = tw + 1;
    attr_t sa = v->state == ES_TOP_LIVE     ? A_BOLD
                : v->state == ES_TOP_EXITED ? A_BOLD | A_STANDOUT
                                            : A_STANDOUT;
    if (x < COLS)
        put(y, x, sa, "%.*s", COLS - x < sw ? COLS - x : sw, state);
    if (rw > 0)
        put(y, x + sw, A_NORMAL, "%s", tail);
    /* On the blank line under it: why the figures lag (GHC 9.0). */
    if (m->no_flush && !m->ended)
        put(y + 1, 0, A_BOLD, "%s%s", ES_MODEL_GHC90_NOTE, m->events == 0 ? " (none yet)" : "");
    return y + 1;
}

static int draw_heap(const struct es_top_view *v, int y) {
    const struct es_model *m = v->model;
    char a[32], b[32];
    int spark_x = 32, spark_w = COLS - spark_x - 1;
    if (spark_w > ES_MODEL_SERIES)
        spark_w = ES_MODEL_SERIES;
    put(y, 0, A_BOLD, "Heap");
    fmt_bytes(a, sizeof a, (double)m->heap_live);
    fmt_bytes(b, sizeof b, (double)m->max_heap_live);
    put(y, 6, A_NORMAL, "live  %10s", a);
    sparkline(v->utf8, y, spark_x, spark_w - 16, &m->s_live);
    put(y, COLS - 16 > spark_x ? COLS - 16 : COLS, A_DIM, "max %s", b);
    y++;
    fmt_bytes(a, sizeof a, (double)m->heap_size);
    fmt_bytes(b, sizeof b, (double)m->max_heap_size);
    put(y, 6, A_NORMAL, "size  %10s", a);
    sparkline(v->utf8, y, spark_x, spark_w - 16, &m->s_size);
    put(y, COLS - 16 > spark_x ? COLS - 16 : COLS, A_DIM, "max %s", b);
    y++;
    fmt_bytes(a, sizeof a, m->alloc_rate);
    fmt_bytes(b, sizeof b, (double)m->allocated);
    put(y, 6, A_NORMAL, "alloc %8s/s", a);
    sparkline(v->utf8, y, spark_x, spark_w - 16, &m->s_alloc);
    put(y, COLS - 16 > spark_x ? COLS - 16 : COLS, A_DIM, "tot %s", b);
    return y + 1;
}

static int draw_gc(const struct es_top_view *v, int y) {
    const struct es_model *m = v->model;
    char p50[16], p99[16], mx[16], s50[16], s99[16], smx[16];
    fmt_ns(p50, sizeof p50, es_model_pause_pct(m, 0.5, MINUTE_NS));
    fmt_ns(p99, sizeof p99, es_model_pause_pct(m, 0.99, MINUTE_NS));
    fmt_ns(mx, sizeof mx, es_model_pause_max(m, MINUTE_NS));
    fmt_ns(s50, sizeof s50, es_model_pause_pct(m, 0.5, 0));
    fmt_ns(s99, sizeof s99, es_model_pause_pct(m, 0.99, 0));
    fmt_ns(smx, sizeof smx, m->pause_max);
    /* Since when the stream counts (the page's words, model.h): a top that
     * joined a running program counts from then, not from its start. */
    char since[64], joined[80] = "";
    es_model_counted_since(m, since, sizeof since);
    if (es_model_counted_from(m) > 0)
        snprintf(joined, sizeof joined, " %s", since);
    put(y, 0, A_BOLD, "GC");
    put(y, 6, A_NORMAL,
        "%llu collections%s: %llu minor, %llu major  in GC %.1f%% (last min %.1f%%)",
        (unsigned long long)m->gcs, joined, (unsigned long long)m->minor_gcs,
        (unsigned long long)m->major_gcs, 100 * es_model_gc_share(m, 0),
        100 * es_model_gc_share(m, MINUTE_NS));
    y++;
    put(y, 6, A_NORMAL, "pause p50/p99/max  last min %s/%s/%s  %s %s/%s/%s", p50, p99, mx, since,
        s50, s99, smx);
    return y + 1;
}

static int draw_caps(const struct es_top_view *v, int y) {
    const struct es_model *m = v->model;
    put(y, 0, A_BOLD, "Caps");
    char th[48];
    snprintf(th, sizeof th, "threads %zu", es_model_threads(m));
    put(y, 6, A_NORMAL, "%s", th);
    int x = 6 + (int)strlen(th) + 3;
    unsigned shown = 0;
    for (unsigned c = 0; c < m->ncaps; c++) {
        /* Each capability: "N ████░░ 65%" (17 cells). */
        if (x + 17 > COLS) {
            y++;
            x = 6;
            if (y >= LINES - 8)
                break;
        }
        double share = es_model_cap_share(m, c, 2000000000ull);
        put(y, x, A_NORMAL, "%u", c);
        bar(v->utf8, y, x + 3, 8, share);
        put(y, x + 12, A_NORMAL, "%3.0f%%", 100 * share);
        x += 17;
        shown++;
    }
    if (m->ncaps == 0)
        put(y, x, A_DIM, "(no capability seen yet)");
    else if (shown < m->ncaps)
        put(y, x, A_DIM, "+%u more", m->ncaps - shown);
    return y + 1;
}

/* The threads lines (client/model/threads.c): live, created and finished
 * threads, and the three that ran most, with their labels, running time,
 * share and state now. */
static int draw_threads(const struct es_top_view *v, int y) {
    const struct es_model *m = v->model;
    uint64_t all = es_model_threads_run_ns(m);
    char line[1024], live[48] = "", before[160];
    /* The page's words: threads begun before the stream are said apart,
     * and after the exit nothing is live (the RTS ends its last threads
     * without a "finished" stop). */
    es_model_threads_before_note(m, before, sizeof before);
    if (!m->ended)
        snprintf(live, sizeof live, "live %zu  ", es_model_threads(m));
    snprintf(line, sizeof line, "%screated %llu%s  finished %llu  ran %.2f s in all", live,
             (unsigned long long)m->threads_created, before, (unsigned long long)m->thr.finished,
             (double)all / 1e9);
    attron(A_BOLD);
    mvaddnstr(y, 0, "Thrd", COLS);
    attroff(A_BOLD);
    if (COLS > 6)
        mvaddnstr(y, 6, line, COLS - 6);
    y++;
    const struct es_model_thread *top[TOP_THREADS];
    size_t n = es_model_threads_top(m, top, TOP_THREADS);
    size_t len = 0;
    line[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof line; i++) {
        uint64_t ns = es_model_thread_run_ns(m, top[i]);
        int k =
            snprintf(line + len, sizeof line - len, "%s%s #%u %.3f s %.0f%% %s", i ? "  |  " : "",
                     top[i]->label[0] ? top[i]->label : "(no label)", top[i]->id, (double)ns / 1e9,
                     all ? 100.0 * (double)ns / (double)all : 0, es_model_thread_state(top[i]));
        if (k < 0)
            break;
        len += (size_t)k;
    }
    if (n > 0 && COLS > 6)
        mvaddnstr(y, 6, line, COLS - 6);
    return n > 0 ? y + 1 : y;
}

/* The time profile's line, for a program that streams cost-centre samples
 * (client/model/costs.c): the cost centres most often running in the last
 * 10 s, by their share of the samples not idle. */
#define TIME_WINDOW_NS 10000000000ull
#define TOP_COSTS      4

static int draw_time(const struct es_top_view *v, int y) {
    const struct es_model *m = v->model;
    if (m->costs.samples == 0)
        return y;
    uint32_t ids[TOP_COSTS];
    uint64_t counts[TOP_COSTS], all, idle;
    size_t n = es_model_recent_costs(m, TIME_WINDOW_NS, ids, counts, TOP_COSTS, &all, &idle);
    char line[1024];
    size_t len = 0;
    uint64_t busy = all - idle;
    for (size_t i = 0; i < n && len < sizeof line; i++) {
        char buf[32];
        int k = snprintf(line + len, sizeof line - len, "%s%s %.0f%%", i ? "  " : "",
                         es_model_cost_name(m, ids[i], buf, sizeof buf),
                         100.0 * (double)counts[i] / (double)busy);
        if (k < 0)
            break;
        len += (size_t)k;
    }
    if (len < sizeof line)
        snprintf(line + len, sizeof line - len, "%s(last 10 s: %llu samples, %.0f%% idle)",
                 n ? "  " : "", (unsigned long long)all,
                 all ? 100.0 * (double)idle / (double)all : 0);
    put(y, 0, A_BOLD, "Time");
    if (all == 0)
        put(y, 6, A_DIM, "no cost-centre sample in the last 10 s (%llu in all)",
            (unsigned long long)m->costs.samples);
    else if (COLS > 6)
        mvaddnstr(y, 6, line, COLS - 6);
    return y + 1;
}

/* The spans' line (client/model/spans.c): the labels with the most spans
 * ended, each with its count, p50, p99 and max, and how many failed. */
#define TOP_SPANS 3

static void fmt_span(char *out, size_t size, const struct es_model_span_label *l) {
    char p50[16] = "-", p99[16] = "-", mx[16], failed[32] = "";
    double q50 = es_model_span_quantile(l, 0.5), q99 = es_model_span_quantile(l, 0.99);
    if (q50 >= 0) /* -1: no fine histogram (out of memory) */
        fmt_ns(p50, sizeof p50, (uint64_t)(q50 * 1e9));
    if (q99 >= 0)
        fmt_ns(p99, sizeof p99, (uint64_t)(q99 * 1e9));
    fmt_ns(mx, sizeof mx, l->max_ns);
    if (l->failed > 0)
        snprintf(failed, sizeof failed, " %llu failed", (unsigned long long)l->failed);
    snprintf(out, size, "%.40s %llu p50 %s p99 %s max %s%s", l->label, (unsigned long long)l->count,
             p50, p99, mx, failed);
}

static int draw_spans(const struct es_top_view *v, int y) {
    const struct es_model_span_label *top[TOP_SPANS] = {NULL}, *l;
    for (size_t i = 0; (l = es_model_span_label_at(v->model, i)) != NULL; i++) {
        for (size_t k = 0; k < TOP_SPANS; k++)
            if (top[k] == NULL || l->count > top[k]->count) {
                memmove(&top[k + 1], &top[k], (TOP_SPANS - 1 - k) * sizeof top[0]);
                top[k] = l;
                break;
            }
    }
    if (top[0] == NULL)
        return y;
    char line[1024];
    size_t len = 0;
    for (size_t k = 0; k < TOP_SPANS && top[k] != NULL && len < sizeof line; k++) {
        char one[200];
        fmt_span(one, sizeof one, top[k]);
        int w = snprintf(line + len, sizeof line - len, "%s%s", k ? "   " : "", one);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    put(y, 0, A_BOLD, "Spans");
    if (COLS > 6)
        mvaddnstr(y, 6, line, COLS - 6);
    return y + 1;
}

static int draw_census(const struct es_top_view *v, int y, int rows) {
    const struct es_model *m = v->model;
    char tot[32], when[32];
    put(y, 0, A_BOLD, "Census");
    /* The profile's kind, or why there is none, in the page's words
     * (model.h): never "none yet" once a census came. */
    const char *kind = es_model_profile_kind(m, m->ended || v->state == ES_TOP_EXITED);
    if (!m->heap_prof && m->censuses == 0) {
        put(y, 8, A_DIM, "%s", kind);
        return y + 1;
    }
    const char *lack = es_model_breakdown_lack(m->breakdown, m->nlabels > 0);
    if (lack != NULL) {
        put(y, 8, A_DIM, "by %s: no sample yet (-hb: censuses come at exit; see PROGRAM.hp)",
            es_model_breakdown_name(m->breakdown));
        return y + 1;
    }
    if (m->censuses == 0) {
        put(y, 8, A_DIM, "by %s, every %.2f s; no census yet (c asks for one)",
            es_model_breakdown_name(m->breakdown), (double)m->heap_interval_ns / 1e9);
        return y + 1;
    }
    fmt_bytes(tot, sizeof tot, (double)m->cur.total);
    fmt_duration(when, sizeof when, m->cur.time);
    if (m->heap_prof)
        put(y, 8, A_NORMAL, "#%llu at %s, by %s: %s in %zu labels%s",
            (unsigned long long)m->censuses, when, kind, tot, m->cur.n,
            v->prof_paused ? "  (timed samples paused)" : "");
    else
        put(y, 8, A_NORMAL, "#%llu at %s: %s in %zu labels; %s%s", (unsigned long long)m->censuses,
            when, tot, m->cur.n, kind, v->prof_paused ? "  (timed samples paused)" : "");
    y++;
    if (rows < 2)
        return y;
    put(y, 2, A_UNDERLINE, "%10s  %10s  %s", "bytes", "trend", "label");
    y++;
    rows--;
    size_t idx[256];
    size_t n = es_model_top_entries(m, idx, rows < 256 ? (size_t)rows : 256);
    for (size_t i = 0; i < n; i++, y++) {
        const struct es_model_entry *e = &m->cur.e[idx[i]];
        char b[32], tr[32];
        fmt_bytes(b, sizeof b, (double)e->bytes);
        int64_t prev = es_model_prev_bytes(m, e->label);
        if (m->censuses < 2)
            tr[0] = '\0';
        else if (prev < 0)
            snprintf(tr, sizeof tr, "new");
        else if ((uint64_t)prev == e->bytes)
            snprintf(tr, sizeof tr, "=");
        else {
            char d[24];
            fmt_bytes(d, sizeof d, (double)e->bytes - (double)prev);
            snprintf(tr, sizeof tr, "%s%s", (uint64_t)prev < e->bytes ? "+" : "", d);
        }
        put(y, 2, A_NORMAL, "%10s  %10s  %s", b, tr, es_model_label_name(m, e->label));
    }
    return y;
}

static int draw_notes(const struct es_top_view *v, int y, int rows) {
    const struct es_model *m = v->model;
    put(y, 0, A_BOLD, "Markers and messages");
    if (m->drops)
        put(y, 22, A_STANDOUT,
            " %llu drop notices: %llu chunks (%.1f MiB) skipped, last at %.1f s ",
            (unsigned long long)m->drops, (unsigned long long)m->dropped_chunks, m->dropped_mib,
            (double)m->last_drop_time / 1e9);
    else
        put(y, 22, A_DIM, "no drop notice");
    y++;
    /* What losing nothing cost the program (GHC_EVENTLOG_SLOW_CLIENT=wait
     * or a client's lossless request), from the library's wait notices. */
    if (m->wait_notices) {
        put(y++, 2, A_BOLD,
            "the program waited %.1f ms for lossless clients (%llu times), last at %.1f s",
            m->lossless_wait_ms, (unsigned long long)m->lossless_waits,
            (double)m->last_wait_time / 1e9);
        if (rows > 0)
            rows--;
    }
    /* Classes of events switched off (their notices): a gap in the record,
     * not an idle program. */
    char classes[400];
    if (es_model_classes_words(m, classes, sizeof classes)) {
        put(y++, 2, A_BOLD, "%s", classes);
        if (rows > 0)
            rows--;
    }
    /* What streaming costs the program in CPU time, from the cost notices
     * this connection asked for (protocol.md 1.3). */
    if (m->cost_notices) {
        double gib = es_model_cost_s_per_gib(m);
        /* Per GiB once the notices counted bytes sent (on GHC 9.0 they may
         * count none while bytes arrive: "nothing sent" would contradict
         * the bytes received). */
        char per[48] = "";
        if (gib >= 0)
            snprintf(per, sizeof per, " (%.2f s per GiB)", gib);
        put(y++, 2, A_BOLD,
            "streaming costs the program %.1f ms CPU/s%s: RTS %.1f, walker %.1f, loop %.1f",
            m->cost_ms_per_s, per, m->cost_rts_ms_per_s, m->cost_walker_ms_per_s,
            m->cost_loop_ms_per_s);
        if (rows > 0)
            rows--;
    }
    uint64_t n = m->notes_n;
    if (n > ES_MODEL_NOTES)
        n = ES_MODEL_NOTES;
    if (n > 0 && rows > 1 && m->notes_n > (uint64_t)rows) {
        /* More than fit: say how many and how fast, so that a flood of
         * markers reads as a rate rather than as a list that scrolls. */
        uint64_t latest = m->notes[(m->notes_n - 1) % ES_MODEL_NOTES].time, recent = 0;
        for (uint64_t k = 1; k <= n; k++) {
            const struct es_model_note *no = &m->notes[(m->notes_n - k) % ES_MODEL_NOTES];
            if (latest - no->time > 1000000000u)
                break;
            recent++;
        }
        put(y++, 2, A_DIM, "%llu in all; %s%llu in the last second of the program; the latest:",
            (unsigned long long)m->notes_n, recent == n ? "at least " : "",
            (unsigned long long)recent);
        rows--;
    }
    if ((uint64_t)rows < n)
        n = (uint64_t)rows;
    if (n == 0)
        put(y++, 2, A_DIM, "(none yet: traceMarker, traceEvent)");
    for (uint64_t i = 0; i < n; i++, y++) {
        const struct es_model_note *no = &m->notes[(m->notes_n - n + i) % ES_MODEL_NOTES];
        put(y, 2, A_NORMAL, "%9.3f s  %-7s %s", (double)no->time / 1e9,
            no->kind == ES_NOTE_MARKER ? "marker" : "message", no->text);
    }
    return y;
}

/* `text` from (y, x) on, wrapped at spaces onto at most `lines` lines,
 * continuation lines starting at column `x2`. */
static void put_wrapped(int y, int x, int x2, int lines, attr_t a, const char *text) {
    size_t len = strlen(text), pos = 0;
    for (int l = 0; l < lines && pos < len; l++, y++) {
        int width = COLS - (l ? x2 : x);
        if (width <= 0)
            return;
        size_t cut = len - pos;
        if (cut > (size_t)width) {
            cut = (size_t)width;
            while (cut > 0 && text[pos + cut] != ' ')
                cut--;
            if (cut == 0)
                cut = (size_t)width;
        }
        put(y, l ? x2 : x, a, "%.*s", (int)cut, text + pos);
        pos += cut;
        while (text[pos] == ' ')
            pos++;
    }
}

/* The final summary, on the lines above the key line. */
static void draw_summary(const struct es_top_view *v, int y, int lines) {
    const struct es_model *m = v->model;
    char run[32], live[32], size[32], alloc[32], mx[32], text[600];
    fmt_duration(run, sizeof run, m->now);
    fmt_bytes(live, sizeof live, (double)m->max_heap_live);
    fmt_bytes(size, sizeof size, (double)m->max_heap_size);
    fmt_bytes(alloc, sizeof alloc, (double)m->allocated);
    fmt_ns(mx, sizeof mx, m->pause_max);
    snprintf(text, sizeof text,
             "ran %s, allocated %s, peak live %s, peak heap %s; %llu GCs (%llu major), %.1f%% "
             "in GC, longest pause %s; %llu censuses; %llu drop notices; waited %.1f ms for "
             "lossless clients",
             run, alloc, live, size, (unsigned long long)m->gcs, (unsigned long long)m->major_gcs,
             100 * es_model_gc_share(m, 0), mx, (unsigned long long)m->censuses,
             (unsigned long long)m->drops, m->lossless_wait_ms);
    put(y, 0, A_BOLD | A_STANDOUT, " program exited ");
    put_wrapped(y, 17, 2, lines, A_BOLD, text);
}

void es_top_draw(const struct es_top_view *v) {
    erase();
    if (LINES < 18 || COLS < 50) {
        put(0, 0, A_BOLD, "terminal too small: %dx%d", COLS, LINES);
        refresh();
        return;
    }
    int y = draw_header(v, 0);
    y = draw_heap(v, y + 1);
    y = draw_gc(v, y);
    y = draw_caps(v, y);
    y = es_top_sparks_draw(v->model, y, LINES >= 36 ? ES_TOP_SPARK_LINES : LINES >= 26 ? 3 : 1);
    y = draw_threads(v, y);
    y = draw_time(v, y);
    y = draw_spans(v, y);
    /* What is left: the census gets two thirds, markers the rest. */
    int footer = 4;
    int left = LINES - y - 1 - footer;
    int note_rows = left / 3 < 3 ? 3 : left / 3;
    if (note_rows > 8)
        note_rows = 8;
    int census_rows = left - note_rows - 2;
    draw_census(v, y + 1, census_rows);
    draw_notes(v, LINES - footer - note_rows - 1, note_rows);
    if (v->state == ES_TOP_EXITED)
        draw_summary(v, LINES - footer, footer - 1);
    else if (v->state == ES_TOP_LOST) {
        char lost[700];
        snprintf(lost, sizeof lost, "connection lost: %s", v->lost);
        put_wrapped(LINES - footer, 0, 2, footer - 1, A_STANDOUT, lost);
    }
    if (v->said != NULL)
        put(LINES - 1, 0, A_BOLD, "%s", v->said);
    else
        put(LINES - 1, 0, A_DIM, "c census now   p %s heap profiling   q quit",
            v->prof_paused ? "resume" : "pause");
    if (v->repaint)
        redrawwin(stdscr); /* curses forgets what it believes is on the terminal */
    refresh();
}
