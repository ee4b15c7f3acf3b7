/* `eventlog-socket top ADDR [--retry]`: a live full-screen view of a
 * running program from its eventlog (ncurses): heap with a short history,
 * the latest census with trends, GC counts, pauses and time in GC,
 * capabilities and threads, user markers and messages, drop notices, the
 * connection, and who the program is. Keys: c census now, p pause/resume
 * heap profiling, q quit. Redrawn about 4 times a second; the model
 * (model.h) is fed as bytes arrive, the screen only reads it. Runs on one
 * thread, the libuv loop's. */
#include "conn.h"
#include "opts.h"
#include "model.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REFRESH_MS 250
/* With --retry, the pause before connecting again after a session ended. */
#define RECONNECT_MS 200
/* GCTL command bytes (protocol.md section 2; CMD_* in
 * include/eventlog_socket.h, which needs the RTS's headers). */
#define CMD_START_HEAP_PROFILING 0x01
#define CMD_STOP_HEAP_PROFILING  0x02
#define CMD_REQUEST_HEAP_CENSUS  0x03
#define MINUTE_NS                60000000000ull

struct top {
    uv_loop_t *loop;
    const char *addr;
    struct es_conn_options opt;
    struct es_conn conns[2]; /* alternate on reconnection: a closed one's handles
                                finish closing while the other is in use */
    int cur;
    struct es_conn *conn;
    bool conn_open; /* conn was opened and not closed yet */
    struct es_model *model;
    /* After a program exited, a new session is read into `next` until it
     * shows it is another program (another pid, or a second of life): a
     * reconnection can still reach the exiting program, whose last
     * moments must not replace its final screen. */
    struct es_model *next;
    bool pending;
    uint64_t pending_ms;
    int exited_peer_pid;
    uv_timer_t reconnect;
    uv_timer_t timer;
    uv_poll_t keys;
    uv_signal_t sigint, sigterm;
    bool curses, utf8, quitting;
    int status;

    /* The connection, for the status line. */
    enum { CONNECTING, WAITING, LIVE, EXITED, LOST } state;
    char lost[600];
    uint64_t sessions; /* connections that delivered a header */
    uint64_t last_bytes, last_ms;
    double bytes_s;
    char proc_name[256]; /* the server's program from /proc, until the stream names it */

    /* What the user asked for. */
    bool prof_paused;
    char said[200]; /* the last key's effect */
    uint64_t said_ms;
};

static struct top the_top;

static void top_usage(FILE *f) {
    fprintf(f, "usage: eventlog-socket top ADDR [--retry] [--connect-timeout S]\n"
               "A live view of the program's heap, GC, capabilities, threads, heap census,\n"
               "markers and messages. Keys: c census now, p pause/resume heap profiling,\n"
               "q quit. With --retry it waits for the program and reconnects when it is\n"
               "restarted.\n");
}

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
static void sparkline(int y, int x, int width, const struct es_model_series *s) {
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
        if (the_top.utf8)
            addstr(bars[k]);
        else
            addch((chtype)ascii[k]);
    }
}

/* A bar of `width` cells filled `share` (0..1). */
static void bar(int y, int x, int width, double share) {
    if (y >= LINES || x + width > COLS)
        return;
    int full = (int)(share * width + 0.5);
    move(y, x);
    for (int i = 0; i < width; i++) {
        if (the_top.utf8)
            addstr(i < full ? "\xe2\x96\x88" : "\xe2\x96\x91");
        else
            addch(i < full ? '#' : '.');
    }
}

/* ---- The screen. */

static const char *breakdown_name(uint32_t b) {
    switch (b) {
    case 1:
        return "cost centre";
    case 2:
        return "module";
    case 3:
        return "closure description";
    case 4:
        return "type description";
    case 5:
        return "retainer";
    case 6:
        return "biography";
    case 7:
        return "closure type";
    case 8:
        return "info table";
    case 9:
        return "era";
    default:
        return "unknown";
    }
}

static const char *state_text(const struct top *t) {
    switch (t->state) {
    case CONNECTING:
        return "connecting";
    case WAITING:
        return "waiting for the program (--retry)";
    case LIVE:
        return "live";
    case EXITED:
        return t->opt.retry ? "program exited (--retry: waiting for the next run)"
                            : "program exited";
    case LOST:
        return "connection lost";
    }
    return "";
}

