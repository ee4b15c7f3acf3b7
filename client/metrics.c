/* `eventlog-socket metrics [--http HOST:PORT] SOURCE...`: a Prometheus
 * exporter for every program on a host. A SOURCE is an address (as every
 * subcommand takes it) or a glob of Unix socket paths, re-read every
 * SCAN_MS so that programs starting later are picked up and those whose
 * socket went away are dropped. Each program has one connection
 * (client/conn.h, reconnecting whenever it ends: a restarted program, a new
 * pid, is a new set of series) and one model (client/model.h). Two sides:
 *   - the libuv loop thread (this file) owns the targets, their
 *     connections and models; every TICK_MS it writes the exposition
 *     (client/promtext.h) and publishes it;
 *   - libmicrohttpd's thread (client/promhttp.c) answers GET /metrics with
 *     the latest one, so a scrape never waits on a program.
 * A run that ended keeps its last figures for --linger seconds (a program
 * that exited between two scrapes still shows its final counts), then its
 * series go. */
#include "conn.h"
#include "model.h"
#include "opts.h"
#include "promhttp.h"
#include "promtext.h"
#include "session.h"
#include "webaddr.h"
#include "webauth.h"
#include "webhttp.h"
#include "webjson.h"

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS      1000
#define SCAN_MS      2000
#define RECONNECT_MS 500
/* A removed target is freed this many ticks later, once the loop has
 * closed its handles. */
#define FREE_AFTER_TICKS 2

struct metrics;

/* One program's address: a SOURCE, or a path a glob matched. */
struct target {
    struct target *next;
    struct metrics *x;
    char source[300];
    bool from_glob, matched; /* matched: found by the latest scan */
    /* A connection is opened again after each end; the two alternate,
     * since a closed one is released by the loop later. */
    struct es_conn conns[2];
    unsigned cur;
    bool conn_open;
    uv_timer_t reconnect;
    struct es_model *model;
    bool run;        /* the model holds a run (a header arrived) */
    bool connected;  /* and its connection is open */
    bool exited;     /* the run ended with its end marker */
    bool ignoring;   /* this session reached the exited run's program again */
    int run_pid;     /* the run's server process (SO_PEERCRED), 0: unknown */
    uint64_t bytes;  /* received in the run */
    uint64_t end_ms; /* when the run ended */
    char peer_program[256];
    /* The run before this one, kept for --linger after a restart so that
     * its final figures are still scraped: at most one, so a target holds
     * at most two models. prev == NULL: none. */
    struct es_model *prev;
    int prev_pid;
    uint64_t prev_bytes, prev_end_ms;
    char prev_program[256];
    bool said_error;
    unsigned dead_ticks; /* removed: ticks until it is freed (0: alive) */
};

struct metrics {
    uv_loop_t *loop;
    struct es_conn_options opt;
    const char **sources;
    int nsources;
    struct target *targets, *dead;
    double linger_s;
    unsigned top;
    uv_timer_t tick, scan;
    uv_signal_t sigint, sigterm;
    struct es_promhttp *http;
};

static void open_conn(struct target *t);

/* The server's process name on a Unix socket, for GHC 9.0, which sends its
 * own only at exit. */
static void peer_program(struct target *t) {
    if (t->peer_program[0] == '\0')
        es_session_program_of(t->run_pid, t->peer_program, sizeof t->peer_program);
}

/* Whether the target's run is exported: connected, or ended less than
 * --linger ago. */
static bool shown(const struct metrics *x, const struct target *t) {
    return t->run && (t->connected || uv_now(x->loop) < t->end_ms + (uint64_t)(x->linger_s * 1e3));
}

/* A new run starts: keep the ended one as `prev` while it lingers (its
 * model swapped out, the older prev's model reused for the new run). */
static void keep_previous(struct target *t) {
    if (!shown(t->x, t))
        return;
    if (t->prev == NULL) {
        t->prev = malloc(sizeof *t->prev);
        if (t->prev == NULL)
            return; /* the old run's figures go now: nothing else is lost */
        es_model_init(t->prev);
    }
    struct es_model *m = t->prev;
    t->prev = t->model;
    t->model = m;
    t->prev_pid = t->prev->pid ? (int)t->prev->pid : t->run_pid;
    t->prev_bytes = t->bytes;
    t->prev_end_ms = t->end_ms;
    peer_program(t);
    memcpy(t->prev_program, t->peer_program, sizeof t->prev_program);
}

