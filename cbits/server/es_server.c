/* SPDX-License-Identifier: BSD-3-Clause */
/* The server's lifecycle (es_server.h): building the modules and handing
 * each the env it needs, the library's two threads (es_threads.h), taking
 * clients in and out, stopping. */
#include "es_server.h"
#include "es_server_impl.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "base/es_log.h"
#include "base/es_signal.h"
#include "control/es_registry.h"
#include "delivery/es_cut.h"
#include "delivery/es_notice.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ES_NS_PER_MS UINT64_C(1000000)

/* ---- what the modules call back ------------------------------------------ */

/* Around the RTS flush, from the flush timer: it stops every capability,
 * so no RTS thread may wait for a lossless client meanwhile (es_wait.h). */
static bool around_flush(bool calling, void *ctx) {
    struct es_server *s = ctx;
    if (calling && es_lossless_full(&s->lossless))
        return false;
    es_lossless_rts_call(&s->lossless, calling);
    return true;
}

/* Record an error from the loop thread: the first one is kept and logged. */
static void async_error(int err, const char *what, void *ctx) {
    struct es_server *s = ctx;
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->last_error, &expected, err))
        es_log("error while %s: %s (further errors are not logged)", what,
               eventlog_socket_error_message(err));
}

static void command(uint8_t cmd, void *ctx) {
    struct es_server *s = ctx;
    es_command_offer(&s->command, cmd);
}

static void reading_paused(void *ctx) {
    struct es_server *s = ctx;
    es_command_reading_paused(&s->command);
}

static uint64_t folded(void *ctx) {
    struct es_server *s = ctx;
    return es_command_folded(&s->command) + es_registry_folded();
}

static void lossless_request(struct es_client *c, void *ctx) {
    struct es_server *s = ctx;
    es_lossless_request(&s->lossless, c);
}

static void released(void *ctx) {
    struct es_server *s = ctx;
    es_intake_publish_held(&s->intake);
    es_lossless_publish(&s->lossless);
}

/* For cost notices: the same figures as eventlog_socket_stats(). Read on
 * the loop thread, so its own clock is surely live here. */
static void read_cost(struct es_cost *out, void *ctx) {
    struct es_server *s = ctx;
    es_server_cpu(s, &out->writer_ns, &out->walker_ns, &out->loop_ns);
    out->bytes_sent = atomic_load_explicit(&s->counters.bytes_sent, memory_order_relaxed);
}

void es_server_cpu(struct es_server *s, uint64_t *writer, uint64_t *walker, uint64_t *loop) {
    *writer = atomic_load_explicit(&s->counters.cpu_writer_ns, memory_order_relaxed);
    es_threads_cpu(&s->threads, &s->counters, !atomic_load(&s->stop_called), walker, loop);
}

static void half_closed(void *ctx) {
    struct es_server *s = ctx;
    es_hangup_watch(&s->hangup);
}

static struct es_chunk *empty_block(void *ctx) {
    struct es_server *s = ctx;
    return es_fanout_ended(&s->fan) ? NULL : es_notice_empty(es_fanout_last_time(&s->fan));
}

static void wake_loop(void *ctx) {
    struct es_server *s = ctx;
    es_intake_wake(&s->intake);
}

/* ---- the loop thread ------------------------------------------------------ */

static void begin_stop(struct es_server *s);

/* Flushes while clients are connected, and always while a window is kept
 * (so that it holds the program's latest events). */
static void update_flush(struct es_server *s) {
    bool wanted = es_fanout_nclients(&s->fan) > 0 || es_fanout_has_window(&s->fan);
    es_flush_timer_update(&s->flush, wanted && !s->stopping);
}

/* Summaries of repeating causes whose one-second window has ended. */
static void flush_logs(struct es_server *s, bool force) {
    uint64_t now = uv_now(&s->loop);
    es_bound_flush_logs(&s->bound, now, force);
    es_linger_flush_logs(&s->linger, now, force);
    es_accept_flush_logs(&s->accept, now, force);
    es_lossless_flush_logs(&s->lossless, now, force);
}

/* After every wake-up (es_intake.h). */
static void woken(void *ctx) {
    struct es_server *s = ctx;
    flush_logs(s, false);
    if (atomic_load(&s->stop_requested) && !s->stopping)
        begin_stop(s);
    update_flush(s);
}

static void on_handle_closed(uv_handle_t *h) {
    (void)h;
}

/* Close every handle but the clients' (the loop thread's, or the starting
 * thread's when the start failed; `cb` may be NULL there). */
