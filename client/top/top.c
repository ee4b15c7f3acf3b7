/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket top ADDR [--retry]`: a live full-screen view of a
 * running program from its eventlog (ncurses): heap with a short history,
 * the latest census with trends, GC counts, pauses and time in GC,
 * capabilities and threads, user markers and messages, drop notices, the
 * connection, and who the program is. Keys: c census now, p pause/resume
 * heap profiling, q quit. Redrawn about 4 times a second; the model
 * (model.h) is fed as bytes arrive, the screen only reads it. Runs on one
 * thread, the libuv loop's. */
#include "model/model.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "opts.h"
#include "source/session.h"
#include "subcommands.h"
#include "draw.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REFRESH_MS 250
/* With --retry, the pause before connecting again after a session ended. */
#define RECONNECT_MS 200

struct top {
    struct es_session ses; /* with --retry, a new connection after each end */
    const char *addr;
    struct es_model *model;
    /* After a program exited, a new session is read into `next` until it
     * shows it is another program (another pid, or a second of life): a
     * reconnection can still reach the exiting program, whose last
     * moments must not replace its final screen. */
    struct es_model *next;
    bool pending;
    uint64_t pending_ms;
    int exited_peer_pid;
    uv_timer_t timer;
    uv_poll_t keys;
    bool curses, utf8, quitting;
    int status;

    /* The connection, for the status line. */
    enum es_top_state state;
    char lost[600];
    uint64_t sessions; /* connections that delivered a header */
    uint64_t last_bytes, last_ms;
    uint64_t ticks; /* of the clock, for the full repaint once a second */
    double bytes_s;
    char proc_name[256]; /* the server's program from /proc, until the stream names it */

    /* What the user asked for. */
    bool prof_paused;
    char said[200]; /* the last key's effect */
    uint64_t said_ms;
};

static struct top the_top;

static void draw_frame(struct top *t, bool repaint) {
    const struct es_conn *c = t->ses.conn;
    struct es_top_view v = {
        .model = t->model,
        .program = t->proc_name,
        .pid = (uint32_t)(c->peer_pid > 0 ? c->peer_pid : 0),
        .source = c->name,
        .bytes_s = t->bytes_s,
        .state = t->state,
        .retry = t->ses.opt.retry,
        .prof_paused = t->prof_paused,
        .utf8 = t->utf8,
        .lost = t->lost,
        .said = t->said[0] && uv_now(t->ses.loop) - t->said_ms < 5000 ? t->said : NULL,
        .repaint = repaint,
    };
    es_top_draw(&v);
}

static void draw(struct top *t) {
    draw_frame(t, false);
}

/* ---- Connection. */

static void say(struct top *t, const char *msg) {
    snprintf(t->said, sizeof t->said, "%s", msg);
    t->said_ms = uv_now(t->ses.loop);
}

/* A session whose program is now on screen. */
static void become_live(struct top *t, struct es_conn *c) {
    t->state = ES_TOP_LIVE;
    t->sessions++;
    t->prof_paused = false;
    es_session_program_of(c->peer_pid, t->proc_name, sizeof t->proc_name);
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
    if (t->state == ES_TOP_EXITED) {
        t->pending = true;
        t->pending_ms = uv_now(t->ses.loop);
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
    if ((now_pid && old_pid && now_pid != old_pid) || uv_now(t->ses.loop) - t->pending_ms >= 1000)
        promote(t, c);
}

/* A connection could not be opened: say why once the screen is gone. */
static void open_failed(struct top *t) {
    snprintf(t->lost, sizeof t->lost, "%s", t->ses.conn->error);
    t->status = 2;
    t->quitting = true;
    uv_stop(t->ses.loop);
}

static void reopened(void *ctx, int r) {
    struct top *t = ctx;
    t->last_bytes = 0;
    if (r != 0)
        open_failed(t);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct top *t = ctx;
    bool had_header = c->stream.state != ES_STREAM_HEADER;
    if (t->pending) {
        /* The exiting program's last moments: keep its final screen. */
        t->pending = false;
    } else if (how == ES_CONN_COMPLETE) {
        es_model_end(t->model);
        t->state = ES_TOP_EXITED;
        t->exited_peer_pid = c->peer_pid;
    } else if (how == ES_CONN_FAILED && !had_header && t->sessions == 0 && !t->ses.opt.retry) {
        /* Nothing to show at all: say why on the terminal and stop. */
        snprintf(t->lost, sizeof t->lost, "%s", c->error);
        t->status = 2;
        t->quitting = true;
        uv_stop(t->ses.loop);
        return;
    } else {
        snprintf(t->lost, sizeof t->lost, "%s", c->error);
        t->state = t->ses.opt.retry ? ES_TOP_WAITING : ES_TOP_LOST;
        t->exited_peer_pid = c->peer_pid;
    }
    if (t->ses.opt.retry) {
        /* The program may be restarted: keep its last screen until a new
         * one appears. A moment's pause lets an exiting program go. */
        es_session_reconnect(&t->ses, RECONNECT_MS, reopened);
    }
    draw(t);
}

/* ---- Keys and the clock. */

static void send_command(struct top *t, uint8_t cmd, const char *what) {
    char msg[200];
    int r = t->state == ES_TOP_LIVE ? es_conn_send_command(t->ses.conn, cmd) : UV_ENOTCONN;
    if (r == 0)
        snprintf(msg, sizeof msg, "%s: sent", what);
    else
        snprintf(msg, sizeof msg, "%s: not sent (%s)", what,
                 r == UV_ENOTCONN ? "not connected" : uv_strerror(r));
    say(t, msg);
}

static void quit(struct top *t) {
    t->quitting = true;
    uv_stop(t->ses.loop);
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
            send_command(t, EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS, "census");
            break;
        case 'p':
        case 'P':
            if (t->prof_paused) {
                send_command(t, EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING, "resume heap profiling");
                t->prof_paused = false;
            } else {
                send_command(t, EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING, "pause heap profiling");
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
    uint64_t now = uv_now(t->ses.loop), bytes = t->ses.conn->info.bytes;
    if (t->last_ms && now > t->last_ms) {
        double rate = bytes >= t->last_bytes
                          ? (double)(bytes - t->last_bytes) * 1000.0 / (double)(now - t->last_ms)
                          : 0;
        /* Smoothed over about a second: blocks arrive in bursts. */
        t->bytes_s += (rate - t->bytes_s) * 0.25;
    }
    t->last_ms = now;
    t->last_bytes = bytes;
    if (t->state == ES_TOP_CONNECTING && t->ses.opt.retry && t->sessions == 0)
        t->state = ES_TOP_WAITING;
    if (t->pending && now - t->pending_ms >= 1000)
        promote(t, t->ses.conn);
    /* A resize is reported by getch (ncurses catches SIGWINCH). */
    handle_keys(t);
    /* Once a second every cell is drawn again: curses sends only what
     * changed, and the terminal is not top's alone (a program started in
     * the background of the same shell writes its lines to it). Without
     * it, a frame the lines scrolled stayed on screen: an exited
     * program's "alloc 0 B/s ... tot 0 B" over its real figures. */
    if (!t->quitting)
        draw_frame(t, ++t->ticks % (1000 / REFRESH_MS) == 0);
}

static void on_signal(void *ctx, int signum, const char *why) {
    (void)signum;
    (void)why;
    quit(ctx);
}

int es_top_main(int argc, char **argv) {
    struct top *t = &the_top;
    es_session_init(&t->ses);
    t->ses.opt.cost_notices = true;
    t->ses.opt.window = true; /* from the program's window, when it keeps one */
    int status = es_opts_parse_addr("top", NULL, &t->ses.opt, &t->addr, argc, argv);
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
    t->state = ES_TOP_CONNECTING;
    /* The screen is ours: no "waiting" line on stderr. */
    t->ses.opt.quiet = true;
    struct es_conn_callbacks cb = {
        .on_header = on_header, .on_event = on_event, .on_end = on_end, .ctx = t};
    if (es_session_start(&t->ses, NULL, t->addr, &cb, true, on_signal) != 0)
        return 2;

    setlocale(LC_ALL, "");
    t->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    initscr();
    t->curses = true;
    cbreak();
    noecho();
    nodelay(stdscr, TRUE);
    keypad(stdscr, TRUE);
    curs_set(0);

    uv_loop_t *loop = t->ses.loop;
    uv_timer_init(loop, &t->timer);
    t->timer.data = t;
    uv_timer_start(&t->timer, on_tick, 0, REFRESH_MS);
    uv_poll_init(loop, &t->keys, 0);
    t->keys.data = t;
    uv_poll_start(&t->keys, UV_READABLE, on_keys);

    uv_run(loop, UV_RUN_DEFAULT);
    endwin();

    uv_close((uv_handle_t *)&t->timer, NULL);
    uv_close((uv_handle_t *)&t->keys, NULL);
    es_session_finish(&t->ses);
    if (t->status == 2)
        fprintf(stderr, "eventlog-socket: %s: %s\n", t->ses.conn->name, t->lost);
    else if (t->state == ES_TOP_EXITED)
        fprintf(stderr, "eventlog-socket: %s: the program exited (%llu GCs, %llu censuses)\n",
                t->model->program[0] ? t->model->program : t->ses.conn->name,
                (unsigned long long)t->model->gcs, (unsigned long long)t->model->censuses);
    es_model_destroy(t->model);
    free(t->model);
    es_model_destroy(t->next);
    free(t->next);
    return t->status;
}
