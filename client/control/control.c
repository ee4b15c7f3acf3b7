/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket control ADDR start|stop|census [--wait] [--timeout S]`:
 * send one control frame (protocol.md section 2) and, with --wait, read the
 * stream until its effect shows: a heap sample after the request (census,
 * start), or heap samples no longer coming (stop).
 * `control ADDR events [on|off CLASSES]`: ask which event classes are on
 * (the answer is a notice in this connection's stream), and switch some:
 * refused here when the program says it cannot switch them, done when the
 * switch's notice says they are as asked. Runs on one thread, the libuv
 * loop's. */
#include "format/es_classes.h"
#include "format/es_events.h"
#include "format/es_header.h"
#include "format/es_notice_text.h"
#include "format/es_payload.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "help.h"
#include "model/model.h"
#include "opts.h"
#include "source/heapmode.h"
#include "source/session.h"
#include "source/units.h"
#include "subcommands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Without --wait, how long to read the stream after sending for it to
 * tell whether the program has a heap profiling mode at all. */
#define GRACE_MS 2000

/* What "samples stopped" means: no heap sample for this long in program
 * time after the request, or three sampling intervals if longer. */
#define STOP_QUIET_NS 500000000ull

enum what { CENSUS, START, STOP, EVENTS };

struct control {
    struct es_session ses;
    enum what what;
    const char *word;
    bool wait;
    double timeout;
    uv_timer_t timer;
    bool sent;
    uint64_t sent_ns;        /* uv_hrtime() of the request */
    uint64_t sent_wall_ns;   /* wall-clock time of the request */
    uint64_t latest_at_send; /* program time seen when the request went out */
    bool have_wall;          /* a WALL_CLOCK_TIME event: program time <-> wall clock */
    uint64_t wall_event_time, wall_event_ns;
    uint64_t first_after; /* program time of the first sample after the request, 0 */
    uint64_t last_after;  /* of the latest one */
    bool done;
    int status;
    /* Whether the program has a heap profiling mode, as far as the stream
     * (or, for GHC 9.0, the server's process) says. */
    struct es_heapmode hm;
    bool no_flush;    /* GHC 9.0's header (es_model_header_no_flush) */
    uv_timer_t grace; /* without --wait: GRACE_MS to find out */
    /* events: the classes to switch on and off (none: only ask), and
     * whether the program's answer (its report) has come, and the switch
     * gone out. */
    unsigned ev_on, ev_off;
    const char *ev_words; /* as the user wrote them */
    bool reported, switched;
};

static enum es_heapmode_verdict heap_mode(const struct control *k) {
    return es_heapmode_verdict(&k->hm);
}

static void say_no_mode(const struct control *k) {
    fprintf(stderr, "eventlog-socket: %s: %s: " ES_HEAPMODE_OFF_TEXT "\n", k->ses.conn->name,
            k->word);
}

static uint64_t wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The program time of the request: from the wall clock when the stream
 * has told how its clock maps to it, else the latest program time seen when
 * it went out (which, for a client reading an old backlog, is too early). */
static uint64_t request_time(const struct control *k) {
    if (k->have_wall) {
        int64_t t =
            (int64_t)k->wall_event_time + ((int64_t)k->sent_wall_ns - (int64_t)k->wall_event_ns);
        return t > 0 ? (uint64_t)t : 0;
    }
    return k->latest_at_send;
}

static void close_all(struct control *k) {
    es_session_close(&k->ses);
    if (!uv_is_closing((uv_handle_t *)&k->timer))
        uv_close((uv_handle_t *)&k->timer, NULL);
    if (!uv_is_closing((uv_handle_t *)&k->grace))
        uv_close((uv_handle_t *)&k->grace, NULL);
}

static void finish(struct control *k, int status) {
    if (k->done)
        return;
    k->done = true;
    k->status = status;
    close_all(k);
}

static double secs(uint64_t ns) {
    return (double)ns / 1e9;
}

/* Without --wait: "sent", unless the stream says no heap sample can come. */
static void sent_line(struct control *k, bool decided) {
    enum es_heapmode_verdict mode = heap_mode(k);
    if (mode == ES_HEAPMODE_OFF) {
        say_no_mode(k);
        finish(k, 1);
        return;
    }
    if (mode == ES_HEAPMODE_UNKNOWN && !decided)
        return; /* read on, up to GRACE_MS */
    printf("%s: sent to %s\n", k->word, k->ses.conn->name);
    if (k->no_flush)
        printf("%s: %s, so heap samples come when the program exits\n", k->word,
               ES_MODEL_GHC90_NOTE);
    finish(k, 0);
}

static void hint(struct control *k);

/* Has the effect shown? Prints the line and finishes when it has. */
static void judge(struct control *k) {
    if (!k->sent || k->done || k->what == EVENTS)
        return;
    if (!k->wait) {
        sent_line(k, false);
        return;
    }
    if (heap_mode(k) == ES_HEAPMODE_OFF && k->ses.conn->info.heap_samples == 0) {
        say_no_mode(k);
        finish(k, 1);
        return;
    }
    uint64_t req = request_time(k);
    const struct es_conn_info *in = &k->ses.conn->info;
    double waited = (double)(uv_hrtime() - k->sent_ns) / 1e9;
    if (k->what != STOP) {
        if (k->first_after == 0)
            return;
        printf("%s: heap sample at program time %.3f s, %.3f s after the request (seen after "
               "%.3f s)\n",
               k->word, secs(k->first_after), secs(k->first_after > req ? k->first_after - req : 0),
               waited);
        /* A -hb census comes only at exit: the sample seen is empty. */
        const char *lack = es_model_breakdown_lack(in->heap_breakdown, false);
        if (lack != NULL && in->heap_breakdown == ES_MODEL_BY_BIOGRAPHY)
            fprintf(stderr, "note: %s\n", lack);
        finish(k, 0);
        return;
    }
    uint64_t quiet =
        in->heap_period_ns * 3 > STOP_QUIET_NS ? in->heap_period_ns * 3 : STOP_QUIET_NS;
    uint64_t from = k->last_after > req ? k->last_after : req;
    if (in->latest_time < from + quiet)
        return;
    if (k->last_after != 0)
        printf("stop: heap samples stopped, the last at program time %.3f s (%.3f s after the "
               "request; none for %.3f s since; seen after %.3f s)\n",
               secs(k->last_after), secs(k->last_after - req),
               secs(in->latest_time - k->last_after), waited);
    else
        printf("stop: no heap sample after the request (program time %.3f s; none for %.3f s "
               "since; seen after %.3f s)\n",
               secs(req), secs(in->latest_time - req), waited);
    finish(k, 0);
}

/* ---- events: the event classes ------------------------------------------ */

static void print_classes(const struct control *k, unsigned on, unsigned fixed, const char *text) {
    char a[128], b[128];
    es_classes_words(a, sizeof a, on);
    es_classes_words(b, sizeof b, ES_CLASSES_ALL & ~on);
    printf("event classes of %s:\n  on:  %s\n  off: %s\n", k->ses.conn->name, a, b);
    if (fixed != 0) {
        const char *why = strstr(text, " (");
        es_classes_words(a, sizeof a, fixed);
        printf("  cannot be switched here: %s%s\n", a, why != NULL ? why : "");
    }
}

/* The program's report came (`n`, the notice's own `text`): print it, or
 * refuse a switch it cannot make, or send the switch. */
static void on_report(struct control *k, const struct es_classes_notice *n, const char *text) {
    k->reported = true;
    unsigned want = k->ev_on | k->ev_off;
    if (want == 0) {
        print_classes(k, n->on, n->fixed, text);
        finish(k, 0);
        return;
    }
    if ((want & n->fixed) != 0) {
        char a[128];
        const char *why = strstr(text, " (");
        es_classes_words(a, sizeof a, want & n->fixed);
        fprintf(stderr,
                "eventlog-socket: %s: events %s %s: %s cannot be switched in this "
                "program%s\n",
                k->ses.conn->name, k->ev_on != 0 ? "on" : "off", k->ev_words, a,
                why != NULL ? why : "");
        finish(k, 1);
        return;
    }
    /* "GCTL", the switch's byte, then the classes. */
    const uint8_t frame[] = {'G',
                             'C',
                             'T',
                             'L',
                             k->ev_on != 0 ? EVENTLOG_SOCKET_CMD_EVENTS_ON
                                           : EVENTLOG_SOCKET_CMD_EVENTS_OFF,
                             (uint8_t)(k->ev_on != 0 ? k->ev_on : k->ev_off)};
    int r = es_conn_send(k->ses.conn, frame, sizeof frame);
    if (r < 0) {
        fprintf(stderr, "eventlog-socket: %s: cannot send: %s\n", k->ses.conn->name,
                uv_strerror(r));
        finish(k, 2);
        return;
    }
    k->switched = true;
}

/* A switch's notice: done when the classes are as asked. */
static void on_switched(struct control *k, const struct es_classes_notice *n) {
    if (!k->switched || (n->on & k->ev_on) != k->ev_on || (n->on & k->ev_off) != 0)
        return;
    char a[128];
    es_classes_words(a, sizeof a, n->on);
    printf("events %s %s: switched; on now: %s\n", k->ev_on != 0 ? "on" : "off", k->ev_words, a);
    finish(k, 0);
}

/* A message in the stream: an event classes notice is this command's. */
static void classes_message(struct control *k, const struct es_event *ev) {
    struct es_payload r = es_payload_of(ev);
    size_t len;
    const uint8_t *s = es_payload_peek(&r, &len);
    size_t k0 = sizeof ES_NOTICE_PREFIX - 1;
    struct es_classes_notice n;
    if (len <= k0 || memcmp(s, ES_NOTICE_PREFIX, k0) != 0 ||
        !es_classes_read((const char *)s + k0, len - k0, &n))
        return;
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)(len - k0), (const char *)s + k0);
    if (!n.switched && !k->reported)
        on_report(k, &n, text);
    else if (n.switched)
        on_switched(k, &n);
}

static void on_header(struct es_conn *c, void *ctx) {
    struct control *k = ctx;
    if (k->what == EVENTS) {
        /* First the program's answer: which classes it can switch. */
        int r = es_conn_send_command(c, EVENTLOG_SOCKET_CMD_EVENT_CLASSES);
        if (r < 0) {
            fprintf(stderr, "eventlog-socket: %s: cannot send: %s\n", c->name, uv_strerror(r));
            finish(k, 2);
            return;
        }
        k->sent = true;
        return;
    }
    static const uint8_t command[] = {
        [CENSUS] = EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS,
        [START] = EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING,
        [STOP] = EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING,
    };
    /* The request's time is taken before it goes out: the program can
     * take the census before this process runs again after the write (a
     * loaded machine), and a census stamped before the request's time is
     * not the answer, so an idle program would leave --wait waiting. */
    k->sent_ns = uv_hrtime();
    k->sent_wall_ns = wall_ns();
    k->latest_at_send = c->info.latest_time;
    int r = es_conn_send_command(c, command[k->what]);
    if (r < 0) {
        fprintf(stderr, "eventlog-socket: %s: cannot send: %s\n", c->name, uv_strerror(r));
        finish(k, 2);
        return;
    }
    k->sent = true;
    k->no_flush = es_model_header_no_flush(&c->stream.header);
    /* The server's process, over loopback TCP too (as record finds it). */
    es_heapmode_header(&k->hm, &c->stream.header, es_conn_peer_pid(c));
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)offset;
    (void)c;
    struct control *k = ctx;
    if (k->what == EVENTS) {
        if (ev->type == ES_EVENT_USER_MSG && !k->done)
            classes_message(k, ev);
        return;
    }
    if (ev->type == ES_EVENT_WALL_CLOCK_TIME && !k->have_wall) {
        /* u32 capset, u64 seconds, u32 nanoseconds: the wall clock at the
         * event's program time. */
        struct es_payload r = es_payload_of(ev);
        es_payload_skip(&r, 4);
        uint64_t s = es_payload_u64(&r);
        uint32_t ns = es_payload_u32(&r);
        if (es_payload_ok(&r)) {
            k->have_wall = true;
            k->wall_event_time = ev->time;
            k->wall_event_ns = s * 1000000000ull + ns;
        }
    }
    es_heapmode_event(&k->hm, ev);
    if (ev->type == ES_EVENT_HEAP_PROF_SAMPLE_BEGIN && k->sent) {
        /* A census is stamped when it is taken, after the request. */
        if (ev->time > request_time(k)) {
            if (k->first_after == 0)
                k->first_after = ev->time;
            if (ev->time > k->last_after)
                k->last_after = ev->time;
        }
    }
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    (void)c;
    (void)data;
    (void)n;
    judge(ctx);
}

static void on_timeout(uv_timer_t *t);

static void on_grace(uv_timer_t *t) {
    struct control *k = t->data;
    if (!k->done)
        sent_line(k, true);
}

static void on_sent(struct es_conn *c, int status, void *ctx) {
    struct control *k = ctx;
    if (status < 0) {
        fprintf(stderr, "eventlog-socket: %s: cannot send: %s\n", c->name, uv_strerror(status));
        finish(k, 2);
        return;
    }
    if (k->what == EVENTS) {
        uv_timer_start(&k->timer, on_timeout, (uint64_t)(k->timeout * 1000 + 0.5), 0);
        return;
    }
    if (!k->wait) {
        uv_timer_start(&k->grace, on_grace, GRACE_MS, 0);
        judge(k);
        return;
    }
    if (k->no_flush && heap_mode(k) != ES_HEAPMODE_OFF) {
        /* GHC 9.0 sends heap samples only at exit: nothing to wait for. */
        printf("%s: sent to %s\n", k->word, c->name);
        fprintf(stderr,
                "eventlog-socket: %s: %s: not waiting: %s, so the %s can only be seen when the "
                "program exits (record it, or `eventlog-socket heap %s --hp FILE`, until then)\n",
                c->name, k->word, ES_MODEL_GHC90_NOTE,
                k->what == STOP ? "end of heap samples" : "heap sample", c->name);
        if (heap_mode(k) == ES_HEAPMODE_UNKNOWN)
            hint(k);
        finish(k, 1);
        return;
    }
    uv_timer_start(&k->timer, on_timeout, (uint64_t)(k->timeout * 1000 + 0.5), 0);
    judge(k);
}

/* Why nothing showed, when the stream can tell. */
static void hint(struct control *k) {
    switch (heap_mode(k)) {
    case ES_HEAPMODE_OFF:
        fprintf(stderr, "hint: the program runs without a heap profiling mode, so heap "
                        "commands are ignored: start it with +RTS -hT (or another -h mode)\n");
        return;
    case ES_HEAPMODE_ON:
        if (k->no_flush)
            fprintf(stderr,
                    "hint: %s: heap samples come with the RTS's global buffer, when it fills "
                    "or the program exits, so they cannot be seen live; use GHC 9.2 or later "
                    "(docs/performance.md, \"GHC 9.0 cannot flush\")\n",
                    ES_MODEL_GHC90_NOTE);
        else
            fprintf(stderr, "hint: the program has a heap profiling mode, but its samples did "
                            "not reach the stream: is periodic flushing off "
                            "(GHC_EVENTLOG_FLUSH_INTERVAL_MS=0, or a -dynamic program started "
                            "from Haskell)?\n");
        return;
    case ES_HEAPMODE_UNKNOWN:
        if (!k->no_flush && k->hm.args)
            fprintf(stderr, "hint: the program's arguments name no heap profiling mode: start "
                            "it with +RTS -hT (or another -h mode)\n");
        else
            fprintf(stderr, "hint: %s%s; is it running with a heap profiling mode (+RTS -hT)?\n",
                    k->no_flush ? ES_MODEL_GHC90_NOTE ", and " : "",
                    k->no_flush ? "the stream cannot say yet how the program was started"
                                : "the stream has not yet said how the program was started");
        return;
    }
}

/* events: what did not come. */
static void events_missing(struct control *k, const char *when) {
    if (!k->reported)
        fprintf(stderr,
                "eventlog-socket: %s: events: the program did not say which event classes are "
                "on %s (a program with an older eventlog-socket library has no such command)\n",
                k->ses.conn->name, when);
    else
        fprintf(stderr, "eventlog-socket: %s: events %s %s: the switch was not told %s\n",
                k->ses.conn->name, k->ev_on != 0 ? "on" : "off", k->ev_words, when);
    finish(k, 1);
}

static void on_timeout(uv_timer_t *t) {
    struct control *k = t->data;
    if (k->done)
        return;
    if (k->what == EVENTS) {
        char when[64];
        snprintf(when, sizeof when, "within %g s", k->timeout);
        events_missing(k, when);
        return;
    }
    fprintf(stderr, "eventlog-socket: %s: %s: %s within %g s\n", k->ses.conn->name, k->word,
            k->what == STOP ? "heap samples did not stop" : "no heap sample arrived", k->timeout);
    hint(k);
    finish(k, 1);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct control *k = ctx;
    if (k->done)
        return;
    if (how == ES_CONN_FAILED) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, c->error);
        finish(k, 2);
        return;
    }
    if (k->what == EVENTS) {
        events_missing(k, how == ES_CONN_COMPLETE ? "before it exited" : "before its stream ended");
        return;
    }
    if (k->sent && !k->wait) {
        sent_line(k, true);
        return;
    }
    judge(k);
    if (k->done)
        return;
    fprintf(stderr,
            "eventlog-socket: %s: %s: the program's stream ended (%s) before the effect "
            "showed\n",
            c->name, k->word, how == ES_CONN_COMPLETE ? "it exited" : c->error);
    hint(k);
    finish(k, 1);
}

static void on_signal(void *ctx, int signum, const char *why) {
    (void)signum;
    (void)why;
    struct control *k = ctx;
    fprintf(stderr, "eventlog-socket: %s: %s: interrupted\n", k->ses.conn->name, k->word);
    finish(k, 1);
}

/* The words after ADDR and the command: none but for events, which may
 * say `on CLASSES` or `off CLASSES`. Returns 0, or 2 after saying why. */
static int parse_events(struct control *k, const char *const *pos) {
    if (k->what != EVENTS && pos[2] != NULL) {
        fprintf(stderr, "eventlog-socket control: unexpected argument %s\n", pos[2]);
        return 2;
    }
    if (k->what != EVENTS || pos[2] == NULL)
        return 0;
    bool on = strcmp(pos[2], "on") == 0;
    if (!on && strcmp(pos[2], "off") != 0) {
        fprintf(stderr, "eventlog-socket control: events %s: say on or off, then the classes\n",
                pos[2]);
        return 2;
    }
    char bad[64];
    unsigned m;
    if (pos[3] == NULL || es_classes_parse(pos[3], &m, bad, sizeof bad) != 0) {
        fprintf(stderr,
                "eventlog-socket control: events %s: %s%sname the classes: scheduler, gc, "
                "nonmoving-gc, sparks-sampled, sparks-full, user, all, comma-separated (or "
                "+RTS -l's letters s, g, n, p, f, u)\n",
                pos[2], pos[3] != NULL ? bad : "", pos[3] != NULL ? " is no class; " : "");
        return 2;
    }
    k->ev_on = on ? m : 0;
    k->ev_off = on ? 0 : m;
    k->ev_words = pos[3];
    return 0;
}

int es_control_main(int argc, char **argv) {
    static struct control ctl;
    struct control *k = &ctl;
    es_session_init(&k->ses);
    k->timeout = 10;
    const char *pos[4] = {NULL, NULL, NULL, NULL};
    const struct es_opt opts[] = {{"--wait", NULL, ES_OPT_FLAG, &k->wait, 0, NULL, NULL, false},
                                  {"--timeout", NULL, ES_OPT_SECONDS, &k->timeout, 1e7,
                                   "--timeout needs a duration (" ES_UNITS_GRAMMAR ")",
                                   "%s %s: not a duration above 0 (" ES_UNITS_GRAMMAR ")", false},
                                  {0}};
    const struct es_opts_spec spec = {
        .cmd = "control",
        .opts = opts,
        .conn = &k->ses.opt,
        .pos = pos,
        .npos = 4,
        .required = 2,
        .pos_names = (const char *[]){"ADDR", "start|stop|census|events", "on|off", "CLASSES"},
        .too_many = "unexpected argument %s"};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    const char *addr = pos[0];
    k->word = pos[1];
    if (strcmp(k->word, "census") == 0)
        k->what = CENSUS;
    else if (strcmp(k->word, "start") == 0)
        k->what = START;
    else if (strcmp(k->word, "stop") == 0)
        k->what = STOP;
    else if (strcmp(k->word, "events") == 0)
        k->what = EVENTS;
    else {
        static const char *const words[] = {"start", "stop", "census", "events", NULL};
        const char *near = es_help_nearest_word(k->word, words);
        fprintf(stderr, "eventlog-socket control: %s is not start, stop, census or events%s%s%s\n",
                k->word, near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
        es_help_usage(stderr, es_help_page("control"));
        return 2;
    }
    if (parse_events(k, pos) != 0)
        return 2;
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_bytes = on_bytes,
                                   .on_end = on_end,
                                   .on_sent = on_sent,
                                   .ctx = k};
    /* SIGTERM ends the command as it ends any program. */
    if (es_session_start(&k->ses, NULL, addr, &cb, false, on_signal) != 0)
        return 2;
    uv_timer_init(k->ses.loop, &k->timer);
    k->timer.data = k;
    uv_timer_init(k->ses.loop, &k->grace);
    k->grace.data = k;
    es_session_run(&k->ses);
    return k->status;
}