static void close_handles(struct es_server *s, uv_close_cb cb) {
    es_intake_close(&s->intake, cb);
    uv_close(es_flush_timer_handle(&s->flush), cb);
    es_hangup_close(&s->hangup, cb);
    es_linger_close(&s->linger, cb);
    es_command_close(&s->command, cb);
    es_lossless_close(&s->lossless, cb);
    es_hold_close(&s->hold, cb);
}

/* The server is stopping and every client has gone: close the handles. */
static void maybe_finish(struct es_server *s) {
    if (!s->stopping || s->finished || es_fanout_nclients(&s->fan) > 0)
        return;
    s->finished = true;
    flush_logs(s, true);
    close_handles(s, on_handle_closed);
}

static void client_closed(struct es_client *c, void *ctx) {
    struct es_server *s = ctx;
    es_fanout_leave(&s->fan, c);
    es_lossless_left(&s->lossless, c);
    es_intake_publish_held(&s->intake);
    update_flush(s);
    maybe_finish(s);
}

static void window_request(struct es_client *c, void *ctx) {
    struct es_server *s = ctx;
    es_fanout_window(&s->fan, c);
}

static void client_held(void *ctx) {
    struct es_server *s = ctx;
    es_hold_arm(&s->hold);
}

/* The clients a connection is admitted against: at the limit, those whose
 * peer is gone are let go first and no longer count. */
static unsigned nclients(void *ctx) {
    struct es_server *s = ctx;
    unsigned n = es_fanout_nclients(&s->fan);
    return n < s->cfg.max_clients ? n : es_hangup_make_room(&s->hangup);
}

/* An admitted connection becomes a client. */
static void on_client(int fd, void *ctx) {
    struct es_server *s = ctx;
    int r;
    struct es_client *c = es_client_new(&s->client_env, fd, es_endpoint_is_unix(&s->endpoint), &r);
    if (c == NULL) {
        close(fd);
        async_error(r, "accepting a client", s);
        return;
    }
    /* A client that missed the stream's start gets the POST_START hooks
     * run again for it, after it has joined, so what they post reaches it
     * (es_registry.h). */
    if (!es_fanout_join(&s->fan, c))
        es_registry_client_connected();
    es_lossless_joined(&s->lossless, c);
    es_milestones_first_client(&s->milestones);
    es_intake_publish_held(&s->intake);
    update_flush(s);
    es_client_start(c);
}

static void begin_stop(struct es_server *s) {
    assert(!s->stopping);
    s->stopping = true;
    update_flush(s);
    es_command_stop(&s->command);
    /* The walker has ended (es_server_stop): take what it handed over last. */
    es_intake_take(&s->intake);
    es_accept_close(&s->accept, on_handle_closed);
    es_linger_begin(&s->linger);
    es_fanout_each(&s->fan, c, next) es_client_pump(c);
    maybe_finish(s);
}

static void loop_main(void *arg) {
    struct es_server *s = arg;
    uv_run(&s->loop, UV_RUN_DEFAULT);
    es_endpoint_unlink(&s->endpoint);
    es_milestones_stopped(&s->milestones);
}

/* ---- construction -------------------------------------------------------- */

/* How far alloc_server got, to undo exactly that. */
enum built {
    BUILT_NONE,
    BUILT_INBOX,
    BUILT_WALKER,
    BUILT_FLUSH,
    BUILT_LOSSLESS,
    BUILT_INTAKE,
    BUILT_ALL
};

static void destroy(struct es_server *s, enum built b) {
    if (b >= BUILT_ALL)
        es_milestones_destroy(&s->milestones);
    if (b >= BUILT_INTAKE)
        es_intake_destroy(&s->intake);
    if (b >= BUILT_LOSSLESS)
        es_lossless_destroy(&s->lossless);
    if (b >= BUILT_FLUSH)
        es_flush_timer_destroy(&s->flush);
    if (b >= BUILT_WALKER)
        es_walker_destroy(&s->walker);
    if (b >= BUILT_INBOX)
        es_inbox_destroy(&s->inbox);
    es_fanout_destroy(&s->fan);
    es_endpoint_free(&s->endpoint);
    free(s);
}

/* Free a server whose loop was never initialised or has ended. */
static void discard_server(struct es_server *s) {
    destroy(s, BUILT_ALL);
}

static void free_server(struct es_server *s) {
    uv_loop_close(&s->loop);
    discard_server(s);
}

/* The loop's handles but the wake (open already), and the threads.
 * Returns 0 or a libuv error; then the caller closes the handles
 * (close_handles). */