static int draw_header(struct top *t, int y) {
    const struct es_model *m = t->model;
    const char *name = m->program[0] ? m->program : t->proc_name[0] ? t->proc_name : "?";
    uint32_t pid = m->pid ? m->pid : (uint32_t)(t->conn->peer_pid > 0 ? t->conn->peer_pid : 0);
    char pidtxt[32] = "";
    if (pid)
        snprintf(pidtxt, sizeof pidtxt, " (pid %u)", pid);
    char rate[32], up[32];
    fmt_bytes(rate, sizeof rate, t->bytes_s);
    fmt_duration(up, sizeof up, m->now);
    move(y, 0);
    clrtoeol();
    put(y, 0, A_REVERSE | A_BOLD, " %s%s  GHC %s  up %s ", name, pidtxt,
        m->ghc_version[0] ? m->ghc_version : "?", up);
    int x = getcurx(stdscr) + 1;
    attr_t sa = t->state == LIVE ? A_BOLD : t->state == EXITED ? A_BOLD | A_STANDOUT : A_STANDOUT;
    put(y, x, sa, "%s", state_text(t));
    x = getcurx(stdscr);
    put(y, x, A_NORMAL, "  %s  %s/s", t->conn->name, rate);
    return y + 1;
}

static int draw_heap(struct top *t, int y) {
    const struct es_model *m = t->model;
    char a[32], b[32];
    int spark_x = 32, spark_w = COLS - spark_x - 1;
    if (spark_w > ES_MODEL_SERIES)
        spark_w = ES_MODEL_SERIES;
    put(y, 0, A_BOLD, "Heap");
    fmt_bytes(a, sizeof a, (double)m->heap_live);
    fmt_bytes(b, sizeof b, (double)m->max_heap_live);
    put(y, 6, A_NORMAL, "live  %10s", a);
    sparkline(y, spark_x, spark_w - 16, &m->s_live);
    put(y, COLS - 16 > spark_x ? COLS - 16 : COLS, A_DIM, "max %s", b);
    y++;
    fmt_bytes(a, sizeof a, (double)m->heap_size);
    fmt_bytes(b, sizeof b, (double)m->max_heap_size);
    put(y, 6, A_NORMAL, "size  %10s", a);
    sparkline(y, spark_x, spark_w - 16, &m->s_size);
    put(y, COLS - 16 > spark_x ? COLS - 16 : COLS, A_DIM, "max %s", b);
    y++;
    fmt_bytes(a, sizeof a, m->alloc_rate);
    fmt_bytes(b, sizeof b, (double)m->allocated);
    put(y, 6, A_NORMAL, "alloc %8s/s", a);
    sparkline(y, spark_x, spark_w - 16, &m->s_alloc);
    put(y, COLS - 16 > spark_x ? COLS - 16 : COLS, A_DIM, "tot %s", b);
    return y + 1;
}

static int draw_gc(struct top *t, int y) {
    const struct es_model *m = t->model;
    char p50[16], p99[16], mx[16], s50[16], s99[16], smx[16];
    fmt_ns(p50, sizeof p50, es_model_pause_pct(m, 0.5, MINUTE_NS));
    fmt_ns(p99, sizeof p99, es_model_pause_pct(m, 0.99, MINUTE_NS));
    fmt_ns(mx, sizeof mx, es_model_pause_max(m, MINUTE_NS));
    fmt_ns(s50, sizeof s50, es_model_pause_pct(m, 0.5, 0));
    fmt_ns(s99, sizeof s99, es_model_pause_pct(m, 0.99, 0));
    fmt_ns(smx, sizeof smx, m->pause_max);
    put(y, 0, A_BOLD, "GC");
    put(y, 6, A_NORMAL, "%llu collections: %llu minor, %llu major   in GC %.1f%% (last min %.1f%%)",
        (unsigned long long)m->gcs, (unsigned long long)m->minor_gcs,
        (unsigned long long)m->major_gcs, 100 * es_model_gc_share(m, 0),
        100 * es_model_gc_share(m, MINUTE_NS));
    y++;
    put(y, 6, A_NORMAL, "pause p50/p99/max  last min %s/%s/%s  since start %s/%s/%s", p50, p99, mx,
        s50, s99, smx);
    return y + 1;
}

