/* SPDX-License-Identifier: BSD-3-Clause */
/* The server (es_server.h): building the modules and handing each what it
 * needs, the library's two threads (es_threads.h), taking clients in and
 * out, stopping; and what other threads call on a running server: the
 * hand-off from the RTS (es_server_submit), the figures the API reads, the
 * flush settings, the hooks only tests use. Each is a call into the module
 * that owns the state. */
#include "es_server.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_flush_timer.h"
#include "es_milestones.h"
#include "es_threads.h"

#include "base/es_config.h"
#include "base/es_counters.h"
#include "base/es_fd.h"
#include "base/es_log.h"
#include "base/es_signal.h"
#include "base/es_time.h"
#include "control/es_command.h"
#include "control/es_reader.h"
#include "control/es_registry.h"
#include "policy/es_bound.h"
#include "delivery/es_client.h"
#include "policy/es_cut.h"
#include "delivery/es_fanout.h"
#include "policy/es_hangup.h"
#include "policy/es_hold.h"
#include "delivery/es_inbox.h"
#include "policy/es_intake.h"
#include "policy/es_linger.h"
#include "policy/es_lossless.h"
#include "delivery/es_notice.h"
#include "delivery/es_pool.h"
#include "delivery/es_walker.h"
#include "net/es_accept.h"
#include "net/es_admit.h"
#include "net/es_endpoint.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <uv.h>

#define ES_NS_PER_MS UINT64_C(1000000)

/* The server owns the lifecycle and the loop's wake-up. Everything else
 * is a module's of its own: taking connections in es_accept's, what a
 * wake-up does with the walked chunks es_intake's, the stream es_fanout's,
 * the memory bound es_bound's, lossless delivery es_lossless's, what
 * clients write es_reader's, commands es_command's, the flush timer
 * es_flush_timer's, clients that shut down their writing side
 * es_hangup's, the end of the stream es_linger's, the threads
 * es_threads', what other threads wait for es_milestones'. */
struct es_server {
    struct es_config cfg;
    struct es_counters counters;
    uv_loop_t loop;
    struct es_flush_timer flush;
    struct es_accept accept;
    struct es_endpoint endpoint; /* where it listens */
    pid_t pid; /* the process that started the server (a forked child is not it) */

    struct es_client_env client_env;
    struct es_admit_rules admit;

    struct es_inbox inbox;       /* RTS threads to the walker */
    struct es_walker walker;     /* the walker to the loop thread */
    struct es_intake intake;     /* what a wake-up does with the walked chunks */
    struct es_fanout fan;        /* the stream and its clients */
    struct es_bound bound;       /* the memory bound */
    struct es_lossless lossless; /* clients that get every byte */
    struct es_reader reader;     /* what clients write */
    struct es_command command;   /* the built-in commands that cost the program */
    struct es_hangup hangup;     /* clients that shut down their writing side */
    struct es_linger linger;     /* the end of the stream */
    struct es_hold hold;         /* new clients' holds, when a window is kept */
    struct es_threads threads;   /* the walker and the loop thread */
    struct es_milestones milestones;

    /* The loop's wake-up, from any thread (wake), even once the handle is
     * closing: `wake_lock` guards `wake_closed` against that. */
    uv_async_t wake;
    uv_mutex_t wake_lock;
    bool wake_closed;

    atomic_bool stop_called;    /* es_server_stop has begun */
    atomic_bool stop_requested; /* the walker has ended: the loop may stop */
    bool stopping;              /* loop thread: stop has begun */
    bool finished;              /* loop thread: handles are closing */
    atomic_bool joined;         /* es_server_stop has joined the loop thread */
    atomic_int last_error;
};

/* ---- what the modules call back ------------------------------------------ */

/* Record an error from the loop thread: the first one is kept and logged. */
static void async_error(int err, const char *what, void *ctx) {
    struct es_server *s = ctx;
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->last_error, &expected, err))
        es_log("error while %s: %s (further errors are not logged)", what,
               eventlog_socket_error_message(err));
}

/* A client's write ended and released chunks (es_client_env). */
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

/* Wake the loop thread. Any thread. */
static void wake(struct es_server *s) {
    /* Under the lock, so that the loop cannot close the handle in between. */
    uv_mutex_lock(&s->wake_lock);
    if (!s->wake_closed)
        uv_async_send(&s->wake);
    uv_mutex_unlock(&s->wake_lock);
}

