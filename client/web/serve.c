/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket serve ADDR [--http HOST:PORT]`: a live web page of a
 * running program. The stream is read with es_conn (client/source/conn.h) into
 * the same model as `top` (client/model/model.h), recorded whole block by whole
 * block (the page's download), and written out with es_webjson. Two sides:
 *   - the libuv loop thread (this file) owns the connection, the model and
 *     the recording; twice a second it writes what changed as one
 *     Server-Sent Event message into the share (client/web/share.h), and
 *     the program's Prometheus exposition for GET /metrics
 *     (client/prom/text.h);
 *   - libmicrohttpd's threads (client/web/http.c) serve the page from what
 *     the share holds, and hand button presses back through it.
 * So the program's stream is read at full speed whatever the browsers do:
 * a slow or stalled tab only delays its own thread, and the messages kept
 * for late or slow tabs are bounded. With --retry, the next run of the
 * program replaces the one shown. */
#include "http.h"
#include "json.h"
#include "share.h"

#include "http/addr.h"
#include "model/model.h"
#include "opts.h"
#include "prom/text.h"
#include "source/blocks.h"
#include "source/naming.h"
#include "source/outfile.h"
#include "source/session.h"
#include "subcommands.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TICK_MS 500
/* The flame graph's trees go to the page this often at most, in ticks
 * (client/web/flame.h). */
#define FLAME_TICKS 4
/* --retry: the pause before connecting again after a run ended. */
#define RECONNECT_MS 500

/* What `serve` keeps: the loop thread's alone (the HTTP threads see only
 * the share). */
struct serve {
    struct es_session ses; /* with --retry, a new connection after each end */
    unsigned run;          /* runs shown so far (sessions with a header, not ignored) */
    int run_pid;           /* the shown run's server process (SO_PEERCRED), 0: unknown */
    bool run_exited;       /* the shown run ended with its end marker */
    uint64_t run_bytes;    /* bytes of the shown run, once it ended */
    char run_source[300];
    bool ignoring;   /* this session reached the exited run's program again */
    bool said_retry; /* a session without a header was reported on stderr */
    struct es_model *model;
    struct es_webflame flame;
    unsigned ticks;
    struct es_blocks blocks;
    struct es_webjson_cursor cursor;
    const char *source;
    const char *http;     /* --http HOST:PORT */
    const char *rec_path; /* --record FILE, or NULL for a temporary file */
    char rec_now[600];    /* the file of the run shown: FILE, then FILE.N */
    unsigned rec_num;     /* its N (FILE: 1) */
    char tmp_path[512];
    int rec_fd;
    const char *state;
    char error[600];
    char peer_program[256]; /* from /proc, for GHC 9.0 */
    bool peer_looked;
    bool header;
    bool ended;
    uint64_t last_events; /* at the last message */
    const char *last_state;
    uv_timer_t tick;
    uv_async_t commands; /* woken by the share when a button sent a command */
    struct es_webshare *sh;
    struct es_webhttp *http_server;
    int status;
};

/* The server's process name on a Unix socket (SO_PEERCRED and /proc). */
static void peer_program(struct serve *s) {
    if (s->peer_looked || s->run_pid <= 0)
        return;
    s->peer_looked = true;
    es_session_program_of(s->run_pid, s->peer_program, sizeof s->peer_program);
}

static void status_of(struct serve *s, struct es_webjson_status *st) {
    peer_program(s);
    st->program = s->peer_program;
    st->pid = s->run_pid > 0 ? (uint32_t)s->run_pid : 0;
    st->state = s->state;
    st->source = s->run_source[0] ? s->run_source : s->source;
    st->error = s->error;
    st->bytes = s->ended || s->run == 0 ? s->run_bytes : s->ses.conn->info.bytes;
    st->recording = s->header;
    st->can_control = !s->ended && s->header;
    st->run = s->run;
    st->retry = s->ses.opt.retry;
    st->flame = &s->flame;
}

/* Write what changed as the next message to the page's tabs (or a whole
 * state, when they would otherwise need too many deltas); `force`: even
 * when nothing did. */
static void publish(struct serve *s, bool force) {
    if (!force && s->model->events == s->last_events && s->last_state == s->state)
        return;
    s->last_events = s->model->events;
    s->last_state = s->state;
    if (es_webshare_wants_full(s->sh))
        s->cursor.started = false;
    struct es_webjson_status st;
    status_of(s, &st);
    es_model_extend_to_now(s->model);
    struct es_httpbuf b = {0};
    bool full = !s->cursor.started || s->cursor.generation != s->model->h.generation;
    es_httpbuf_printf(&b, "event: %s\ndata: ", full ? "state" : "delta");
    es_webjson_state(&b, s->model, &st, &s->cursor);
    ES_HTTPBUF_ADD(&b, "\n\n");
    if (b.oom) {
        /* Try again with a whole state next time. */
        es_httpbuf_free(&b);
        s->cursor.started = false;
        return;
    }
    es_webshare_publish(s->sh, b.p, b.len, full, st.can_control, es_blocks_file_len(&s->blocks));
}

/* The program's Prometheus exposition for GET /metrics (client/prom/text.h). */
static void publish_metrics(struct serve *s) {
    struct es_webjson_status st;
    status_of(s, &st);
    bool live = s->header && !s->ignoring;
    struct es_promtext_target t = {
        .m = live ? s->model : NULL,
        .program = s->model->program[0] ? s->model->program : st.program,
        .pid = s->model->pid ? s->model->pid : st.pid,
        .source = st.source,
        .connected = live && !s->ended,
        .received_bytes = st.bytes,
    };
    struct es_httpbuf b = {0};
    es_promtext_write(&b, &t, 1, ES_PROMTEXT_TOP_LABELS);
    if (b.oom)
        es_httpbuf_free(&b);
    else
        es_webshare_publish_metrics(s->sh, b.p, b.len);
}

/* The file name the download suggests: the program's and its pid. */
static void name_recording(struct serve *s) {
    const char *prog = s->model->program[0] ? s->model->program
                       : s->peer_program[0] ? s->peer_program
                                            : "eventlog";
    char safe[256], name[300];
    snprintf(safe, sizeof safe, "%s", prog);
    for (char *p = safe; *p; p++)
        if (*p == '"' || *p == '/' || *p == '\\' || (unsigned char)*p < 0x20 ||
            (unsigned char)*p >= 0x7f)
            *p = '_';
    uint32_t pid = s->model->pid ? s->model->pid : (uint32_t)(s->run_pid > 0 ? s->run_pid : 0);
    if (pid)
        snprintf(name, sizeof name, "%s-%u.eventlog", safe, pid);
    else
        snprintf(name, sizeof name, "%s.eventlog", safe);
    es_webshare_recording_name(s->sh, name);
}

static void on_tick(uv_timer_t *t) {
    struct serve *s = t->data;
    es_webhttp_cut_late(s->http_server);
    if (++s->ticks % FLAME_TICKS == 0)
        es_webflame_refresh(&s->flame);
    publish(s, false);
    publish_metrics(s);
}

/* Buttons pressed on the page: the share woke the loop (client/web/share.h). */
static void on_commands(uv_async_t *a) {
    struct serve *s = a->data;
    uint8_t cmds[ES_WEBSHARE_COMMANDS];
    size_t n = es_webshare_take_commands(s->sh, cmds);
    for (size_t i = 0; i < n && !s->ended; i++)
        es_conn_send_command(s->ses.conn, cmds[i]);
}

/* --record FILE: the first run's file is the one the user named, FILE,
 * written as named; run N after it goes to FILE.N, a name of serve's own,
 * so created as every name the command makes (naming.h): anew, never
 * through a link. A name taken (an earlier serve's file, a link planted
 * there, this serve's own run) is passed over for the next free number,
 * so the numbers follow the runs' order and nothing is written through;
 * serve says so when run N's file is not FILE.N. */
static int create_run_file(struct serve *s) {
    char *path = s->rec_now;
    if (s->run == 0) {
        snprintf(path, sizeof s->rec_now, "%s", s->rec_path);
        s->rec_num = 1;
        return es_outfile_open(path, O_RDWR | O_CREAT | O_TRUNC);
    }
    unsigned this_run = s->run + 1, num = this_run > s->rec_num ? this_run : s->rec_num + 1;
    int fd = es_naming_create_numbered(s->rec_path, &num, O_RDWR, path, sizeof s->rec_now);
    if (fd < 0) {
        int e = errno;
        snprintf(path, sizeof s->rec_now, "%s.%u", s->rec_path, num);
        errno = e;
        return -1;
    }
    s->rec_num = num;
    char want[600];
    snprintf(want, sizeof want, "%s.%u", s->rec_path, this_run);
    if (strcmp(want, path) != 0)
        fprintf(stderr,
                "eventlog-socket serve: run %u is recorded in %s: %s is taken (by an earlier run, "
                "another file or a symbolic link), and a name that is taken is never written "
                "through\n",
                this_run, path, want);
    return fd;
}

static int open_recording(struct serve *s) {
    int fd;
    if (s->rec_path != NULL) {
        fd = create_run_file(s);
    } else {
        const char *dir = getenv("TMPDIR");
        snprintf(s->tmp_path, sizeof s->tmp_path, "%s/eventlog-socket-serve-XXXXXX",
                 dir && dir[0] ? dir : "/tmp");
        fd = mkstemp(s->tmp_path);
        if (fd >= 0)
            unlink(s->tmp_path);
    }
    if (fd < 0) {
        fprintf(stderr, "eventlog-socket serve: cannot create the recording %s: %s\n",
                s->rec_path ? s->rec_now : s->tmp_path, strerror(errno));
        return -1;
    }
    s->rec_fd = fd;
    es_webshare_new_recording(s->sh, fd);
    es_blocks_set_fd(&s->blocks, fd);
    return 0;
}

/* --retry: a new run replaces the one shown (the page's history and
 * download start afresh; with --record FILE the earlier runs' files stay,
 * run N going to FILE.N). */
static void new_run(struct serve *s) {
    if (s->blocks.fd >= 0 && !s->blocks.finished)
        es_blocks_finish_cut(&s->blocks, NULL, "");
    es_blocks_destroy(&s->blocks);
    es_blocks_init(&s->blocks);
    /* The cost notices serve asks for are not the program's. */
    s->blocks.skip_cost_notices = true;
    es_webshare_new_recording(s->sh, -1);
    if (s->rec_fd >= 0)
        close(s->rec_fd);
    s->rec_fd = -1;
    open_recording(s); /* on failure the download link says so; the page goes on */
    es_model_reset(s->model);
    es_webflame_destroy(&s->flame);
    es_webflame_init(&s->flame);
    s->cursor.started = false;
    s->error[0] = '\0';
    s->peer_program[0] = '\0';
    s->peer_looked = false;
}

static void on_header(struct es_conn *c, void *ctx) {
    struct serve *s = ctx;
    /* Reconnecting right after the program's end may reach it once more
     * on its way out: that is not a new run. */
    if (s->run > 0 && s->run_exited && c->peer_pid > 0 && c->peer_pid == s->run_pid) {
        s->ignoring = true;
        return;
    }
    if (s->run > 0)
        new_run(s);
    s->run++;
    /* After the first run, say nothing more of waiting on stderr. */
    s->ses.opt.quiet = true;
    s->ended = false;
    s->run_exited = false;
    s->run_pid = c->peer_pid;
    snprintf(s->run_source, sizeof s->run_source, "%s", c->name);
    s->header = true;
    s->state = "connected";
    es_model_header(s->model, &c->stream.header);
    es_blocks_header(&s->blocks, c->stream.header.len);
    name_recording(s);
    publish(s, true);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    struct serve *s = ctx;
    if (s->ignoring)
        return;
    es_model_event(s->model, ev);
    es_webflame_event(&s->flame, ev);
    es_blocks_event(&s->blocks, ev, offset);
}

/* The recording could not be written (a full disk), or the stream holds a
 * block longer than any a program sends: it stops, cut back to its last
 * whole block and an end marker (client/source/blocks.h); the page goes on;
 * serve's exit status will be 2. */
static void recording_failed(struct serve *s, int e) {
    int64_t kept = s->blocks.salvaged;
    const char *file = s->rec_path ? s->rec_now : "(temporary file)";
    s->status = 2;
    if (e == -EMSGSIZE) {
        char why[600];
        es_blocks_too_long_why(&s->blocks, why, sizeof why);
        es_blocks_finish_cut(&s->blocks, &s->ses.conn->stream.header, why);
        fprintf(stderr,
                "eventlog-socket serve: %s: %s; recording stopped, %s ends after its last whole "
                "block (the page goes on)\n",
                s->ses.conn->name, why, file);
        return;
    }
    fprintf(stderr,
            "eventlog-socket serve: cannot write the recording %s: %s; recording "
            "stopped, %s (the page goes on)\n",
            file, strerror(s->blocks.error ? s->blocks.error : ENOMEM),
            kept > 0    ? "the file is cut back to its last whole block and ends with an end marker"
            : kept == 0 ? "nothing recorded"
                        : "the file could not be cut back and may end inside a block");
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    struct serve *s = ctx;
    if (s->ignoring || s->ended)
        return;
    if (c->stream.state == ES_STREAM_END)
        es_blocks_end_marker(&s->blocks, c->stream.offset);
    int e = 0;
    if (s->blocks.error == 0 && !s->blocks.finished &&
        (e = es_blocks_append(&s->blocks, data, n)) != 0)
        recording_failed(s, e);
}

static void reopened(void *ctx, int r);

/* --retry: connect again in a moment (the program may be restarted). */
static void retry_later(struct serve *s) {
    es_session_reconnect(&s->ses, RECONNECT_MS, reopened);
}

/* The shown run ended: keep its page, its recording whole. */
static void run_ended(struct serve *s, struct es_conn *c, enum es_conn_end how) {
    s->ended = true;
    s->run_bytes = c->info.bytes;
    if (how == ES_CONN_COMPLETE) {
        es_model_end(s->model);
        s->state = "exited";
        s->run_exited = true;
    } else {
        snprintf(s->error, sizeof s->error, "%s", c->error);
        s->state = "lost";
    }
    if (!s->header)
        return;
    char why[700];
    snprintf(why, sizeof why, "the connection was lost (%s)", c->error);
    int e = s->blocks.fd >= 0 ? es_blocks_finish_cut(&s->blocks, &c->stream.header, why) : 0;
    struct stat sb;
    if (e == 0 && s->rec_fd >= 0 && fstat(s->rec_fd, &sb) == 0)
        es_webshare_recording_ended(s->sh, (uint64_t)sb.st_size);
    name_recording(s);
    es_webflame_refresh(&s->flame);
    publish(s, true);
    char ended[400];
    snprintf(ended, sizeof ended, "%s",
             how == ES_CONN_COMPLETE ? "the program exited" : "the connection was lost");
    es_conn_add_gaps(&c->info, ended, sizeof ended);
    fprintf(stderr, "eventlog-socket serve: %s: %s; still serving the page%s (Ctrl-C stops)\n",
            c->name, ended, s->ses.opt.retry ? ", waiting for the next run (--retry)" : "");
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct serve *s = ctx;
    if (s->ignoring || (s->ses.opt.retry && (s->ended || s->run == 0))) {
        /* The exited program once more, or a session that ended before
         * its header: nothing to show; wait for the next run. */
        if (!s->ignoring && !s->said_retry) {
            fprintf(stderr, "eventlog-socket serve: %s: %s (--retry: trying again)\n", c->name,
                    c->error);
            s->said_retry = true;
        }
        s->ignoring = false;
        retry_later(s);
        return;
    }
    run_ended(s, c, how);
    if (!s->header) {
        /* Nothing to show: no eventlog at that address. */
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, c->error);
        s->status = 2;
        uv_stop(s->ses.loop);
        return;
    }
    if (s->ses.opt.retry)
        retry_later(s);
}

static void on_signal(void *ctx, int signum, const char *why) {
    (void)signum;
    (void)why;
    struct serve *s = ctx;
    uv_stop(s->ses.loop);
}

/* A connection could not be opened (its error says why). */
static void open_failed(struct serve *s) {
    fprintf(stderr, "eventlog-socket serve: %s: %s\n", s->ses.conn->name, s->ses.conn->error);
    s->status = 2;
    uv_stop(s->ses.loop);
}

static void reopened(void *ctx, int r) {
    if (r != 0)
        open_failed(ctx);
}

/* Serve the page on --http and print its URL. Returns 0, or 2 after a
 * message. */
static int start_http(struct serve *s, const struct sockaddr_storage *sa, bool loopback) {
    s->http_server = es_webhttp_start(s->sh, sa, loopback);
    if (s->http_server == NULL) {
        int e = errno ? errno : EADDRINUSE;
        fprintf(stderr, "eventlog-socket serve: cannot serve HTTP on %s: %s%s\n", s->http,
                strerror(e), e == EADDRINUSE ? ES_HTTPADDR_IN_USE_HINT : "");
        return 2;
    }
    char host[300];
    const char *colon = strrchr(s->http, ':');
    snprintf(host, sizeof host, "%.*s", (int)(colon - s->http), s->http);
    const char *token = es_webhttp_token(s->http_server);
    printf("eventlog-socket serve: http://%s:%u/%s%s\n", host[0] ? host : "127.0.0.1",
           es_webhttp_port(s->http_server), token[0] ? "?token=" : "", token);
    fflush(stdout);
    return 0;
}

/* The source, checked before the HTTP server starts (and without
 * connecting, which would release a program held by GHC_EVENTLOG_WAIT): a
 * file, an address that does not parse or a socket that is not there is
 * said at once, with no URL printed for a page that would never show a
 * program. Returns 0, or 2 after a message. */
static int check_source(struct serve *s) {
    static struct es_conn probe;
    if (es_conn_address(&probe, s->source, &s->ses.opt) != 0) {
        fprintf(stderr, "eventlog-socket serve: %s: %s\n", probe.name, probe.error);
        return 2;
    }
    return 0;
}

/* Read the program until Ctrl-C (or a first connection that fails). */
static void run(struct serve *s) {
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_bytes = on_bytes,
                                   .on_end = on_end,
                                   .ctx = s};
    if (es_session_open(&s->ses, s->source, &cb) != 0) {
        open_failed(s);
        return;
    }
    uv_timer_init(s->ses.loop, &s->tick);
    s->tick.data = s;
    uv_timer_start(&s->tick, on_tick, TICK_MS, TICK_MS);
    es_session_signals(&s->ses, true, on_signal, s);
    publish(s, true);
    uv_run(s->ses.loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&s->tick, NULL);
    es_session_close(&s->ses);
}

int es_serve_main(int argc, char **argv) {
    static struct serve the_serve;
    struct serve *s = &the_serve;
    es_session_init(&s->ses);
    s->ses.opt.cost_notices = true;
    s->ses.opt.window = true; /* from the program's window, when it keeps one */
    s->http = "127.0.0.1:8080";
    s->rec_fd = -1;
    const struct es_opt opts[] = {
        {"--http", NULL, ES_OPT_VALUE, &s->http, 0, NULL, NULL, false},
        {"--record", NULL, ES_OPT_VALUE, &s->rec_path, 0, NULL, NULL, false},
        {0}};
    int status = es_opts_parse_addr("serve", opts, &s->ses.opt, &s->source, argc, argv);
    if (status >= 0)
        return status;
    struct sockaddr_storage sa;
    socklen_t salen;
    bool loopback = false;
    if (es_httpaddr_parse(s->http, &sa, &salen, &loopback) != 0) {
        fprintf(stderr, "eventlog-socket serve: --http: not HOST:PORT: %s\n", s->http);
        return 2;
    }
    s->model = malloc(sizeof *s->model);
    uv_async_init(s->ses.loop, &s->commands, on_commands);
    s->commands.data = s;
    s->sh = es_webshare_new(&s->commands);
    if (s->model == NULL || s->sh == NULL) {
        fprintf(stderr, "eventlog-socket serve: out of memory\n");
        return 2;
    }
    es_model_init(s->model);
    es_webflame_init(&s->flame);
    es_blocks_init(&s->blocks);
    s->blocks.skip_cost_notices = true;
    s->state = "connecting";

    /* The recording is checked before anything is connected (a program
     * held by GHC_EVENTLOG_WAIT stays held) and created after HTTP starts,
     * so that a taken port leaves no file behind. */
    if ((s->rec_path != NULL && !es_outfile_check("serve", "the recording", s->rec_path)) ||
        check_source(s) != 0 || start_http(s, &sa, loopback) != 0) {
        s->status = 2;
    } else if (open_recording(s) != 0) {
        s->status = 2;
        es_webshare_close(s->sh);
        es_webhttp_stop(s->http_server);
    } else {
        run(s);
        /* Wake every event stream so its thread ends, then stop the server. */
        es_webshare_close(s->sh);
        es_webhttp_stop(s->http_server);
    }
    uv_close((uv_handle_t *)&s->commands, NULL);
    es_session_finish(&s->ses);
    es_webshare_free(s->sh);
    if (s->rec_fd >= 0) {
        if (!s->ended && s->header)
            es_blocks_finish_cut(&s->blocks, &s->ses.conn->stream.header,
                                 "serve was stopped while the program ran");
        close(s->rec_fd);
    }
    es_blocks_destroy(&s->blocks);
    es_model_destroy(s->model);
    es_webflame_destroy(&s->flame);
    free(s->model);
    return s->status;
}