static int draw_caps(struct top *t, int y) {
    const struct es_model *m = t->model;
    put(y, 0, A_BOLD, "Caps");
    char th[48];
    snprintf(th, sizeof th, "threads %zu%s", es_model_threads(m), m->threads_saturated ? "+" : "");
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
        bar(y, x + 3, 8, share);
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

static int draw_census(struct top *t, int y, int rows) {
    const struct es_model *m = t->model;
    char tot[32], when[32];
    put(y, 0, A_BOLD, "Census");
    if (!m->heap_prof && m->censuses == 0) {
        put(y, 8, A_DIM,
            "none yet: run the program with +RTS -hT (GHC 9.0: censuses come at exit)");
        return y + 1;
    }
    if (m->censuses == 0) {
        put(y, 8, A_DIM, "by %s, every %.2f s; no census yet (c asks for one)",
            breakdown_name(m->breakdown), (double)m->heap_interval_ns / 1e9);
        return y + 1;
    }
    fmt_bytes(tot, sizeof tot, (double)m->cur.total);
    fmt_duration(when, sizeof when, m->cur.time);
    put(y, 8, A_NORMAL, "#%llu at %s, by %s: %s in %zu labels%s", (unsigned long long)m->censuses,
        when, breakdown_name(m->breakdown), tot, m->cur.n,
        t->prof_paused ? "  (timed samples paused)" : "");
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
        put(y, 2, A_NORMAL, "%10s  %10s  %s", b, tr, es_model_label(m, e->label));
    }
    return y;
}