static void on_header(struct es_conn *c, void *ctx) {
    struct target *t = ctx;
    /* Reconnecting right after the program's end may reach it once more
     * on its way out: that is not a new run. */
    if (t->run && t->exited && c->peer_pid > 0 && c->peer_pid == t->run_pid) {
        t->ignoring = true;
        return;
    }
    if (t->run)
        keep_previous(t);
    es_model_reset(t->model);
    es_model_header(t->model, &c->stream.header);
    t->run = t->connected = true;
    t->exited = false;
    t->run_pid = c->peer_pid;
    t->peer_program[0] = '\0';
    t->said_error = false;
    peer_program(t);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    struct target *t = ctx;
    if (!t->ignoring)
        es_model_event(t->model, ev);
}

static void on_skip(struct es_conn *c, const struct es_stream_skip *run, void *ctx) {
    (void)c;
    struct target *t = ctx;
    if (!t->ignoring)
        es_model_skip(t->model, run);
}

static void on_reconnect(uv_timer_t *timer) {
    open_conn(timer->data);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct target *t = ctx;
    if (t->ignoring) {
        t->ignoring = false;
    } else if (t->connected) {
        t->connected = false;
        t->bytes = c->info.bytes;
        t->end_ms = uv_now(t->x->loop);
        if (how == ES_CONN_COMPLETE) {
            es_model_end(t->model);
            t->exited = true;
        }
    } else if (!t->said_error) {
        /* No eventlog there (not a program's socket, or a bad stream). */
        fprintf(stderr, "eventlog-socket metrics: %s: %s (trying again)\n", c->name, c->error);
        t->said_error = true;
    }
    es_conn_close(c);
    t->conn_open = false;
    t->cur ^= 1;
    uv_timer_start(&t->reconnect, on_reconnect, t->said_error ? 10 * RECONNECT_MS : RECONNECT_MS,
                   0);
}

static void open_conn(struct target *t) {
    /* The model reads only the events it needs one by one (es_model_skip). */
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_end = on_end,
                                   .ctx = t,
                                   .want = t->model->want,
                                   .window = t->model->window,
                                   .on_skip = on_skip};
    struct es_conn *c = &t->conns[t->cur];
    if (es_conn_open(c, t->x->loop, t->source, &t->x->opt, &cb) != 0) {
        if (!t->said_error)
            fprintf(stderr, "eventlog-socket metrics: %s\n", c->error);
        t->said_error = true;
        return;
    }
    /* Waiting for a program is the normal state here: nothing on stderr. */
    c->said_waiting = true;
    t->conn_open = true;
}

static struct target *add_target(struct metrics *x, const char *source, bool from_glob) {
    struct target *t = calloc(1, sizeof *t);
    struct es_model *m = malloc(sizeof *m);
    if (t == NULL || m == NULL) {
        free(t);
        free(m);
        fprintf(stderr, "eventlog-socket metrics: out of memory for %s\n", source);
        return NULL;
    }
    es_model_init(m);
    t->model = m;
    t->x = x;
    snprintf(t->source, sizeof t->source, "%s", source);
    t->from_glob = from_glob;
    uv_timer_init(x->loop, &t->reconnect);
    t->reconnect.data = t;
    t->next = x->targets;
    x->targets = t;
    open_conn(t);
    return t;
}

/* Stop following `t` (its socket went away); freed a little later. */
static void remove_target(struct metrics *x, struct target *t) {
    if (t->conn_open)
        es_conn_close(&t->conns[t->cur]);
    t->conn_open = false;
    uv_close((uv_handle_t *)&t->reconnect, NULL);
    t->dead_ticks = FREE_AFTER_TICKS;
    t->next = x->dead;
    x->dead = t;
}

static void free_target(struct target *t) {
    es_model_destroy(t->model);
    free(t->model);
    if (t->prev != NULL)
        es_model_destroy(t->prev);
    free(t->prev);
    free(t);
}

static bool is_glob(const char *s) {
    return strpbrk(s, "*?[") != NULL;
}

/* Re-read every glob: new paths become targets, vanished ones go. */
static void scan(struct metrics *x) {
    for (struct target *t = x->targets; t; t = t->next)
        t->matched = false;
    for (int i = 0; i < x->nsources; i++) {
        if (!is_glob(x->sources[i]))
            continue;
        const char *pattern = x->sources[i];
        if (strncmp(pattern, "unix:", 5) == 0)
            pattern += 5;
        glob_t g;
        if (glob(pattern, 0, NULL, &g) != 0)
            continue;
        for (size_t k = 0; k < g.gl_pathc; k++) {
            char src[300];
            snprintf(src, sizeof src, "unix:%s", g.gl_pathv[k]);
            struct target *t = x->targets;
            while (t && strcmp(t->source, src) != 0)
                t = t->next;
            if (t == NULL)
                t = add_target(x, src, true);
            if (t)
                t->matched = true;
        }
        globfree(&g);
    }
    for (struct target **p = &x->targets; *p;) {
        struct target *t = *p;
        if (t->from_glob && !t->matched && !shown(x, t)) {
            *p = t->next;
            remove_target(x, t);
        } else {
            p = &t->next;
        }
    }
}