static int open_handles(struct es_server *s) {
    es_flush_timer_open(&s->flush, &s->loop);
    es_lossless_open(&s->lossless, &s->loop, &s->fan, &s->counters);
    es_command_open(&s->command, &s->loop, &s->fan, &s->lossless);
    es_hangup_open(&s->hangup, &s->loop, &s->fan);
    es_linger_open(&s->linger, &s->loop, &s->fan, s->cfg.linger_ms, es_config_linger_max(&s->cfg));
    if (es_fanout_has_window(&s->fan))
        es_hold_open(&s->hold, &s->loop, &s->fan);
    struct es_accept_env aenv = {
        .on_client = on_client, .nclients = nclients, .on_error = async_error, .ctx = s};
    int r = es_accept_start(&s->accept, &s->loop, es_endpoint_fd(&s->endpoint), &s->admit,
                            &s->counters, &aenv);
    if (r == 0)
        r = es_threads_start(&s->threads, &s->walker, &s->inbox, loop_main, s);
    return r;
}

/* Finish construction once the endpoint listens. */
static int start(struct es_server *s, struct es_server **out) {
    int r = uv_loop_init(&s->loop);
    if (r == 0 && (r = es_intake_open(&s->intake)) != 0)
        uv_loop_close(&s->loop); /* nothing is open on it yet */
    if (r != 0) {
        close(es_endpoint_fd(&s->endpoint));
        es_endpoint_unlink(&s->endpoint);
        discard_server(s);
        return r;
    }
    if ((r = open_handles(s)) != 0) {
        /* Close what was opened; the loop must run once to finish that. */
        es_endpoint_unlink(&s->endpoint);
        es_accept_close(&s->accept, NULL);
        close_handles(s, NULL);
        uv_run(&s->loop, UV_RUN_DEFAULT);
        free_server(s);
        return r;
    }
    es_endpoint_announce(&s->endpoint);
    *out = s;
    return 0;
}

/* The modules that can fail to initialise, in order; returns how far it
 * got and sets *err (0 when all of them did). */
static enum built init_modules(struct es_server *s, int *err) {
    int r = es_inbox_init(&s->inbox, es_server_handoff_limit(&s->cfg));
    if (r != 0)
        return *err = r, BUILT_NONE;
    r = es_walker_init(&s->walker, &s->inbox, es_fanout_def_types(&s->fan), wake_loop, s);
    if (r != 0)
        return *err = r, BUILT_INBOX;
    r = es_flush_timer_init(&s->flush, &s->walker, &s->counters, around_flush, s);
    if (r != 0)
        return *err = r, BUILT_WALKER;
    r = es_lossless_init(&s->lossless, &s->cfg, &s->admit, es_inbox_in_flight_counter(&s->inbox));
    if (r != 0)
        return *err = r, BUILT_FLUSH;
    struct es_intake_env ienv = {.loop = &s->loop,
                                 .walker = &s->walker,
                                 .inbox = &s->inbox,
                                 .fan = &s->fan,
                                 .bound = &s->bound,
                                 .lossless = &s->lossless,
                                 .counters = &s->counters,
                                 .on_error = async_error,
                                 .on_woken = woken,
                                 .ctx = s};
    if ((r = es_intake_init(&s->intake, &ienv)) != 0)
        return *err = r, BUILT_LOSSLESS;
    if ((r = es_milestones_init(&s->milestones)) != 0)
        return *err = r, BUILT_INTAKE;
    *err = 0;
    return BUILT_ALL;
}

/* A server with everything but its loop; NULL (*err set) on failure. */
static struct es_server *alloc_server(const struct es_config *cfg, bool is_unix, es_control_cb fn,
                                      void *ctx, int *err) {
    struct es_server *s = calloc(1, sizeof *s);
    *err = EVENTLOG_SOCKET_ENOMEM;
    if (s == NULL)
        return NULL;
    if (cfg)
        s->cfg = *cfg;
    else
        es_config_defaults(&s->cfg);
    s->pid = getpid();
    atomic_init(&s->stop_called, false);
    atomic_init(&s->stop_requested, false);
    atomic_init(&s->last_error, 0);
    atomic_init(&s->joined, false);
    s->admit = (struct es_admit_rules){.max_clients = s->cfg.max_clients,
                                       .allow_other_users = s->cfg.allow_other_users,
                                       .is_unix = is_unix};
    es_command_init(&s->command, s->cfg.control_interval_ms, fn, ctx);
    es_registry_set_interval(s->cfg.control_interval_ms); /* custom commands alike */
    es_fanout_init(&s->fan, &s->counters, s->cfg.max_buffer, s->cfg.defs_limit);
    es_fanout_keep_window(&s->fan, s->cfg.retain, (uint64_t)s->cfg.retain_seconds * 1000000000u);
    /* A client that is not lossless under `wait` (refused, or demoted) is
     * skipped chunks like under `drop`. */
    es_bound_init(&s->bound, s->cfg.max_buffer, s->cfg.client_limit,
                  s->cfg.slow_client != EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT, &s->loop, &s->fan,
                  &s->counters);
    int r;
    enum built b = init_modules(s, &r);
    if (r != 0) {
        es_log("cannot set the server up: %s", eventlog_socket_error_message(r));
        destroy(s, b);
        *err = r;
        return NULL;
    }
    s->client_env =
        (struct es_client_env){.loop = &s->loop,
                               .store = es_fanout_store(&s->fan),
                               .header = es_fanout_header(&s->fan),
                               .stopping = &s->stopping,
                               .linger_ms = s->cfg.linger_ms,
                               .counters = &s->counters,
                               .read_buf = s->read_buf,
                               .read_buf_len = sizeof s->read_buf,
                               .on_command = command,
                               .on_custom = es_registry_dispatch,
                               .on_reading_paused = reading_paused,
                               .folded = folded,
                               .on_released = released,
                               .on_lossless = lossless_request,
                               .read_cost = read_cost,
                               .on_half_closed = half_closed,
                               .empty_block = empty_block,
                               .on_closed = client_closed,
                               .on_window = window_request,
                               .hold_ms = es_fanout_has_window(&s->fan) ? ES_HOLD_MS : 0,
                               .on_held = client_held,
                               .ctx = s};
    return s;
}

