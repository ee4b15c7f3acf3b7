/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket metrics [--http HOST:PORT] SOURCE...`: a Prometheus
 * exporter for every program on a host. A SOURCE is an address (as every
 * subcommand takes it) or a glob of Unix socket paths, re-read every
 * SCAN_MS so that programs starting later are picked up and those whose
 * socket went away are dropped; a path a glob matches is followed only once
 * it sent an eventlog header (client/prom/scan.h says which to probe next,
 * shared out by owner; up to 64 probes at once, each ended by its own
 * deadline and replaced at once). Each program is a target
 * (client/prom/target.h: one connection, reconnecting whenever it ends, a
 * restarted program, a new pid, being a new set of series; one model, and
 * the previous run's while it lingers). Two sides:
 *   - the libuv loop thread (this file) owns the targets, their
 *     connections and models; every TICK_MS it writes the exposition
 *     (client/prom/text.h) and publishes it;
 *   - libmicrohttpd's thread (client/prom/http.c) answers GET /metrics with
 *     the latest one, so a scrape never waits on a program.
 * A run that ended keeps its last figures for --linger seconds (a program
 * that exited between two scrapes still shows its final counts), then its
 * series go. */
#include "source/conn.h"
#include "model/model.h"
#include "opts.h"
#include "subcommands.h"
#include "http.h"
#include "scan.h"
#include "target.h"
#include "text.h"
#include "source/session.h"
#include "source/units.h"
#include "http/addr.h"
#include "http/auth.h"
#include "http/buf.h"

#include <assert.h>
#include <errno.h>
#include <glob.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS 1000
#define SCAN_MS 2000
/* A removed target is freed this many ticks later, once the loop has
 * closed its handles. */
#define FREE_AFTER_TICKS 2

struct metrics {
    uv_loop_t *loop;
    struct es_conn_options opt;
    struct es_conn_options probe_opt; /* a glob path's first connection */
    struct es_promtarget_env env;     /* the targets' view of the above */
    const char **sources;
    int nsources;
    struct es_queue targets; /* followed (es_promtarget), newest first */
    struct es_queue dead;    /* stopped, freed FREE_AFTER_TICKS later */
    struct es_promscan sc;   /* what the globs match that is not followed yet */
    double linger_s;
    unsigned top;
    uv_timer_t tick, scan;
    uv_timer_t refill; /* a probe ended: the next ones start (trials) */
    uv_signal_t sigint, sigterm;
    struct es_promhttp *http;
};

#define TARGET(n) ES_QUEUE_DATA(n, struct es_promtarget, node)

static struct es_promtarget *add_target(struct metrics *x, const char *source, bool from_glob) {
    struct es_promtarget *t = es_promtarget_new(&x->env, source, from_glob);
    if (t != NULL)
        es_queue_insert_head(&x->targets, &t->node);
    return t;
}

/* Stop following `t` (its socket went away); freed a little later. */
static void remove_target(struct metrics *x, struct es_promtarget *t) {
    es_queue_remove(&x->targets, &t->node);
    es_promtarget_stop(t);
    t->dead_ticks = FREE_AFTER_TICKS;
    es_queue_insert_head(&x->dead, &t->node);
}

static bool is_glob(const char *s) {
    return strpbrk(s, "*?[") != NULL;
}

/* The path of `source` matched by a glob: its target, or NULL. */
static struct es_promtarget *target_of(struct metrics *x, const char *path) {
    ES_QUEUE_FOREACH(n, &x->targets) {
        struct es_promtarget *t = TARGET(n);
        if (strncmp(t->source, "unix:", 5) == 0 && strcmp(t->source + 5, path) == 0)
            return t;
    }
    return NULL;
}

/* Re-read every glob: new paths become candidates (client/prom/scan.h),
 * vanished ones go. */
static void scan(struct metrics *x) {
    uint64_t now = uv_now(x->loop);
    ES_QUEUE_FOREACH(n, &x->targets) {
        TARGET(n)->matched = false;
    }
    es_promscan_begin(&x->sc);
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
            struct es_promtarget *t = target_of(x, g.gl_pathv[k]);
            if (t != NULL)
                t->matched = true;
            else
                es_promscan_match(&x->sc, g.gl_pathv[k], now);
        }
        globfree(&g);
    }
    ES_QUEUE_FOREACH_SAFE(n, &x->targets) {
        struct es_promtarget *t = TARGET(n);
        if (t->from_glob && !t->matched && !es_promtarget_shown(t)) {
            if (t->trial != NULL)
                es_promscan_forget(&x->sc, t->trial);
            remove_target(x, t);
        }
    }
    es_promscan_end(&x->sc, now);
}

/* A probe of a candidate lasts this long at most (or the connect timeout,
 * if shorter), its connection's own deadline: a program's library sends
 * the header as it accepts. */
#define PROBE_MS 2000

/* Candidates being probed: followed from their header on, or given up (no
 * eventlog, or none by the deadline; a probe found still going after twice
 * its deadline is given up too); then as many new probes as there is room
 * for. */
static void trials(struct metrics *x) {
    uint64_t now = uv_now(x->loop);
    uint64_t limit = 2 * (uint64_t)(x->probe_opt.connect_timeout * 1e3) + TICK_MS;
    ES_QUEUE_FOREACH_SAFE(n, &x->targets) {
        struct es_promtarget *t = TARGET(n);
        if (t->trial == NULL || t->run) {
            if (t->trial != NULL)
                es_promscan_forget(&x->sc, t->trial);
            t->trial = NULL;
            continue;
        }
        if (!t->said_error && now - t->trial_ms < limit)
            continue;
        es_promscan_failed(&x->sc, t->trial, t->said_error ? t->why : "no eventlog header", now);
        remove_target(x, t);
    }
    struct es_promscan_cand *c;
    while ((c = es_promscan_next(&x->sc)) != NULL) {
        struct es_promtarget *t = add_target(x, c->source, true);
        if (t == NULL) {
            es_promscan_failed(&x->sc, c, "out of memory", now);
            break;
        }
        t->trial = c;
        t->trial_ms = now;
    }
}

static void on_refill(uv_timer_t *timer) {
    trials(timer->data);
}

/* A probe ended (client/prom/target.h): its place goes to the next path
 * once the loop is out of the probe's callbacks. */
static void on_probed(void *ctx) {
    struct metrics *x = ctx;
    uv_timer_start(&x->refill, on_refill, 0, 0);
}

static void on_scan(uv_timer_t *timer) {
    scan(timer->data);
    trials(timer->data);
}

/* Write the exposition of every target (and of lingering previous runs)
 * and publish it. */
static void publish(struct metrics *x) {
    size_t n = 2 * es_queue_len(&x->targets);
    struct es_promtext_target *pt = calloc(n ? n : 1, sizeof *pt);
    if (pt == NULL)
        return;
    size_t k = 0;
    ES_QUEUE_FOREACH(e, &x->targets) {
        k += es_promtarget_export(TARGET(e), pt + k);
    }
    assert(k <= n);
    struct es_httpbuf b = {0};
    es_promtext_write(&b, pt, k, x->top);
    free(pt);
    if (b.oom) {
        es_httpbuf_free(&b);
        return;
    }
    es_promhttp_publish(x->http, b.p, b.len);
}

static void on_tick(uv_timer_t *timer) {
    struct metrics *x = timer->data;
    bool freed = false;
    ES_QUEUE_FOREACH_SAFE(n, &x->dead) {
        struct es_promtarget *t = TARGET(n);
        assert(t->dead_ticks > 0);
        if (--t->dead_ticks == 0) {
            es_queue_remove(&x->dead, n);
            es_promtarget_free(t);
            freed = true;
        }
    }
    ES_QUEUE_FOREACH(n, &x->targets) {
        freed |= es_promtarget_tidy(TARGET(n));
    }
    /* What the models of ended runs held goes back to the system, not
     * only to malloc's free lists. */
    if (freed)
        malloc_trim(0);
    trials(x);
    es_promscan_report(&x->sc);
    es_promhttp_cut_late(x->http);
    publish(x);
}

static void on_signal(uv_signal_t *sig, int signum) {
    (void)signum;
    struct metrics *x = sig->data;
    uv_stop(x->loop);
}

static void close_handle(uv_handle_t *h) {
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void run(struct metrics *x) {
    es_queue_init(&x->targets);
    es_queue_init(&x->dead);
    uv_timer_init(x->loop, &x->refill);
    x->refill.data = x;
    for (int i = 0; i < x->nsources; i++)
        if (!is_glob(x->sources[i]))
            add_target(x, x->sources[i], false);
    es_promscan_init(&x->sc);
    scan(x);
    trials(x);
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
    struct es_queue_node *n;
    while ((n = es_queue_first(&x->targets)) != NULL)
        remove_target(x, TARGET(n));
    close_handle((uv_handle_t *)&x->tick);
    close_handle((uv_handle_t *)&x->scan);
    close_handle((uv_handle_t *)&x->refill);
    close_handle((uv_handle_t *)&x->sigint);
    close_handle((uv_handle_t *)&x->sigterm);
    uv_run(x->loop, UV_RUN_DEFAULT);
    while ((n = es_queue_pop_head(&x->dead)) != NULL)
        es_promtarget_free(TARGET(n));
    es_promscan_destroy(&x->sc);
}

/* --top-labels N and --linger S, checked. Returns 0, or 2 after a message. */
static int numbers(struct metrics *x, const char *top, const char *linger) {
    char *end;
    if (top != NULL) {
        long v = strtol(top, &end, 10);
        if (end == top || *end != '\0' || v < 0 || v > 10000) {
            fprintf(stderr, "eventlog-socket metrics: --top-labels: not 0 to 10000: %s\n", top);
            return 2;
        }
        x->top = (unsigned)v;
    }
    if (linger != NULL && !es_units_seconds(linger, 86400, true, &x->linger_s)) {
        fprintf(stderr,
                "eventlog-socket metrics: --linger %s: not a duration from 0 to a day "
                "(" ES_UNITS_GRAMMAR ")\n",
                linger);
        return 2;
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
    static const char *pos[64]; /* x->sources: as long-lived as x */
    const struct es_opt opts[] = {
        {"--http", NULL, ES_OPT_VALUE, &http, 0, NULL, NULL, false},
        {"--top-labels", NULL, ES_OPT_VALUE, &top, 0, NULL, NULL, false},
        {"--linger", NULL, ES_OPT_VALUE, &linger, 0, NULL, NULL, false},
        {"--token-file", NULL, ES_OPT_VALUE, &token_file, 0, NULL, NULL, false},
        {0}};
    const struct es_opts_spec spec = {.cmd = "metrics",
                                      .opts = opts,
                                      .conn = &x->opt,
                                      .pos = pos,
                                      .npos = 64,
                                      .required = 1,
                                      .pos_names = (const char *[]){"SOURCE"},
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
    if (es_httpaddr_parse(http, &sa, &salen, &loopback) != 0) {
        fprintf(stderr, "eventlog-socket metrics: --http: not HOST:PORT: %s\n", http);
        return 2;
    }
    static char user_token[ES_HTTPAUTH_TOKEN_MAX + 1];
    char why[512];
    if (token_file != NULL &&
        es_httpauth_read_token(token_file, user_token, why, sizeof why) != 0) {
        fprintf(stderr, "eventlog-socket metrics: --token-file %s\n", why);
        return 2;
    }
    x->loop = uv_default_loop();
    /* A probe: one connection, its header due within PROBE_MS. */
    x->probe_opt = x->opt;
    x->probe_opt.retry = false;
    if (x->probe_opt.connect_timeout > PROBE_MS / 1e3)
        x->probe_opt.connect_timeout = PROBE_MS / 1e3;
    x->env = (struct es_promtarget_env){.loop = x->loop,
                                        .opt = &x->opt,
                                        .probe_opt = &x->probe_opt,
                                        .on_probed = on_probed,
                                        .probed_ctx = x,
                                        .linger_s = x->linger_s};
    es_promtarget_env_init(&x->env);
    x->http = es_promhttp_start(&sa, loopback, token_file ? user_token : NULL);
    if (x->http == NULL) {
        int e = errno ? errno : EADDRINUSE;
        fprintf(stderr, "eventlog-socket metrics: cannot serve HTTP on %s: %s%s\n", http,
                strerror(e), e == EADDRINUSE ? ES_HTTPADDR_IN_USE_HINT : "");
        return 2;
    }
    es_promhttp_print_url(x->http, http, token_file);
    fflush(stdout);
    run(x);
    es_promhttp_stop(x->http);
    uv_loop_close(x->loop);
    return 0;
}
