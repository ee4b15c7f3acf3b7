/* SPDX-License-Identifier: BSD-3-Clause */
#include "target.h"

#include "source/addr.h"
#include "source/heapmode.h"
#include "source/session.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECONNECT_MS 500

static void open_conn(struct es_promtarget *t);

static uint64_t linger_ms(const struct es_promtarget *t) {
    return (uint64_t)(t->env->linger_s * 1e3);
}

/* The server's process name on a Unix socket, for GHC 9.0, which sends its
 * own only at exit. */
static void peer_program(struct es_promtarget *t) {
    if (t->peer_program[0] == '\0')
        es_session_program_of(t->run_pid, t->peer_program, sizeof t->peer_program);
}

bool es_promtarget_shown(const struct es_promtarget *t) {
    return t->run && (t->connected || uv_now(t->env->loop) < t->end_ms + linger_ms(t));
}

/* The probe is over (a header, or none): the exporter is told. */
static void probed(struct es_promtarget *t) {
    if (!t->probing)
        return;
    t->probing = false;
    if (t->env->on_probed != NULL)
        t->env->on_probed(t->env->probed_ctx);
}

static struct es_model *new_model(void) {
    struct es_model *m = malloc(sizeof *m);
    if (m != NULL) {
        es_model_init(m);
        es_model_figures_only(m);
    }
    return m;
}

static void free_model(struct es_model **m) {
    if (*m != NULL)
        es_model_destroy(*m);
    free(*m);
    *m = NULL;
}

/* A new run starts: keep the ended one as `prev` while it lingers (its
 * model swapped out, the older prev's model, if any, reused for the new
 * run). */
static void keep_previous(struct es_promtarget *t) {
    if (!es_promtarget_shown(t))
        return;
    struct es_model *m = t->prev;
    t->prev = t->model;
    t->model = m;
    t->prev_pid = t->prev->pid ? (int)t->prev->pid : t->run_pid;
    t->prev_bytes = t->bytes;
    t->prev_end_ms = t->end_ms;
    peer_program(t);
    memcpy(t->prev_program, t->peer_program, sizeof t->prev_program);
    t->prev_heap_mode_proc = t->heap_mode_proc;
}

static void on_header(struct es_conn *c, void *ctx) {
    struct es_promtarget *t = ctx;
    probed(t);
    /* Reconnecting right after the program's end may reach it once more
     * on its way out: that is not a new run. */
    if (t->run && t->exited && es_conn_peer_pid(c) > 0 && es_conn_peer_pid(c) == t->run_pid) {
        t->ignoring = true;
        return;
    }
    if (t->run)
        keep_previous(t);
    /* The source earns its model with a header: a path that sends none
     * (a planted socket, a file) costs no model. */
    if (t->model == NULL && (t->model = new_model()) == NULL) {
        snprintf(t->why, sizeof t->why, "out of memory for its model");
        t->said_error = true;
        fprintf(stderr, "eventlog-socket metrics: %s: %s\n", c->name, t->why);
        return; /* no run: the events are not read (ignoring) */
    }
    es_model_reset(t->model);
    es_model_header(t->model, &c->stream.header);
    /* keep_previous may have put another model in place of the one the
     * connection was opened with: skim by this one's window (with the old
     * run's, a run of skipped events could cross a second the new model
     * has not reached, test metrics_restart_skims_with_the_new_run). */
    es_conn_skim_window(c, t->model->window);
    t->run = t->connected = true;
    t->exited = false;
    t->run_pid = es_conn_peer_pid(c); /* over loopback TCP too */
    t->peer_program[0] = '\0';
    t->said_error = false;
    peer_program(t);
    /* GHC 9.0 says whether it has a heap profile only at exit. */
    t->heap_mode_proc = t->model->no_flush ? es_heapmode_of_pid(t->run_pid) : -1;
}

/* The reader calls these itself (es_conn_callbacks.on_stream_event). */
static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct es_promtarget *t = ctx;
    if (!t->ignoring && t->model != NULL)
        es_model_event(t->model, ev);
}

static void on_skip(const struct es_stream_skip *run, void *ctx) {
    struct es_promtarget *t = ctx;
    if (!t->ignoring && t->model != NULL)
        es_model_skip(t->model, run);
}

static void on_reconnect(uv_timer_t *timer) {
    open_conn(timer->data);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct es_promtarget *t = ctx;
    if (t->ignoring) {
        t->ignoring = false;
    } else if (t->connected) {
        t->connected = false;
        t->bytes = c->info.bytes;
        t->end_ms = uv_now(t->env->loop);
        if (how == ES_CONN_COMPLETE) {
            es_model_end(t->model);
            t->exited = true;
        }
    } else if (!t->said_error) {
        /* No eventlog there (not a program's socket, or a bad stream): a
         * path a glob found is the exporter's to report (client/prom/scan.h,
         * one line a second for all of them). */
        snprintf(t->why, sizeof t->why, "%.159s", c->error);
        if (!t->from_glob)
            fprintf(stderr, "eventlog-socket metrics: %s: %s (trying again)\n", c->name, c->error);
        t->said_error = true;
    }
    es_conn_close(c);
    t->conn_open = false;
    t->cur ^= 1;
    uv_timer_start(&t->reconnect, on_reconnect, t->said_error ? 10 * RECONNECT_MS : RECONNECT_MS,
                   0);
    probed(t);
}