static int draw_notes(struct top *t, int y, int rows) {
    const struct es_model *m = t->model;
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
    /* What streaming costs the program in CPU time, from the cost notices
     * this connection asked for (protocol.md 1.3). */
    if (m->cost_notices) {
        double gib = es_model_cost_s_per_gib(m);
        char per[48];
        if (gib >= 0)
            snprintf(per, sizeof per, "%.2f s per GiB", gib);
        else
            snprintf(per, sizeof per, "nothing sent yet");
        put(y++, 2, A_BOLD,
            "streaming costs the program %.1f ms CPU/s (%s): RTS %.1f, walker %.1f, loop %.1f",
            m->cost_ms_per_s, per, m->cost_rts_ms_per_s, m->cost_walker_ms_per_s,
            m->cost_loop_ms_per_s);
        if (rows > 0)
            rows--;
    }
    uint64_t n = m->notes_n < ES_MODEL_NOTES ? m->notes_n : ES_MODEL_NOTES;
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
static void draw_summary(struct top *t, int y, int lines) {
    const struct es_model *m = t->model;
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

static void draw(struct top *t) {
    erase();
    if (LINES < 18 || COLS < 50) {
        put(0, 0, A_BOLD, "terminal too small: %dx%d", COLS, LINES);
        refresh();
        return;
    }
    int y = draw_header(t, 0);
    y = draw_heap(t, y + 1);
    y = draw_gc(t, y);
    y = draw_caps(t, y);
    /* What is left: the census gets two thirds, markers the rest. */
    int footer = 4;
    int left = LINES - y - 1 - footer;
    int note_rows = left / 3 < 3 ? 3 : left / 3;
    if (note_rows > 8)
        note_rows = 8;
    int census_rows = left - note_rows - 2;
    y = draw_census(t, y + 1, census_rows);
    y = draw_notes(t, LINES - footer - note_rows - 1, note_rows);
    (void)y;
    if (t->state == EXITED)
        draw_summary(t, LINES - footer, footer - 1);
    else if (t->state == LOST) {
        char lost[700];
        snprintf(lost, sizeof lost, "connection lost: %s", t->lost);
        put_wrapped(LINES - footer, 0, 2, footer - 1, A_STANDOUT, lost);
    }
    if (t->said[0] && uv_now(t->loop) - t->said_ms < 5000)
        put(LINES - 1, 0, A_BOLD, "%s", t->said);
    else
        put(LINES - 1, 0, A_DIM, "c census now   p %s heap profiling   q quit",
            t->prof_paused ? "resume" : "pause");
    refresh();
}

/* ---- Connection. */

static void open_conn(struct top *t);
static void draw(struct top *t);

static void say(struct top *t, const char *msg) {
    snprintf(t->said, sizeof t->said, "%s", msg);
    t->said_ms = uv_now(t->loop);
}

/* A session whose program is now on screen. */
static void become_live(struct top *t, struct es_conn *c) {
    t->state = LIVE;
    t->sessions++;
    t->prof_paused = false;
    t->proc_name[0] = '\0';
    if (c->peer_pid > 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/cmdline", c->peer_pid);
        FILE *f = fopen(path, "rb");
        if (f) {
            char arg0[256];
            size_t n = fread(arg0, 1, sizeof arg0 - 1, f);
            fclose(f);
            arg0[n] = '\0';
            const char *slash = strrchr(arg0, '/');
            snprintf(t->proc_name, sizeof t->proc_name, "%s", slash ? slash + 1 : arg0);
        }
    }
}

static void promote(struct top *t, struct es_conn *c) {
    struct es_model *old = t->model;
    t->model = t->next;
    t->next = old;
    t->pending = false;
    become_live(t, c);
}

static void on_header(struct es_conn *c, void *ctx) {
    struct top *t = ctx;
    if (t->state == EXITED) {
        t->pending = true;
        t->pending_ms = uv_now(t->loop);
        es_model_reset(t->next);
        es_model_header(t->next, &c->stream.header);
        return;
    }
    /* The first program, or one after a lost connection: start afresh. */
    es_model_reset(t->model);
    es_model_header(t->model, &c->stream.header);
    become_live(t, c);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)offset;
    struct top *t = ctx;
    if (!t->pending) {
        es_model_event(t->model, ev);
        return;
    }
    es_model_event(t->next, ev);
    uint32_t now_pid = t->next->pid ? t->next->pid : (uint32_t)(c->peer_pid > 0 ? c->peer_pid : 0);
    uint32_t old_pid = t->model->pid ? t->model->pid : (uint32_t)t->exited_peer_pid;
    if ((now_pid && old_pid && now_pid != old_pid) || uv_now(t->loop) - t->pending_ms >= 1000)
        promote(t, c);
}

static void on_reconnect(uv_timer_t *timer) {
    struct top *t = timer->data;
    if (!t->quitting)
        open_conn(t);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct top *t = ctx;
    bool had_header = c->stream.state != ES_STREAM_HEADER;
    if (t->pending) {
        /* The exiting program's last moments: keep its final screen. */
        t->pending = false;
    } else if (how == ES_CONN_COMPLETE) {
        es_model_end(t->model);
        t->state = EXITED;
        t->exited_peer_pid = c->peer_pid;
    } else if (how == ES_CONN_FAILED && !had_header && t->sessions == 0 && !t->opt.retry) {
        /* Nothing to show at all: say why on the terminal and stop. */
        snprintf(t->lost, sizeof t->lost, "%s", c->error);
        t->status = 2;
        t->quitting = true;
        uv_stop(t->loop);
        return;
    } else {
        snprintf(t->lost, sizeof t->lost, "%s", c->error);
        t->state = t->opt.retry ? WAITING : LOST;
        t->exited_peer_pid = c->peer_pid;
    }
    if (t->opt.retry) {
        /* The program may be restarted: keep its last screen until a new
         * one appears. A moment's pause lets an exiting program go. */
        es_conn_close(c);
        t->conn_open = false;
        t->cur ^= 1;
        t->conn = &t->conns[t->cur];
        uv_timer_start(&t->reconnect, on_reconnect, RECONNECT_MS, 0);
    }
    draw(t);
}

static void open_conn(struct top *t) {
    struct es_conn_callbacks cb = {
        .on_header = on_header, .on_event = on_event, .on_end = on_end, .ctx = t};
    t->conn = &t->conns[t->cur];
    if (es_conn_open(t->conn, t->loop, t->addr, &t->opt, &cb) != 0) {
        snprintf(t->lost, sizeof t->lost, "%s", t->conn->error);
        t->status = 2;
        t->quitting = true;
        uv_stop(t->loop);
        return;
    }
    t->conn_open = true;
    /* The screen is ours: no "waiting" line on stderr. */
    t->conn->said_waiting = true;
    t->last_bytes = 0;
}

/* ---- Keys and the clock. */

static void send_command(struct top *t, uint8_t cmd, const char *what) {
    char msg[200];
    int r = t->state == LIVE ? es_conn_send_command(t->conn, cmd) : UV_ENOTCONN;
    if (r == 0)
        snprintf(msg, sizeof msg, "%s: sent", what);
    else
        snprintf(msg, sizeof msg, "%s: not sent (%s)", what,
                 r == UV_ENOTCONN ? "not connected" : uv_strerror(r));
    say(t, msg);
}

static void quit(struct top *t) {
    t->quitting = true;
    uv_stop(t->loop);
}

static void handle_keys(struct top *t) {
    int ch;
    while ((ch = getch()) != ERR) {
        switch (ch) {
        case 'q':
        case 'Q':
            quit(t);
            return;
        case 'c':
        case 'C':
            send_command(t, CMD_REQUEST_HEAP_CENSUS, "census");
            break;
        case 'p':
        case 'P':
            if (t->prof_paused) {
                send_command(t, CMD_START_HEAP_PROFILING, "resume heap profiling");
                t->prof_paused = false;
            } else {
                send_command(t, CMD_STOP_HEAP_PROFILING, "pause heap profiling");
                t->prof_paused = true;
            }
            break;
        case KEY_RESIZE:
            break;
        default:
            break;
        }
        draw(t);
    }
}

static void on_keys(uv_poll_t *p, int status, int events) {
    (void)status;
    (void)events;
    handle_keys(p->data);
}

static void on_tick(uv_timer_t *timer) {
    struct top *t = timer->data;
    uint64_t now = uv_now(t->loop), bytes = t->conn->info.bytes;
    if (t->last_ms && now > t->last_ms) {
        double rate = bytes >= t->last_bytes
                          ? (double)(bytes - t->last_bytes) * 1000.0 / (double)(now - t->last_ms)
                          : 0;
        /* Smoothed over about a second: blocks arrive in bursts. */
        t->bytes_s += (rate - t->bytes_s) * 0.25;
    }
    t->last_ms = now;
    t->last_bytes = bytes;
    if (t->state == CONNECTING && t->opt.retry && t->sessions == 0)
        t->state = WAITING;
    if (t->pending && now - t->pending_ms >= 1000)
        promote(t, t->conn);
    /* A resize is reported by getch (ncurses catches SIGWINCH). */
    handle_keys(t);
    if (!t->quitting)
        draw(t);
}

static void on_signal(uv_signal_t *s, int signum) {
    (void)signum;
    quit(s->data);
}

int es_top_main(int argc, char **argv) {
    struct top *t = &the_top;
    es_conn_default_options(&t->opt);
    t->opt.cost_notices = true;
    const struct es_opts_spec spec = {.cmd = "top",
                                      .conn = &t->opt,
                                      .usage = top_usage,
                                      .pos = &t->addr,
                                      .npos = 1,
                                      .required = 1};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    if (!isatty(0) || !isatty(1)) {
        fprintf(stderr, "eventlog-socket top: needs a terminal (for a file, use `heap` or "
                        "`record`)\n");
        return 2;
    }
    t->model = malloc(sizeof *t->model);
    t->next = malloc(sizeof *t->next);
    if (t->model == NULL || t->next == NULL) {
        fprintf(stderr, "eventlog-socket top: out of memory\n");
        return 2;
    }
    es_model_init(t->model);
    es_model_init(t->next);
    t->loop = uv_default_loop();
    uv_timer_init(t->loop, &t->reconnect);
    t->reconnect.data = t;
    t->state = CONNECTING;
    open_conn(t);
    if (t->quitting) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", t->conn->name, t->lost);
        return 2;
    }

    setlocale(LC_ALL, "");
    t->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    initscr();
    t->curses = true;
    cbreak();
    noecho();
    nodelay(stdscr, TRUE);
    keypad(stdscr, TRUE);
    curs_set(0);

    uv_timer_init(t->loop, &t->timer);
    t->timer.data = t;
    uv_timer_start(&t->timer, on_tick, 0, REFRESH_MS);
    uv_poll_init(t->loop, &t->keys, 0);
    t->keys.data = t;
    uv_poll_start(&t->keys, UV_READABLE, on_keys);
    uv_signal_init(t->loop, &t->sigint);
    uv_signal_init(t->loop, &t->sigterm);
    t->sigint.data = t->sigterm.data = t;
    uv_signal_start(&t->sigint, on_signal, SIGINT);
    uv_signal_start(&t->sigterm, on_signal, SIGTERM);

    uv_run(t->loop, UV_RUN_DEFAULT);
    endwin();

    /* Close everything and let the loop finish the closing. */
    if (t->conn_open)
        es_conn_close(t->conn);
    uv_close((uv_handle_t *)&t->timer, NULL);
    uv_close((uv_handle_t *)&t->reconnect, NULL);
    uv_close((uv_handle_t *)&t->keys, NULL);
    uv_close((uv_handle_t *)&t->sigint, NULL);
    uv_close((uv_handle_t *)&t->sigterm, NULL);
    uv_run(t->loop, UV_RUN_DEFAULT);
    uv_loop_close(t->loop);
    if (t->status == 2)
        fprintf(stderr, "eventlog-socket: %s: %s\n", t->conn->name, t->lost);
    else if (t->state == EXITED)
        fprintf(stderr, "eventlog-socket: %s: the program exited (%llu GCs, %llu censuses)\n",
                t->model->program[0] ? t->model->program : t->conn->name,
                (unsigned long long)t->model->gcs, (unsigned long long)t->model->censuses);
    es_model_destroy(t->model);
    free(t->model);
    es_model_destroy(t->next);
    free(t->next);
    return t->status;
}