static void on_scan(uv_timer_t *timer) {
    scan(timer->data);
}

/* Whether `t`'s previous run is still exported. */
static bool prev_shown(const struct metrics *x, const struct target *t) {
    return t->prev != NULL && uv_now(x->loop) < t->prev_end_ms + (uint64_t)(x->linger_s * 1e3);
}

/* Write the exposition of every target (and of lingering previous runs)
 * and publish it. */
static void publish(struct metrics *x) {
    size_t n = 0;
    for (struct target *t = x->targets; t; t = t->next)
        n += 1 + prev_shown(x, t);
    struct es_promtext_target *pt = calloc(n ? n : 1, sizeof *pt);
    if (pt == NULL)
        return;
    size_t i = 0;
    for (struct target *t = x->targets; t; t = t->next, i++) {
        if (prev_shown(x, t)) {
            struct es_promtext_target *q = &pt[i++];
            q->source = t->source;
            q->m = t->prev;
            q->program = t->prev->program[0] ? t->prev->program : t->prev_program;
            q->pid = t->prev->pid ? t->prev->pid : (uint32_t)(t->prev_pid > 0 ? t->prev_pid : 0);
            q->received_bytes = t->prev_bytes;
        }
        struct es_promtext_target *p = &pt[i];
        p->source = t->source;
        p->connected = t->connected;
        if (!shown(x, t)) {
            p->program = "";
            continue;
        }
        peer_program(t);
        p->m = t->model;
        p->program = t->model->program[0] ? t->model->program : t->peer_program;
        p->pid = t->model->pid ? t->model->pid : (uint32_t)(t->run_pid > 0 ? t->run_pid : 0);
        p->received_bytes = t->connected ? t->conns[t->cur].info.bytes : t->bytes;
        if (t->connected)
            es_model_extend_to_now(t->model);
    }
    struct es_webbuf b = {0};
    es_promtext_write(&b, pt, n, x->top);
    free(pt);
    if (b.oom) {
        es_webbuf_free(&b);
        return;
    }
    es_promhttp_publish(x->http, b.p, b.len);
}

static void on_tick(uv_timer_t *timer) {
    struct metrics *x = timer->data;
    for (struct target **p = &x->dead; *p;) {
        struct target *t = *p;
        if (--t->dead_ticks == 0) {
            *p = t->next;
            free_target(t);
        } else {
            p = &t->next;
        }
    }
    publish(x);
}

static void on_signal(uv_signal_t *sig, int signum) {
    (void)signum;
    struct metrics *x = sig->data;
    uv_stop(x->loop);
}

static void metrics_usage(FILE *f) {
    fprintf(f,
            "usage: eventlog-socket metrics [--http HOST:PORT] [--token-file FILE] [--linger S]\n"
            "                               [--top-labels N] SOURCE...\n"
            "Exports the programs at each SOURCE to Prometheus: http://HOST:PORT/metrics\n"
            "(default 127.0.0.1:9464; port 0 picks a free one; the URL is printed).\n"
            "A SOURCE is an address (unix:/path, a path, tcp:HOST:PORT, HOST:PORT, :PORT)\n"
            "or a quoted glob of Unix socket paths ('/run/app/*.sock'), read again every\n"
            "%d s. Each program is reconnected to whenever its run ends (a restarted\n"
            "program is a new pid); an ended run's series stay for --linger S (default\n"
            "60). --top-labels N: census labels exported per program (default %d; the\n"
            "rest as label=\"other\"). --token-file FILE: a token of yours (a file only\n"
            "you may read, 16 to 256 characters) that scrapes carry as Authorization:\n"
            "Bearer (Prometheus: authorization: credentials_file) or ?token=; it lets\n"
            "other users (Prometheus's) scrape a loopback exporter, and replaces the\n"
            "random token printed for another address. Runs until Ctrl-C.\n",
            SCAN_MS / 1000, ES_PROMTEXT_TOP_LABELS);
}