static void open_conn(struct es_promtarget *t) {
    /* The model reads only the events it needs one by one (es_model_skip). */
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_end = on_end,
                                   .ctx = t,
                                   .want = t->env->want,
                                   .window = t->model ? t->model->window : t->no_window,
                                   .on_stream_event = on_event,
                                   .on_stream_skip = on_skip};
    struct es_conn *c = &t->conns[t->cur];
    const struct es_conn_options *opt = t->probing ? t->env->probe_opt : t->env->opt;
    if (es_conn_open(c, t->env->loop, t->source, opt, &cb) != 0) {
        snprintf(t->why, sizeof t->why, "%.159s", c->error);
        if (!t->said_error && !t->from_glob)
            fprintf(stderr, "eventlog-socket metrics: %s\n", c->error);
        t->said_error = true;
        probed(t);
        return;
    }
    /* Waiting for a program is the normal state here: nothing on stderr. */
    c->said_waiting = true;
    t->conn_open = true;
}

void es_promtarget_env_init(struct es_promtarget_env *env) {
    struct es_model *m = new_model();
    if (m != NULL)
        memcpy(env->want, m->want, sizeof env->want);
    else /* every event one by one: slower, the same figures */
        memset(env->want, 1, sizeof env->want);
    free_model(&m);
}

struct es_promtarget *es_promtarget_new(const struct es_promtarget_env *env, const char *source,
                                        bool from_glob) {
    struct es_promtarget *t = calloc(1, sizeof *t);
    if (t == NULL) {
        fprintf(stderr, "eventlog-socket metrics: out of memory for %s\n", source);
        return NULL;
    }
    t->env = env;
    snprintf(t->source, sizeof t->source, "%s", source);
    /* One label whether the address came from a glob or as typed. */
    struct es_addr a;
    const char *why;
    if (es_addr_parse(source, &a, &why) == 0)
        es_addr_format(&a, t->label, sizeof t->label);
    else
        snprintf(t->label, sizeof t->label, "%s", source);
    t->from_glob = from_glob;
    t->probing = from_glob && env->probe_opt != NULL;
    uv_timer_init(env->loop, &t->reconnect);
    t->reconnect.data = t;
    open_conn(t);
    return t;
}

void es_promtarget_stop(struct es_promtarget *t) {
    if (t->conn_open)
        es_conn_close(&t->conns[t->cur]);
    t->conn_open = false;
    uv_close((uv_handle_t *)&t->reconnect, NULL);
}

void es_promtarget_free(struct es_promtarget *t) {
    assert(!es_queue_linked(&t->node)); /* out of the followed and dead lists */
    free_model(&t->model);
    free_model(&t->prev);
    free(t);
}

/* Whether the previous run is still exported. */
static bool prev_shown(const struct es_promtarget *t) {
    return t->prev != NULL && uv_now(t->env->loop) < t->prev_end_ms + linger_ms(t);
}

bool es_promtarget_tidy(struct es_promtarget *t) {
    bool freed = false;
    if (t->prev != NULL && !prev_shown(t)) {
        free_model(&t->prev);
        freed = true;
    }
    /* A run no longer shown: its model goes, until the next run's header. */
    if (t->model != NULL && !es_promtarget_shown(t)) {
        free_model(&t->model);
        t->run = false;
        freed = true;
    }
    return freed;
}

size_t es_promtarget_export(struct es_promtarget *t, struct es_promtext_target out[2]) {
    size_t i = 0;
    if (prev_shown(t)) {
        struct es_promtext_target *q = &out[i++];
        *q = (struct es_promtext_target){0};
        q->source = t->label;
        q->m = t->prev;
        q->heap_mode_proc = t->prev_heap_mode_proc;
        q->program = t->prev->program[0] ? t->prev->program : t->prev_program;
        q->pid = t->prev->pid ? t->prev->pid : (uint32_t)(t->prev_pid > 0 ? t->prev_pid : 0);
        q->received_bytes = t->prev_bytes;
    }
    /* A path a glob found is exported only once it sent a header: what
     * else matches the glob (planted files and sockets) makes no series. */
    if (!es_promtarget_shown(t) && t->from_glob)
        return i;
    struct es_promtext_target *p = &out[i++];
    *p = (struct es_promtext_target){0};
    p->source = t->label;
    p->connected = t->connected;
    p->heap_mode_proc = t->heap_mode_proc;
    if (!es_promtarget_shown(t)) {
        p->program = "";
        return i;
    }
    peer_program(t);
    p->m = t->model;
    p->program = t->model->program[0] ? t->model->program : t->peer_program;
    p->pid = t->model->pid ? t->model->pid : (uint32_t)(t->run_pid > 0 ? t->run_pid : 0);
    p->received_bytes = t->connected ? t->conns[t->cur].info.bytes : t->bytes;
    if (t->connected)
        es_model_extend_to_now(t->model);
    return i;
}