int es_server_start_unix(struct es_server **out, const char *path, const struct es_config *cfg,
                         es_control_cb fn, void *ctx) {
    int r;
    struct es_server *s = alloc_server(cfg, true, fn, ctx, &r);
    if (s == NULL)
        return r;
    r = es_endpoint_open_unix(&s->endpoint, path);
    if (r != 0) {
        discard_server(s);
        return r;
    }
    return start(s, out);
}

int es_server_start_tcp(struct es_server **out, const char *host, const char *port,
                        const struct es_config *cfg, es_control_cb fn, void *ctx) {
    int r;
    struct es_server *s = alloc_server(cfg, false, fn, ctx, &r);
    if (s == NULL)
        return r;
    r = es_endpoint_open_tcp(&s->endpoint, host, port);
    if (r != 0) {
        discard_server(s);
        return r;
    }
    return start(s, out);
}

/* ---- stopping, from the thread that ends event logging -------------------- */

/* The walker has ended: let the loop thread begin its stop. */
static void request_stop(struct es_server *s) {
    es_walker_join(&s->walker);
    atomic_store(&s->stop_requested, true);
    /* The wake handle is still open: only the loop thread closes it, and
     * only after seeing stop_requested. */
    es_intake_wake(&s->intake);
}

/* The longest a stop takes: the longest linger, the ending of the streams
 * cut at its end (es_cut.h), and a margin. */
static unsigned stop_ms(const struct es_server *s) {
    return es_config_linger_max(&s->cfg) + ES_CUT_FINISH_MS + ES_STOP_MARGIN_MS;
}

int es_server_stop(struct es_server *s) {
    if (atomic_exchange(&s->stop_called, true))
        return 0;
    uint64_t deadline = uv_hrtime() + (uint64_t)stop_ms(s) * ES_NS_PER_MS;
    /* Refuse further chunks; the walker hands over the rest, then ends. */
    es_lossless_shutdown(&s->lossless); /* no RTS thread waits for a client any more */
    es_inbox_close(&s->inbox);
    int r = es_walker_wait(&s->walker, deadline);
    if (r == 0) {
        request_stop(s);
        r = es_milestones_wait_stopped(&s->milestones, deadline);
    }
    if (r == 0) {
        es_threads_join_loop(&s->threads);
        atomic_store(&s->joined, true);
        es_log_drain(100); /* the last lines, if stderr is being read */
        return 0;
    }
    /* Something keeps the library's threads (a bug, or a machine too
     * overloaded to run them): the program's exit must not wait for them. */
    es_log("the library's threads did not finish within %u ms; the program exits without "
           "them, and clients still connected lose the end of the stream",
           stop_ms(s));
    es_endpoint_unlink(&s->endpoint);
    return r;
}

void es_server_free(struct es_server *s) {
    assert(atomic_load(&s->stop_called));
    /* After a stop that gave up, wait for the threads now. */
    if (!atomic_load(&s->stop_requested))
        request_stop(s);
    es_threads_join_loop(&s->threads);
    free_server(s);
}

/* The socket file goes at SIGINT or SIGTERM during a wait (es_signal.h):
 * lstat and unlink only, both async-signal-safe. */
static void unlink_socket(void *ctx) {
    struct es_server *s = ctx;
    es_endpoint_unlink(&s->endpoint);
}

int es_server_wait_client(struct es_server *s) {
    unsigned signals = es_signal_count();
    es_signal_guard(unlink_socket, s);
    int r = es_milestones_wait_client(&s->milestones, signals);
    es_signal_unguard();
    return r;
}