static void close_handle(uv_handle_t *h) {
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void run(struct metrics *x) {
    for (int i = 0; i < x->nsources; i++)
        if (!is_glob(x->sources[i]))
            add_target(x, x->sources[i], false);
    scan(x);
    uv_timer_init(x->loop, &x->tick);
    uv_timer_init(x->loop, &x->scan);
    x->tick.data = x->scan.data = x;
    uv_timer_start(&x->tick, on_tick, TICK_MS, TICK_MS);
    uv_timer_start(&x->scan, on_scan, SCAN_MS, SCAN_MS);
    uv_signal_init(x->loop, &x->sigint);
    uv_signal_init(x->loop, &x->sigterm);
    x->sigint.data = x->sigterm.data = x;
    uv_signal_start(&x->sigint, on_signal, SIGINT);
    uv_signal_start(&x->sigterm, on_signal, SIGTERM);
    publish(x);
    uv_run(x->loop, UV_RUN_DEFAULT);
    while (x->targets) {
        struct target *t = x->targets;
        x->targets = t->next;
        remove_target(x, t);
    }
    close_handle((uv_handle_t *)&x->tick);
    close_handle((uv_handle_t *)&x->scan);
    close_handle((uv_handle_t *)&x->sigint);
    close_handle((uv_handle_t *)&x->sigterm);
    uv_run(x->loop, UV_RUN_DEFAULT);
    while (x->dead) {
        struct target *t = x->dead;
        x->dead = t->next;
        free_target(t);
    }
}

/* --top-labels N and --linger S, checked. Returns 0, or 2 after a message. */
static int numbers(struct metrics *x, const char *top, const char *linger) {
    char *end;
    if (top != NULL) {
        long v = strtol(top, &end, 10);
        if (*end != '\0' || v < 0 || v > 10000) {
            fprintf(stderr, "eventlog-socket metrics: --top-labels: not 0 to 10000: %s\n", top);
            return 2;
        }
        x->top = (unsigned)v;
    }
    if (linger != NULL) {
        double v = strtod(linger, &end);
        if (*end != '\0' || !(v >= 0 && v <= 86400)) {
            fprintf(stderr, "eventlog-socket metrics: --linger: not 0 to 86400 seconds: %s\n",
                    linger);
            return 2;
        }
        x->linger_s = v;
    }
    return 0;
}

int es_metrics_main(int argc, char **argv) {
    static struct metrics the_metrics;
    struct metrics *x = &the_metrics;
    es_conn_default_options(&x->opt);
    x->opt.cost_notices = true;
    x->opt.retry = true;
    /* A killed program's socket file stays until the glob drops it (never,
     * while it matches): try it less and less often, up to a scan's period. */
    x->opt.retry_max_ms = SCAN_MS;
    x->top = ES_PROMTEXT_TOP_LABELS;
    x->linger_s = 60;
    const char *http = "127.0.0.1:9464", *top = NULL, *linger = NULL, *token_file = NULL;
    const char *pos[64] = {0};
    const struct es_opt opts[] = {{"--http", NULL, ES_OPT_VALUE, &http, 0, NULL, NULL},
                                  {"--top-labels", NULL, ES_OPT_VALUE, &top, 0, NULL, NULL},
                                  {"--linger", NULL, ES_OPT_VALUE, &linger, 0, NULL, NULL},
                                  {"--token-file", NULL, ES_OPT_VALUE, &token_file, 0, NULL, NULL},
                                  {0}};
    const struct es_opts_spec spec = {.cmd = "metrics",
                                      .opts = opts,
                                      .conn = &x->opt,
                                      .usage = metrics_usage,
                                      .unknown = "unknown option or missing value: %s",
                                      .pos = pos,
                                      .npos = 64,
                                      .required = 1,
                                      .too_many = "at most 64 sources (%s)"};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    if (numbers(x, top, linger) != 0)
        return 2;
    x->sources = pos;
    while (x->nsources < 64 && pos[x->nsources] != NULL)
        x->nsources++;
    struct sockaddr_storage sa;
    socklen_t salen;
    bool loopback = false;
    if (es_webaddr_parse(http, &sa, &salen, &loopback) != 0) {
        fprintf(stderr, "eventlog-socket metrics: --http: not HOST:PORT: %s\n", http);
        return 2;
    }
    static char user_token[ES_WEBAUTH_TOKEN_MAX + 1];
    char why[512];
    if (token_file != NULL && es_webauth_read_token(token_file, user_token, why, sizeof why) != 0) {
        fprintf(stderr, "eventlog-socket metrics: --token-file %s\n", why);
        return 2;
    }
    x->loop = uv_default_loop();
    x->http = es_promhttp_start(&sa, loopback, token_file ? user_token : NULL);
    if (x->http == NULL) {
        fprintf(stderr, "eventlog-socket metrics: cannot serve HTTP on %s: %s\n", http,
                strerror(errno ? errno : EADDRINUSE));
        return 2;
    }
    es_promhttp_print_url(x->http, http, token_file);
    fflush(stdout);
    run(x);
    es_promhttp_stop(x->http);
    uv_loop_close(x->loop);
    return 0;
}
