/* SPDX-License-Identifier: BSD-3-Clause */
/* For accept4. */
#define _GNU_SOURCE
#include "es_accept.h"

#include "base/es_fd.h"

#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void on_readable(uv_poll_t *h, int status, int events);

static void on_resume(uv_timer_t *t) {
    struct es_accept *a = t->data;
    assert(a->paused); /* the timer runs only while accepting is paused */
    a->paused = false;
    if (!a->closing)
        uv_poll_start(&a->poll, UV_READABLE, on_readable);
}

/* Stop accepting for the rest of the window (at least `min_ms`). */
static void pause_accepting(struct es_accept *a, uint64_t now_ns, uint64_t min_ms) {
    uint64_t left = a->window_ns + (uint64_t)ES_ACCEPT_WINDOW_MS * 1000000u;
    uint64_t ms = left > now_ns ? (left - now_ns + 999999) / 1000000 : 0;
    assert(!a->paused && !a->closing); /* the poll is stopped while paused */
    a->paused = true;
    uv_poll_stop(&a->poll);
    uv_timer_start(&a->resume, on_resume, ms > min_ms ? ms : min_ms, 0);
}

/* One accepted connection: admitted (to the server) or refused (closed
 * here). Returns the nanoseconds a refusal took, 0 for an admission. */
static uint64_t admit(struct es_accept *a, int fd, uint64_t start_ns) {
    char why[300];
    const char *refused =
        es_admit_refusal(&a->rules, &a->finder, fd, a->env.nclients(a->env.ctx), why, sizeof why);
    if (refused == NULL) {
        a->env.on_client(fd, a->env.ctx);
        return 0;
    }
    close(fd);
    atomic_fetch_add_explicit(&a->counters->clients_refused, 1, memory_order_relaxed);
    es_log_limited(&a->log_refused, uv_now(a->loop), "refusing a client: %s", refused);
    uint64_t end = uv_hrtime();
    return end > start_ns ? end - start_ns : 0;
}

static void on_readable(uv_poll_t *h, int status, int events) {
    (void)events;
    struct es_accept *a = h->data;
    assert(!a->paused && !a->closing);
    if (status < 0) {
        a->env.on_error(status, "waiting for clients", a->env.ctx);
        return;
    }
    for (unsigned i = 0; i < ES_ACCEPT_BATCH && !a->closing; i++) {
        uint64_t start = uv_hrtime();
        if (start - a->window_ns >= (uint64_t)ES_ACCEPT_WINDOW_MS * 1000000u) {
            a->window_ns = start;
            a->window_spent_ns = 0;
        }
        int fd = es_fd_above_std(accept4(a->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (fd < 0) {
            int err = errno;
            if (err == EAGAIN || err == EWOULDBLOCK)
                return;
            if (err == EINTR || err == ECONNABORTED || err == EPROTO)
                continue;
            /* Out of descriptors or memory: the connection stays queued
             * (or, taken but not movable above the standard streams, is
             * closed), and the socket stays readable; take a breath
             * instead of spinning on it. */
            es_log_limited(&a->log_paused, uv_now(a->loop),
                           "cannot take a client in: %s; trying again in %d ms", strerror(err),
                           ES_ACCEPT_WINDOW_MS);
            pause_accepting(a, start, ES_ACCEPT_WINDOW_MS);
            return;
        }
        a->window_spent_ns += admit(a, fd, start);
        if (a->window_spent_ns > a->budget_ns) {
            a->pauses++;
            pause_accepting(a, uv_hrtime(), 1);
            return;
        }
    }
}

int es_accept_start(struct es_accept *a, uv_loop_t *loop, int fd,
                    const struct es_admit_rules *rules, struct es_counters *counters,
                    const struct es_accept_env *env) {
    *a = (struct es_accept){.loop = loop,
                            .fd = fd,
                            .rules = *rules,
                            .counters = counters,
                            .env = *env,
                            .budget_ns = (uint64_t)ES_ACCEPT_REFUSAL_BUDGET_US * 1000u};
    es_peer_finder_init(&a->finder);
    a->log_refused.what = "clients refused";
    a->log_paused.what = "pauses for lack of descriptors or memory";
    a->poll.data = a->resume.data = a;
    uv_timer_init(loop, &a->resume); /* cannot fail */
    int r = uv_poll_init_socket(loop, &a->poll, fd);
    a->poll_open = r == 0;
    return r == 0 ? uv_poll_start(&a->poll, UV_READABLE, on_readable) : r;
}

void es_accept_close(struct es_accept *a, uv_close_cb cb) {
    assert(!a->closing); /* once */
    a->closing = true;
    if (a->poll_open)
        uv_close((uv_handle_t *)&a->poll, cb);
    uv_close((uv_handle_t *)&a->resume, cb);
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    es_peer_finder_close(&a->finder);
}

void es_accept_flush_logs(struct es_accept *a, uint64_t now_ms, bool force) {
    es_log_limit_flush(&a->log_refused, now_ms, force);
    es_log_limit_flush(&a->log_paused, now_ms, force);
}