/* The walker has handed chunks over (es_walker.h). */
static void wake_loop(void *ctx) {
    wake(ctx);
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

/* A wake-up: chunks from the walker, a stop, new flush settings. */
static void on_wake(uv_async_t *h) {
    struct es_server *s = h->data;
    es_intake_run(&s->intake);
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
    uv_mutex_lock(&s->wake_lock);
    assert(!s->wake_closed);
    s->wake_closed = true;
    uv_mutex_unlock(&s->wake_lock);
    uv_close((uv_handle_t *)&s->wake, cb);
    es_reader_close(&s->reader, cb);
    uv_close(es_flush_timer_handle(&s->flush), cb);
    es_hangup_close(&s->hangup, cb);
    es_linger_close(&s->linger, cb);
    es_command_close(&s->command, cb);
    es_lossless_close(&s->lossless, cb);
    es_bound_close(&s->bound, cb);
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
    /* The handles close only once every client has gone (maybe_finish). */
    assert(!s->finished);
    es_fanout_leave(&s->fan, c);
    es_lossless_left(&s->lossless, c);
    es_intake_publish_held(&s->intake);
    update_flush(s);
    maybe_finish(s);
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
    /* Accepting ends when the stop begins (begin_stop). */
    assert(!s->stopping);
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
    if (es_client_is(c, ES_CLIENT_HELD))
        es_hold_arm(&s->hold);
    es_reader_start(&s->reader, c);
}

static void begin_stop(struct es_server *s) {
    /* Once, after the walker has ended (request_stop). */
    assert(!s->stopping && atomic_load(&s->stop_requested));
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
    BUILT_WAKE,
    BUILT_ALL
};

static void destroy(struct es_server *s, enum built b) {
    if (b >= BUILT_ALL)
        es_milestones_destroy(&s->milestones);
    if (b >= BUILT_WAKE)
        uv_mutex_destroy(&s->wake_lock);
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
    es_bound_open(&s->bound);
    es_lossless_open(&s->lossless, &s->loop, &s->fan, &s->counters);
    es_command_open(&s->command, &s->loop, &s->lossless);
    es_hangup_open(&s->hangup, &s->loop, &s->fan);
    es_reader_open(&s->reader, &s->loop, &s->command, &s->fan, &s->lossless, &s->hangup);
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
    s->wake.data = s;
    if (r == 0 && (r = uv_async_init(&s->loop, &s->wake, on_wake)) != 0)
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
    r = es_flush_timer_init(&s->flush, &s->walker, &s->counters, &s->lossless);
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
                                 .counters = &s->counters};
    es_intake_init(&s->intake, &ienv);
    if ((r = uv_mutex_init(&s->wake_lock)) != 0)
        return *err = r, BUILT_LOSSLESS;
    if ((r = es_milestones_init(&s->milestones)) != 0)
        return *err = r, BUILT_WAKE;
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
    es_fd_fill_std(); /* before the endpoint's and the loop's descriptors */
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
    es_command_init(&s->command, s->cfg.control_interval_ms, fn, ctx, s->cfg.event_classes);
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
                               .hold_ms = es_fanout_has_window(&s->fan) ? ES_HOLD_MS : 0,
                               .on_released = released,
                               .on_closed = client_closed,
                               .read_cost = read_cost,
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
    assert(atomic_load(&s->stop_called));
    es_walker_join(&s->walker);
    bool was = atomic_exchange(&s->stop_requested, true);
    assert(!was); /* once: es_server_stop, or es_server_free after one that gave up */
    (void)was;
    /* The wake handle is still open: only the loop thread closes it, and
     * only after seeing stop_requested. */
    wake(s);
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
        assert(atomic_load(&s->stop_requested));
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

/* ---- RTS threads ---------------------------------------------------------- */

/* Chunks shorter than this are not timed: the thread's CPU clock is a
 * system call, and two of them cost more than such a chunk's copy. They
 * are the library's notices (a C span's, one per call) and the flushes of
 * a program that wrote almost nothing. */
#define SUBMIT_TIMED_MIN 512

void es_server_submit(struct es_server *s, const void *buf, size_t len) {
    /* The thread's CPU clock around the copy: what the program pays on its
     * own threads (two clock reads per chunk, a chunk being up to 2 MiB). */
    bool timed = len >= SUBMIT_TIMED_MIN;
    uint64_t a = timed ? es_time_thread_cpu_ns() : 0;
    /* A lossless client without room makes this thread wait (es_wait.h);
     * while one is connected, nothing is dropped at the hand-off. */
    bool lossless = es_lossless_wait_for_room(&s->lossless, len);
    es_inbox_push(&s->inbox, buf, len, !lossless);
    if (timed)
        atomic_fetch_add_explicit(&s->counters.cpu_writer_ns, es_time_thread_cpu_ns() - a,
                                  memory_order_relaxed);
}

void es_server_post_text(struct es_server *s, const char *text) {
    es_server_post_text_at(s, es_walker_program_time(&s->walker), text);
}

void es_server_post_text_at(struct es_server *s, uint64_t time, const char *text) {
    /* GHC always declares USER_MSG of variable size (es_notice.h). */
    static struct es_header hdr = {.size[ES_EVENT_USER_MSG] = ES_SIZE_VARIABLE};
    struct es_chunk *n = es_notice_message(&hdr, time, text);
    if (n == NULL)
        return;
    es_server_submit(s, n->data, n->len);
    es_pool_chunk_free(n);
}

/* ---- what the API reads ------------------------------------------------------ */

const struct es_counters *es_server_counters(const struct es_server *s) {
    return &s->counters;
}

uint64_t es_server_bytes_received(const struct es_server *s) {
    return es_inbox_bytes_in((struct es_inbox *)&s->inbox);
}

void es_server_lost(struct es_server *s, uint64_t *chunks, uint64_t *bytes) {
    uint64_t dropped, dropped_bytes;
    es_inbox_oom(&s->inbox, chunks, bytes);
    es_inbox_dropped(&s->inbox, &dropped, &dropped_bytes);
    *chunks += dropped + atomic_load_explicit(&s->counters.chunks_lost, memory_order_relaxed);
    *bytes += dropped_bytes + atomic_load_explicit(&s->counters.bytes_lost, memory_order_relaxed);
}

int es_server_last_error(const struct es_server *s) {
    return atomic_load(&s->last_error);
}

int es_server_tcp_port(const struct es_server *s) {
    return es_endpoint_port(&s->endpoint);
}

pid_t es_server_pid(const struct es_server *s) {
    return s->pid;
}

void es_server_exiting(struct es_server *s) {
    es_lossless_exiting(&s->lossless);
}

long long es_server_write_window(struct es_server *s, int fd) {
    if (!atomic_load(&s->joined))
        return -EBUSY;
    if (!es_fanout_has_window(&s->fan))
        return -ENODATA;
    return es_fanout_write_window(&s->fan, fd);
}

const char *es_server_dump_on_failure(const struct es_server *s) {
    return s->cfg.dump_on_failure[0] != '\0' ? s->cfg.dump_on_failure : NULL;
}

void es_server_wait_stats(struct es_server *s, uint64_t *waits, uint64_t *ns, uint64_t *max_ns) {
    es_lossless_wait_stats(&s->lossless, waits, ns, max_ns);
}

void es_server_set_flush(struct es_server *s, es_flush_fn fn, void *ctx, unsigned interval_ms,
                         bool paced) {
    es_flush_timer_set(&s->flush, fn, ctx, interval_ms, paced);
    wake(s); /* the loop thread applies it (update_flush) */
}

/* ---- for tests (es_server.h's last part) --------------------------------------------- */

void es_server_debug_block(struct es_server *s, unsigned ms) {
    es_intake_stall(&s->intake, ms);
    wake(s);
}

bool es_server_debug_blocked(struct es_server *s) {
    return es_intake_stalled(&s->intake);
}

void es_server_debug_release(struct es_server *s) {
    es_intake_unstall(&s->intake);
}

bool es_server_debug_waiting(struct es_server *s) {
    return es_lossless_waiting(&s->lossless);
}

size_t es_server_in_flight(struct es_server *s) {
    return es_inbox_in_flight(&s->inbox);
}

void es_server_handoff_dropped(struct es_server *s, uint64_t *chunks, uint64_t *bytes) {
    es_inbox_dropped(&s->inbox, chunks, bytes);
}

void es_server_threads(struct es_server *s, uv_thread_t *walker, uv_thread_t *loop) {
    es_threads_ids(&s->threads, walker, loop);
}
