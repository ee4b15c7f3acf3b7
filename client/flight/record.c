/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket record ADDR [-o FILE] [--duration S]`: save a program's
 * live eventlog to a file that is a valid eventlog whenever the recording
 * stops (es_blocks writes whole blocks only and ends with an end marker).
 * Runs on one thread, the libuv loop's. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include "flight/window.h"
#include "source/blocks.h"
#include "source/naming.h"
#include "model/model.h"
#include "opts.h"
#include "source/session.h"
#include "source/units.h"
#include "subcommands.h"
#include "source/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long to wait for the stream to name the program (PROGRAM_ARGS and
 * OSPROCESS_PID arrive in the RTS's global buffer: within about a second on
 * GHC 9.2+, only at exit on 9.0), and how much to hold meanwhile, before
 * naming the file from the server's process instead. */
#define NAME_WAIT_MS    2000
#define NAME_WAIT_BYTES ((size_t)64 << 20)

struct record {
    struct es_session ses;
    struct es_blocks blocks;
    const char *out; /* -o, or NULL for PROGRAM-PID.eventlog */
    char path[512];  /* the file being written */
    bool opened;
    bool have_header;          /* the stream's header has arrived */
    double duration;           /* seconds, 0: until the program ends */
    bool lossless;             /* --lossless: ask the server for every byte */
    uint64_t lossless_notices; /* the server's notices about it, printed */
    uv_timer_t duration_timer, progress_timer, name_timer;
    bool progress;       /* stderr is a terminal */
    bool progress_shown; /* a progress line is on the screen */
    uint64_t start_ms;
    uint64_t last_ms, last_bytes, last_events;
    double mib_s, events_s;
    bool stopped;
    bool by_duration; /* stopped by --duration: what the user asked for */
    int status;
    struct es_rwindow win; /* --window, --since, --snapshot (flight/window.h) */
    const char *since;
    bool snapshot_done;
};

static void clear_progress(struct record *r) {
    if (r->progress_shown) {
        fprintf(stderr, "\r\033[K");
        r->progress_shown = false;
    }
}

static void stop(struct record *r, int status, const char *why);

/* The default name is created anew, never through a link (naming.h). */
static int create_default(struct record *r) {
    char stem[400];
    es_naming_stem(r->ses.conn, false, stem, sizeof stem);
    return es_naming_create(stem, r->path, sizeof r->path);
}

static void open_file(struct record *r) {
    if (r->opened || r->stopped)
        return;
    int fd;
    if (r->out != NULL && strcmp(r->out, "-") == 0) {
        snprintf(r->path, sizeof r->path, "(stdout)");
        fd = 1;
    } else {
        if (r->out != NULL) {
            snprintf(r->path, sizeof r->path, "%s", r->out);
            fd = es_outfile_open(r->path, O_WRONLY | O_CREAT | O_TRUNC);
        } else {
            fd = create_default(r);
        }
    }
    r->opened = true;
    uv_timer_stop(&r->name_timer);
    if (fd < 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "cannot create %s: %s", r->path, strerror(errno));
        stop(r, 2, msg);
        return;
    }
    if (es_blocks_set_fd(&r->blocks, fd) != 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "cannot write %s: %s", r->path, strerror(r->blocks.error));
        stop(r, 2, msg);
    }
}

/* The default name is made in the current directory. */
static bool cwd_writable(void) {
    if (access(".", W_OK | X_OK) == 0)
        return true;
    char cwd[512];
    fprintf(stderr,
            "eventlog-socket record: cannot create a recording in %s: %s: name one elsewhere "
            "with -o FILE\n",
            getcwd(cwd, sizeof cwd) ? cwd : "the current directory", strerror(errno));
    return false;
}

static void on_name_timer(uv_timer_t *t) {
    open_file(t->data);
}

static void close_handle(uv_handle_t *h) {
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void human_size(char *out, size_t size, uint64_t bytes) {
    snprintf(out, size, "%.1f MiB", (double)bytes / (1 << 20));
}

/* A write failed: say what the file holds now (client/source/blocks.h cuts it back
 * to its last whole block and an end marker, when it can). */
static void write_failed(struct record *r, const char *name, int err) {
    char size[32];
    int64_t kept = r->blocks.salvaged;
    human_size(size, sizeof size, kept > 0 ? (uint64_t)kept : 0);
    if (kept > 0)
        fprintf(stderr,
                "eventlog-socket: %s: cannot write %s: %s; recording stopped, the file is cut "
                "back to its last whole block (%s) and ends with an end marker\n",
                name, r->path, strerror(err), size);
    else if (kept == 0)
        fprintf(stderr, "eventlog-socket: %s: cannot write %s: %s; nothing recorded (empty file)\n",
                name, r->path, strerror(err));
    else
        fprintf(stderr,
                "eventlog-socket: %s: cannot write %s: %s; the file could not be cut back and "
                "may end inside a block\n",
                name, r->path, strerror(err));
    r->status = 2;
}

/* The end, whatever caused it: write the file's end, close everything so
 * that the loop returns, and print the last line. */
static void stop(struct record *r, int status, const char *why) {
    if (r->stopped)
        return;
    bool have_header = r->have_header;
    const struct es_conn *c = r->ses.conn;
    struct es_conn_info info = c->info;
    bool complete = status == 0;
    if (!r->opened && have_header) {
        open_file(r);
        if (r->stopped)
            return; /* it could not: that stop said so */
    }
    r->stopped = true;
    r->status = status;
    clear_progress(r);
    es_session_close(&r->ses);
    close_handle((uv_handle_t *)&r->duration_timer);
    close_handle((uv_handle_t *)&r->progress_timer);
    close_handle((uv_handle_t *)&r->name_timer);
    int werr = 0;
    if (r->opened && r->blocks.fd >= 0) {
        werr = -es_blocks_finish_cut(&r->blocks, &c->stream.header, why);
        if (r->blocks.fd != 1 && close(r->blocks.fd) != 0 && werr == 0)
            werr = errno;
    }
    if (werr != 0) {
        write_failed(r, c->name, werr);
        return;
    }
    if (!r->opened || r->blocks.fd < 0) {
        /* No file: the reason is the whole story. */
        fprintf(stderr, "eventlog-socket: %s: %s%s\n", c->name,
                have_header || status == 2 ? "" : "nothing recorded: ", why);
        return;
    }
    char size[32], gaps[200], sep[208] = "";
    human_size(size, sizeof size, r->blocks.base);
    /* Drop notices came: the same words in every case, after the verdict. */
    es_conn_gaps_text(&info, gaps, sizeof gaps);
    if (gaps[0] != '\0')
        snprintf(sep, sizeof sep, "; %s", gaps);
    if (r->snapshot_done) /* its events, and the cut notice when it has one */
        fprintf(stderr, "eventlog-socket: recorded %s (%s, %llu events): %s%s\n", r->path, size,
                (unsigned long long)(r->win.events + !r->blocks.complete),
                es_rwindow_summary(&r->win, &info), sep);
    else if (complete && r->by_duration)
        fprintf(stderr,
                "eventlog-socket: recorded %s (%s, %llu events): %s, as asked (the program "
                "runs on)%s; the file ends with a notice saying so and an end marker%s\n",
                r->path, size, (unsigned long long)info.events, why, sep,
                es_model_header_no_flush(&c->stream.header)
                    ? " (" ES_MODEL_GHC90_NOTE ": the rest comes only if the recording runs "
                      "until the program exits)"
                    : "");
    else if (complete) {
        /* With drop notices the end marker came, but chunks are missing. */
        es_conn_complete_words(&info, gaps, sizeof gaps);
        fprintf(stderr, "eventlog-socket: recorded %s (%s, %llu events): %s\n", r->path, size,
                (unsigned long long)info.events, gaps);
    } else
        fprintf(stderr,
                "eventlog-socket: recorded %s (%s, %llu events): cut, %s%s; the file ends with "
                "an end marker after the last whole block%s\n",
                r->path, size, (unsigned long long)info.events, why, sep,
                /* Few events of a program still running: say why. */
                status == 1 && es_model_header_no_flush(&c->stream.header) &&
                        c->info.cut_notice[0] == '\0'
                    ? " (" ES_MODEL_GHC90_NOTE ": the rest comes only if the recording runs "
                      "until the program exits)"
                    : "");
}

/* The recording begins: the file now, or once the stream names it. */
static void begin(struct record *r) {
    uv_timer_stop(&r->name_timer); /* it waited for the window's answer */
    if (r->out != NULL)
        open_file(r);
    else
        uv_timer_start(&r->name_timer, on_name_timer, NAME_WAIT_MS, 0);
}

/* No window after all (client/flight/window.h says why): nothing was
 * written, nothing will be. */
static void no_window(struct record *r, const char *why) {
    r->have_header = false;
    stop(r, 2, why);
}

static void on_no_answer(uv_timer_t *t) {
    struct record *r = t->data;
    no_window(r, es_rwindow_why(&r->win, r->ses.conn, r->ses.opt.connect_timeout));
}

/* The window's answer, after each event. */
static void window_answer(struct record *r, struct es_conn *c, const struct es_event *ev,
                          uint64_t offset) {
    enum es_rwindow_says say = es_rwindow_event(&r->win, c, ev, offset, &r->blocks);
    if (say == ES_RWINDOW_BEGIN)
        begin(r);
    else if (say == ES_RWINDOW_REFUSED)
        no_window(r, es_rwindow_why(&r->win, c, 0));
    else if (say == ES_RWINDOW_LIVE) {
        /* An empty window, then the live stream: that is still --window. */
        clear_progress(r);
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, es_rwindow_why(&r->win, c, 0));
        begin(r);
    }
}

static void on_header(struct es_conn *c, void *ctx) {
    struct record *r = ctx;
    r->have_header = true;
    /* As early as the server can read it: from here on nothing is skipped
     * for this connection (the backlog of a first client was kept anyway). */
    if (r->lossless)
        es_conn_send_command(c, EVENTLOG_SOCKET_CMD_LOSSLESS);
    es_blocks_header(&r->blocks, c->stream.header.len);
    if (r->win.asked) /* the window's answer first */
        uv_timer_start(&r->name_timer, on_no_answer,
                       (uint64_t)(r->ses.opt.connect_timeout * 1000 + 0.5), 0);
    else
        begin(r);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    struct record *r = ctx;
    es_blocks_event(&r->blocks, ev, offset);
    window_answer(r, c, ev, offset);
    if (r->stopped || (r->win.asked && !r->win.decided))
        return;
    if (c->info.lossless_notices > r->lossless_notices) { /* refused, or ended */
        r->lossless_notices = c->info.lossless_notices;
        clear_progress(r);
        fprintf(stderr, "%s\n", c->info.lossless_notice);
    }
    if (!r->opened && c->info.have_args && c->info.have_pid && c->info.program[0] != '\0')
        open_file(r);
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    struct record *r = ctx;
    if (r->stopped)
        return;
    if (c->stream.state == ES_STREAM_END)
        es_blocks_end_marker(&r->blocks, c->stream.offset);
    uint64_t at = r->blocks.received;
    int e = es_blocks_append(&r->blocks, data, es_rwindow_clip(&r->win, c, at, n));
    if (e != 0) {
        char msg[600];
        if (e == -EMSGSIZE)
            es_blocks_too_long_why(&r->blocks, msg, sizeof msg);
        else
            snprintf(msg, sizeof msg, "cannot write %s: %s", r->path, strerror(-e));
        stop(r, 2, msg);
        return;
    }
    if (r->win.asked && !r->win.decided)
        return;
    if (!r->opened && es_blocks_held(&r->blocks) > NAME_WAIT_BYTES)
        open_file(r);
    if (es_rwindow_done(&r->win, c, at + n)) {
        r->snapshot_done = true;
        /* The events seen past the window's end are not the file's. */
        es_blocks_set_cut_time(&r->blocks, r->win.last_ns);
        stop(r, 0, "a snapshot of the program's window; the program went on");
    }
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct record *r = ctx;
    char why[700];
    switch (how) {
    case ES_CONN_COMPLETE:
        /* The end marker after a cut notice: the program ended this
         * connection early (a slow client at exit), on an event boundary. */
        if (c->info.cut_notice[0] != '\0') {
            snprintf(why, sizeof why, "the program cut this connection short: %s",
                     c->info.cut_notice);
            stop(r, 1, why);
        } else {
            stop(r, 0, "complete");
        }
        break;
    case ES_CONN_CUT:
        /* The reader says where it stopped; the usual story is a program
         * that ended without hs_exit (docs/performance.md, "Stopping a program"). */
        snprintf(why, sizeof why,
                 "the program's stream ended without its end marker (%s: killed, or an exit "
                 "that bypassed hs_exit?)",
                 strstr(c->error, "inside an event") ? "inside an event" : "between blocks");
        stop(r, 1, why);
        break;
    case ES_CONN_FAILED:
        /* After the header, what arrived whole before the fault is kept. */
        stop(r, 2, c->error);
        break;
    }
}

/* The gaps are said once, after the verdict (stop): the signal alone here. */
static void on_signal(void *ctx, int signum, const char *why) {
    (void)why;
    stop(ctx, 1, es_conn_signal_name(signum));
}

static void on_duration(uv_timer_t *t) {
    struct record *r = t->data;
    char why[128];
    int n = snprintf(why, sizeof why, "stopped after --duration %g s", r->duration);
    /* Where: the latest event's program time (the notice's own time). */
    if (r->blocks.last_time > 0)
        snprintf(why + n, sizeof why - (size_t)n, ", at program time %.3f s",
                 (double)r->blocks.last_time / 1e9);
    r->by_duration = true;
    stop(r, 0, why);
}

static void on_progress(uv_timer_t *t) {
    struct record *r = t->data;
    uint64_t now = uv_now(r->ses.loop);
    const struct es_conn *c = r->ses.conn;
    const struct es_conn_info *in = &c->info;
    double dt = (double)(now - r->last_ms) / 1000;
    if (dt <= 0)
        return;
    /* Rates over about the last second, smoothed, so that the line reads
     * steadily while blocks arrive in bursts. */
    double mib_s = (double)(in->bytes - r->last_bytes) / (1 << 20) / dt;
    double events_s = (double)(in->events - r->last_events) / dt;
    double k = dt > 1 ? 1 : dt;
    r->mib_s += (mib_s - r->mib_s) * k;
    r->events_s += (events_s - r->events_s) * k;
    r->last_ms = now;
    r->last_bytes = in->bytes;
    r->last_events = in->events;
    bool header = c->stream.state != ES_STREAM_HEADER;
    fprintf(
        stderr, "\r%s%.1f s  %.1f MiB  %.1f MiB/s  %.0f events/s  %llu drop notices%s\033[K",
        header ? "" : "connecting...  ", (double)(now - r->start_ms) / 1000,
        (double)in->bytes / (1 << 20), r->mib_s, r->events_s, (unsigned long long)in->drop_notices,
        header && es_model_header_no_flush(&c->stream.header) ? "  (" ES_MODEL_GHC90_NOTE ")" : "");
    fflush(stderr);
    r->progress_shown = true;
}

int es_record_main(int argc, char **argv) {
    if (es_watch_wanted(argc, argv)) /* --trigger: client/flight/watch.c */
        return es_watch_main(argc, argv);
    static struct record rec;
    struct record *r = &rec;
    es_session_init(&r->ses);
    const char *addr = NULL;
    const struct es_opt opts[] = {
        {"-o", "--output", ES_OPT_VALUE, &r->out, 0, "-o needs a file name", NULL, false},
        {"--lossless", NULL, ES_OPT_FLAG, &r->lossless, 0, NULL, NULL, false},
        {"--window", NULL, ES_OPT_FLAG, &r->win.asked, 0, NULL, NULL, false},
        {"--snapshot", NULL, ES_OPT_FLAG, &r->win.snapshot, 0, NULL, NULL, false},
        {"--since", NULL, ES_OPT_VALUE, &r->since, 0,
         "--since needs a duration (" ES_UNITS_GRAMMAR ")", NULL, false},
        {"--duration", NULL, ES_OPT_SECONDS, &r->duration, 1e7,
         "--duration needs a duration (" ES_UNITS_GRAMMAR ")",
         "%s %s: not a duration above 0 (" ES_UNITS_GRAMMAR ")", false},
        {0}};
    int status = es_opts_parse_addr("record", opts, &r->ses.opt, &addr, argc, argv);
    if (status >= 0)
        return status;
    if (es_rwindow_setup(&r->win, r->since) != 0)
        return 2;
    r->ses.opt.window = r->win.asked;
    /* The file is checked before connecting: connecting may release a
     * program held by GHC_EVENTLOG_WAIT, whose start would then go to a
     * recording that cannot be written. */
    if (r->out != NULL ? !es_outfile_check("record", NULL, r->out) : !cwd_writable())
        return 2;
    es_blocks_init(&r->blocks);
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_bytes = on_bytes,
                                   .on_end = on_end,
                                   .ctx = r};
    if (es_session_start(&r->ses, NULL, addr, &cb, true, on_signal) != 0)
        return 2;
    uv_loop_t *loop = r->ses.loop;
    uv_timer_init(loop, &r->duration_timer);
    uv_timer_init(loop, &r->progress_timer);
    uv_timer_init(loop, &r->name_timer);
    r->duration_timer.data = r->progress_timer.data = r->name_timer.data = r;
    if (r->duration > 0)
        uv_timer_start(&r->duration_timer, on_duration, (uint64_t)(r->duration * 1000 + 0.5), 0);
    r->start_ms = r->last_ms = uv_now(loop);
    r->progress = isatty(2);
    if (r->progress)
        uv_timer_start(&r->progress_timer, on_progress, 250, 250);
    es_session_run(&r->ses);
    es_blocks_destroy(&r->blocks);
    return r->status;
}
