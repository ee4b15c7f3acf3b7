/* SPDX-License-Identifier: BSD-3-Clause */
#include "session.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

void es_session_init(struct es_session *s) {
    memset(s, 0, sizeof *s);
    s->loop = uv_default_loop();
    es_conn_default_options(&s->opt);
    s->conn = &s->conns[0];
}

int es_session_open(struct es_session *s, const char *source, const struct es_conn_callbacks *cb) {
    s->source = source;
    s->cb = *cb;
    s->conn = &s->conns[s->cur];
    int r = es_conn_open(s->conn, s->loop, source, &s->opt, cb);
    s->open = r == 0;
    return r;
}

static void on_signal(uv_signal_t *sig, int signum) {
    struct es_session *s = sig->data;
    char why[300];
    es_conn_signal_words(&s->conn->info, signum, why, sizeof why);
    s->on_signal(s->signal_ctx, signum, why);
}

void es_session_signals(struct es_session *s, bool term, es_session_signal_fn *fn, void *ctx) {
    s->on_signal = fn;
    s->signal_ctx = ctx;
    uv_signal_init(s->loop, &s->sigint);
    s->sigint.data = s;
    s->sigint_init = true;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    if (term) {
        uv_signal_init(s->loop, &s->sigterm);
        s->sigterm.data = s;
        s->sigterm_init = true;
        uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    }
}

int es_session_start(struct es_session *s, const char *cmd, const char *source,
                     const struct es_conn_callbacks *cb, bool term, es_session_signal_fn *fn) {
    if (es_session_open(s, source, cb) != 0) {
        fprintf(stderr, "eventlog-socket%s%s: %s: %s\n", cmd ? " " : "", cmd ? cmd : "",
                s->conn->name, s->conn->error);
        es_session_finish(s);
        return 2;
    }
    if (fn != NULL)
        es_session_signals(s, term, fn, cb->ctx);
    return 0;
}

void es_session_run(struct es_session *s) {
    uv_run(s->loop, UV_RUN_DEFAULT);
    es_session_finish(s);
}

static void on_reconnect(uv_timer_t *t) {
    struct es_session *s = t->data;
    s->reopened(s->cb.ctx, es_session_open(s, s->source, &s->cb));
}

void es_session_reconnect(struct es_session *s, uint64_t ms, es_session_reopened_fn *reopened) {
    es_conn_close(s->conn);
    s->open = false;
    s->cur ^= 1;
    s->conn = &s->conns[s->cur];
    if (!s->reconnect_init) {
        uv_timer_init(s->loop, &s->reconnect);
        s->reconnect.data = s;
        s->reconnect_init = true;
    }
    s->reopened = reopened;
    uv_timer_start(&s->reconnect, on_reconnect, ms, 0);
}

static void close_handle(uv_handle_t *h, bool init) {
    if (init && !uv_is_closing(h))
        uv_close(h, NULL);
}

void es_session_close(struct es_session *s) {
    if (s->open)
        es_conn_close(s->conn);
    s->open = false;
    close_handle((uv_handle_t *)&s->reconnect, s->reconnect_init);
    close_handle((uv_handle_t *)&s->sigint, s->sigint_init);
    close_handle((uv_handle_t *)&s->sigterm, s->sigterm_init);
}

void es_session_finish(struct es_session *s) {
    es_session_close(s);
    uv_run(s->loop, UV_RUN_DEFAULT);
    uv_loop_close(s->loop);
}

void es_session_program_of(int pid, char *out, size_t size) {
    out[0] = '\0';
    if (pid <= 0)
        return;
    char path[64], arg0[256];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return;
    size_t n = fread(arg0, 1, sizeof arg0 - 1, f);
    fclose(f);
    arg0[n] = '\0';
    const char *slash = strrchr(arg0, '/');
    snprintf(out, size, "%s", slash ? slash + 1 : arg0);
}
