/* For SCHED_BATCH. */
#define _GNU_SOURCE
#include "es_server.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_admit.h"
#include "es_bound.h"
#include "es_client.h"
#include "es_fanout.h"
#include "es_flush_timer.h"
#include "es_gate.h"
#include "es_inbox.h"
#include "es_listen.h"
#include "es_log.h"
#include "es_notice.h"
#include "es_peer.h"
#include "es_pool.h"
#include "es_wait.h"
#include "es_walker.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ES_NS_PER_MS UINT64_C(1000000)

/* Where every client's reads land (es_client_env.read_buf). */
#define ES_SERVER_READ_BUF 65536

/* The server owns the lifecycle: the listening socket, the library's two
 * threads, accepting clients, stopping; the stream itself is es_fanout's,
 * the memory bound es_bound's, the flush timer es_flush_timer's. */
struct es_server {
    struct es_config cfg;
    struct es_counters counters;
    uv_loop_t loop;
    uv_async_t wake;
    uv_timer_t linger;
    uv_timer_t exit_check; /* while stopping: closes clients that stopped reading */
    struct es_flush_timer flush;
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } listener;
    bool is_unix;
    char *unix_path;
    struct es_listen_result addr;
    pid_t pid; /* the process that started the server (a forked child is not it) */

    es_command_fn on_command;
    void *command_ctx;
    struct es_gate gate;     /* the rate limit on commands */
    uv_timer_t gate_timer;   /* runs what the gate holds back */
    uv_timer_t resume_timer; /* resumes reading clients paused for their budget */
    uint8_t read_buf[ES_SERVER_READ_BUF];
    struct es_client_env client_env;
    struct es_admit_rules admit;

    struct es_inbox inbox;              /* RTS threads to the walker */
    struct es_walker walker;            /* the walker to the loop thread */
    struct es_fanout fan;               /* the stream and its clients */
    struct es_bound bound;              /* the memory bound */
    struct es_wait wait;                /* RTS threads waiting for lossless clients */
    unsigned nlossless;                 /* loop thread: lossless clients connected */
    uint64_t notice_ms;                 /* loop thread: when the last wait notice went out */
    uint64_t noticed_waits, noticed_ns; /* the wait counters then */
    es_flush_fn flush_fn;               /* the RTS flush (es_server_set_flush) */
    void *flush_ctx;
    struct es_log_limit log_exit_stall; /* clients that stopped reading at exit */
    struct es_log_limit log_refused;    /* clients refused at the limits */

    uv_thread_t thread;
    atomic_bool stop_called; /* es_server_stop has begun */
    bool joined;             /* es_server_stop (or _free) joined the threads */
    /* The walker's and the loop thread's CPU clocks (es_server_cpu). */
    clockid_t walker_clock, loop_clock;
    atomic_bool clocks_ok;
    atomic_uint debug_block_ms; /* es_server_debug_block */
    atomic_bool debug_blocked;  /* the loop sleeps in it now */
    atomic_bool stop_requested; /* the walker has ended: the loop may stop */
    bool stopping;              /* loop thread: stop has begun */
    bool finished;              /* loop thread: handles are closing */
    atomic_int last_error;

    /* Guarded by state_lock: for threads waiting on the loop. */
    uv_mutex_t state_lock;
    uv_cond_t state_cond;
    bool first_client;
    bool stopped;
    bool wake_closed; /* the loop has closed `wake` */
};

/* ---- control commands ------------------------------------------------- */

static void deliver_command(uint8_t cmd, void *ctx) {
    struct es_server *s = ctx;
    if (s->on_command == NULL)
        return;
    /* What acting took on this thread (a census is taken here, in the
     * major GC the RTS runs for it): the gate spaces costly commands by it. */
    uint64_t start = uv_hrtime();
    /* A census runs a GC here, which stops every capability: no RTS
     * thread may be waiting for this thread meanwhile (es_wait.h). */
    es_wait_rts_call(&s->wait, true);
    s->on_command(cmd, s->command_ctx);
    es_wait_rts_call(&s->wait, false);
    es_gate_cost(&s->gate, cmd, (uv_hrtime() - start) / ES_NS_PER_MS);
}

/* The RTS flush, from the flush timer: it stops every capability too. */
static bool flush_rts(void *ctx) {
    struct es_server *s = ctx;
    uv_mutex_lock(&s->state_lock);
    es_flush_fn fn = s->flush_fn;
    void *fctx = s->flush_ctx;
    uv_mutex_unlock(&s->state_lock);
    if (fn == NULL || es_wait_full(&s->wait, atomic_load(&s->inbox.in_flight)))
        return false;
    es_wait_rts_call(&s->wait, true);
    bool flushed = fn(fctx);
    es_wait_rts_call(&s->wait, false);
    return flushed;
}

/* At most once a second, while program threads have waited for lossless
 * clients, every client gets a wait notice saying how long: what losing
 * nothing costs the program, visible in the stream itself. */
#define ES_WAIT_NOTICE_MS 1000

static void wait_notice(struct es_server *s) {
    uint64_t now = uv_now(&s->loop);
    if (!s->fan.have_header || now - s->notice_ms < ES_WAIT_NOTICE_MS)
        return;
    uint64_t waits = atomic_load(&s->wait.waits), ns = atomic_load(&s->wait.wait_ns);
    if (waits > s->noticed_waits) {
        struct es_chunk *n = es_notice_wait(&s->fan.header, s->fan.last_time,
                                            waits - s->noticed_waits, ns - s->noticed_ns,
                                            s->notice_ms ? now - s->notice_ms : ES_WAIT_NOTICE_MS);
        if (n != NULL)
            es_fanout_append(&s->fan, n);
    }
    s->notice_ms = now;
    s->noticed_waits = waits;
    s->noticed_ns = ns;
}

/* Tell waiting RTS threads how far behind the lossless clients are. */
static void publish_wait(struct es_server *s) {
    atomic_store_explicit(&s->counters.clients_lossless, s->nlossless, memory_order_relaxed);
    if (s->nlossless == 0) {
        es_wait_publish(&s->wait, false, 0);
        return;
    }
    uint64_t backlog = 0;
    es_fanout_each(&s->fan, c, next) {
        if (c->lossless && !c->closing) {
            uint64_t u = es_client_unsent(c);
            backlog = u > backlog ? u : backlog;
        }
    }
    es_wait_publish(&s->wait, true, backlog);
}

static void lossless(struct es_client *c, void *ctx) {
    struct es_server *s = ctx;
    s->nlossless++;
    es_log("client %llu asked for lossless delivery: the program waits for it when it falls "
           "behind",
           (unsigned long long)c->id);
    publish_wait(s);
}

/* For cost notices: the same figures as eventlog_socket_stats(). Read on
 * the loop thread, so its own clock is surely live here. */
static void read_cost(struct es_cost *out, void *ctx) {
    struct es_server *s = ctx;
    es_server_cpu(s, &out->writer_ns, &out->walker_ns, &out->loop_ns);
    out->bytes_sent = atomic_load_explicit(&s->counters.bytes_sent, memory_order_relaxed);
}

static void on_gate_timer(uv_timer_t *t);

static void arm_gate(struct es_server *s) {
    uint64_t due = es_gate_due(&s->gate);
    if (due == UINT64_MAX || s->stopping)
        return;
    uint64_t now = uv_now(&s->loop);
    uv_timer_start(&s->gate_timer, on_gate_timer, due > now ? due - now : 0, 0);
}

static void on_gate_timer(uv_timer_t *t) {
    struct es_server *s = t->data;
    if (s->stopping)
        return;
    es_gate_run(&s->gate, uv_now(&s->loop), deliver_command, s);
    arm_gate(s);
}

static void on_resume_timer(uv_timer_t *t) {
    struct es_server *s = t->data;
    bool any = false;
    uint64_t now = uv_now(&s->loop);
    es_fanout_each(&s->fan, c, next) any |= es_client_resume_reading(c, now);
    if (!any)
        uv_timer_stop(&s->resume_timer);
}

static void reading_paused(void *ctx) {
    struct es_server *s = ctx;
    if (!uv_is_active((uv_handle_t *)&s->resume_timer))
        uv_timer_start(&s->resume_timer, on_resume_timer, 100, 100);
}

/* A control command from a client, through the rate limit. */
static void command(uint8_t cmd, void *ctx) {
    struct es_server *s = ctx;
    es_gate_offer(&s->gate, cmd, uv_now(&s->loop), deliver_command, s);
    arm_gate(s);
}

/* Refresh the held-bytes counters after memory changed. */
static void publish(struct es_server *s) {
    size_t held = es_fanout_held(&s->fan);
    /* A lagging client that caught up or left ends the pool's loans: no
     * backlog to refill. */
    es_pool_note_held(held);
    atomic_store_explicit(&s->counters.bytes_held, held, memory_order_relaxed);
    if (held > atomic_load_explicit(&s->counters.bytes_held_peak, memory_order_relaxed))
        atomic_store_explicit(&s->counters.bytes_held_peak, held, memory_order_relaxed);
}

/* Record an error from the loop thread: the first one is kept and logged. */
static void async_error(struct es_server *s, int err, const char *what) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->last_error, &expected, err))
        es_log("error while %s: %s (further errors are not logged)", what,
               eventlog_socket_error_message(err));
}

/* ---- chunks from the RTS ---------------------------------------------- */

static void released(void *ctx) {
    publish(ctx);
    publish_wait(ctx);
}

static void begin_stop(struct es_server *s);
static void update_flush(struct es_server *s);

/* Take in what the walker handed over; returns whether there was any. */
static bool take_chunks(struct es_server *s) {
    struct es_chunk *c = es_walker_take(&s->walker);
    bool any = c != NULL;
    size_t bytes = 0;
    while (c != NULL) {
        struct es_chunk *next = c->next;
        bytes += c->len; /* before ingest, which may free or split it */
        if (c->gap_chunks > 0 && s->fan.have_header)
            es_bound_handoff_gap(&s->bound, c);
        if (es_fanout_ingest(&s->fan, c) != 0)
            async_error(s, UV_ENOMEM, "keeping a chunk for the clients");
        c = next;
    }
    es_inbox_release(&s->inbox, bytes);
    return any;
}

/* Summaries of repeating causes whose one-second window has ended. */
static void flush_logs(struct es_server *s, bool force) {
    uint64_t now = uv_now(&s->loop);
    es_bound_flush_logs(&s->bound, now, force);
    es_log_limit_flush(&s->log_exit_stall, now, force);
    es_log_limit_flush(&s->log_refused, now, force);
}

static void on_wake(uv_async_t *h) {
    struct es_server *s = h->data;
    unsigned block = atomic_exchange(&s->debug_block_ms, 0);
    if (block > 0) {
        atomic_store(&s->debug_blocked, true);
        uint64_t until = uv_hrtime() + (uint64_t)block * 1000000u;
        struct timespec ms1 = {0, 1000000L};
        while (atomic_load(&s->debug_blocked) && uv_hrtime() < until)
            nanosleep(&ms1, NULL);
        atomic_store(&s->debug_blocked, false);
        uv_update_time(&s->loop);
    }
    bool any = take_chunks(s);
    if (any) {
        uint64_t now = uv_now(&s->loop);
        /* Each client gets to write what it can before its lag is judged:
         * chunks can arrive many at a time (the loop thread was busy, or
         * a client joined just before a burst), and that burst is not the
         * client's fault. */
        es_fanout_each(&s->fan, cl, next) {
            es_client_note_progress(cl, now);
            es_client_pump(cl);
            es_bound_check_client(&s->bound, cl);
        }
        es_bound_enforce(&s->bound);
        wait_notice(s);
        es_fanout_each(&s->fan, cl, next) es_client_pump(cl);
        publish(s);
        publish_wait(s);
    }
    flush_logs(s, false);
    if (atomic_load(&s->stop_requested) && !s->stopping)
        begin_stop(s);
    update_flush(s);
}

/* ---- the flush timer (the RTS flush on GHC >= 9.2) ---------------------- */

static void update_flush(struct es_server *s) {
    es_flush_timer_update(&s->flush, s->fan.nclients > 0 && !s->stopping);
}

void es_server_set_flush(struct es_server *s, es_flush_fn fn, void *ctx, unsigned interval_ms,
                         bool paced) {
    /* The loop thread picks the change up when it wakes. Under the lock,
     * so that the loop cannot close `wake` in between. */
    uv_mutex_lock(&s->state_lock);
    s->flush_fn = fn;
    s->flush_ctx = ctx;
    es_flush_timer_set(&s->flush, fn ? flush_rts : NULL, s, interval_ms, paced);
    if (!s->wake_closed)
        uv_async_send(&s->wake);
    uv_mutex_unlock(&s->state_lock);
}

/* ---- stopping --------------------------------------------------------- */

static void on_handle_closed(uv_handle_t *h) {
    (void)h;
}

/* The server is stopping and every client has gone: close the handles. */
static void maybe_finish(struct es_server *s) {
    if (!s->stopping || s->finished || s->fan.nclients > 0)
        return;
    s->finished = true;
    flush_logs(s, true);
    uv_mutex_lock(&s->state_lock);
    s->wake_closed = true;
    uv_mutex_unlock(&s->state_lock);
    uv_close((uv_handle_t *)&s->wake, on_handle_closed);
    uv_close((uv_handle_t *)&s->linger, on_handle_closed);
    uv_close((uv_handle_t *)&s->exit_check, on_handle_closed);
    uv_close(es_flush_timer_handle(&s->flush), on_handle_closed);
    uv_close((uv_handle_t *)&s->gate_timer, on_handle_closed);
    uv_close((uv_handle_t *)&s->resume_timer, on_handle_closed);
}

static void on_linger_timeout(uv_timer_t *t) {
    struct es_server *s = t->data;
    if (s->fan.nclients == 0)
        return;
    es_log("%u client(s) did not take the rest of the stream within %u ms; closing them",
           s->fan.nclients, s->cfg.linger_ms);
    es_fanout_each(&s->fan, c, next) es_client_close(c);
}

static void on_exit_check(uv_timer_t *t) {
    struct es_server *s = t->data;
    uint64_t now = uv_now(&s->loop);
    es_fanout_each(&s->fan, c, next) {
        if (!c->closing && es_client_stalled(c, now)) {
            es_log_limited(&s->log_exit_stall, now,
                           "client %llu stopped reading; closing it without the rest of the "
                           "stream",
                           (unsigned long long)c->id);
            es_client_close(c);
        }
    }
    flush_logs(s, false);
}

static void begin_stop(struct es_server *s) {
    s->stopping = true;
    update_flush(s);
    uv_timer_stop(&s->gate_timer); /* commands held back are moot now */
    /* The walker has ended (es_server_stop): take what it handed over last. */
    take_chunks(s);
    uv_close(&s->listener.handle, on_handle_closed);
    if (s->fan.nclients > 0) {
        uv_timer_start(&s->linger, on_linger_timeout, s->cfg.linger_ms, 0);
        uv_timer_start(&s->exit_check, on_exit_check, 50, 50);
        /* A client that was already stuck before the exit is not waited
         * for at all. */
        on_exit_check(&s->exit_check);
    }
    es_fanout_each(&s->fan, c, next) es_client_pump(c);
    maybe_finish(s);
}

/* ---- the loop thread -------------------------------------------------- */

static void client_closed(struct es_client *c, void *ctx) {
    struct es_server *s = ctx;
    es_fanout_leave(&s->fan, c);
    if (c->lossless)
        s->nlossless--;
    publish_wait(s);
    publish(s);
    update_flush(s);
    maybe_finish(s);
}

static void on_connection(uv_stream_t *listener, int status) {
    struct es_server *s = listener->data;
    if (status < 0) {
        async_error(s, status, "waiting for clients");
        return;
    }
    int r;
    struct es_client *c = es_client_new(&s->client_env, s->is_unix, &r);
    if (c == NULL) {
        async_error(s, r, "accepting a client");
        return;
    }
    r = uv_accept(&s->listener.stream, es_client_stream(c));
    char why[256];
    uv_os_fd_t fd;
    const char *refused = NULL;
    if (r == 0 && uv_fileno((uv_handle_t *)es_client_stream(c), &fd) == 0)
        refused = es_admit_refusal(&s->admit, fd, s->fan.nclients, why, sizeof why);
    if (r != 0 || refused) {
        if (r != 0)
            async_error(s, r, "accepting a client");
        if (refused) {
            atomic_fetch_add(&s->counters.clients_refused, 1);
            es_log_limited(&s->log_refused, uv_now(&s->loop), "refusing a client: %s", refused);
        }
        es_client_discard(c);
        return;
    }
    es_fanout_join(&s->fan, c);
    if (s->cfg.slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_WAIT) {
        c->lossless = true;
        s->nlossless++;
    }
    uv_mutex_lock(&s->state_lock);
    s->first_client = true;
    uv_cond_broadcast(&s->state_cond);
    uv_mutex_unlock(&s->state_lock);
    publish(s);
    update_flush(s);
    es_client_start(c);
}

static void loop_main(void *arg) {
    struct es_server *s = arg;
    uv_run(&s->loop, UV_RUN_DEFAULT);
    if (s->is_unix)
        es_listen_unlink_unix(s->unix_path, &s->addr);
    uv_mutex_lock(&s->state_lock);
    s->stopped = true;
    uv_cond_broadcast(&s->state_cond);
    uv_mutex_unlock(&s->state_lock);
}

/* Free a server whose loop was never initialised or has ended. */
static void discard_server(struct es_server *s) {
    es_wait_destroy(&s->wait);
    es_fanout_destroy(&s->fan);
    es_walker_destroy(&s->walker);
    es_inbox_destroy(&s->inbox);
    es_flush_timer_destroy(&s->flush);
    uv_cond_destroy(&s->state_cond);
    uv_mutex_destroy(&s->state_lock);
    free(s->unix_path);
    free(s);
}

static void free_server(struct es_server *s) {
    uv_loop_close(&s->loop);
    discard_server(s);
}

/* Our threads get their fair share of the CPU, but waking one must not
 * preempt the thread that woke it: that is usually an RTS thread still
 * inside writeEventLog, and on a busy machine the call then took as long
 * as the walk it triggered (p50 +30% on two cores, BENCHMARKS.md). Linux's
 * SCHED_BATCH means exactly that; where it is missing or refused, the
 * threads keep the default policy. */
static void run_in_background(uv_thread_t t) {
#ifdef SCHED_BATCH
    struct sched_param p = {.sched_priority = 0};
    pthread_setschedparam(t, SCHED_BATCH, &p);
#else
    (void)t;
#endif
}

/* Finish construction once `s->addr` holds a listening socket. */
static int start(struct es_server *s, struct es_server **out) {
    int r = uv_loop_init(&s->loop);
    if (r != 0) {
        close(s->addr.fd);
        return r;
    }
    s->wake.data = s->linger.data = s->exit_check.data = s->gate_timer.data = s->resume_timer.data =
        s;
    s->listener.handle.data = s;
    uv_async_init(&s->loop, &s->wake, on_wake);
    uv_timer_init(&s->loop, &s->linger);
    es_flush_timer_open(&s->flush, &s->loop);
    uv_timer_init(&s->loop, &s->exit_check);
    uv_timer_init(&s->loop, &s->gate_timer);
    uv_timer_init(&s->loop, &s->resume_timer);
    r = s->is_unix ? uv_pipe_init(&s->loop, &s->listener.pipe, 0)
                   : uv_tcp_init(&s->loop, &s->listener.tcp);
    if (r == 0) {
        s->listener.handle.data = s;
        r = s->is_unix ? uv_pipe_open(&s->listener.pipe, s->addr.fd)
                       : uv_tcp_open(&s->listener.tcp, s->addr.fd);
        if (r != 0)
            close(s->addr.fd);
        else
            r = uv_listen(&s->listener.stream, ES_LISTEN_BACKLOG, on_connection);
    } else {
        close(s->addr.fd);
    }
    if (r == 0) {
        /* Our threads must not take the program's signals (the RTS relies
         * on its own threads getting SIGINT, SIGVTALRM, ...), and a write to
         * a vanished client must fail with EPIPE, not raise SIGPIPE before
         * the RTS has installed its handlers. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = es_walker_start(&s->walker);
        if (r == 0 && (r = uv_thread_create(&s->thread, loop_main, s)) != 0) {
            es_inbox_close(&s->inbox);
            es_walker_join(&s->walker);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r == 0) {
            run_in_background(s->walker.thread);
            run_in_background(s->thread);
            atomic_store(&s->clocks_ok,
                         pthread_getcpuclockid(s->walker.thread, &s->walker_clock) == 0 &&
                             pthread_getcpuclockid(s->thread, &s->loop_clock) == 0);
        }
    }
    if (r != 0) {
        /* Close what was opened; the loop must run once to finish that. */
        if (s->is_unix)
            es_listen_unlink_unix(s->unix_path, &s->addr);
        uv_close(&s->listener.handle, NULL);
        uv_close((uv_handle_t *)&s->wake, NULL);
        uv_close((uv_handle_t *)&s->linger, NULL);
        uv_close(es_flush_timer_handle(&s->flush), NULL);
        uv_close((uv_handle_t *)&s->exit_check, NULL);
        uv_close((uv_handle_t *)&s->gate_timer, NULL);
        uv_close((uv_handle_t *)&s->resume_timer, NULL);
        uv_run(&s->loop, UV_RUN_DEFAULT);
        free_server(s);
        return r;
    }
    es_log("listening on %s", s->addr.desc);
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (!s->is_unix && getsockname(s->addr.fd, (struct sockaddr *)&bound, &blen) == 0 &&
        !es_peer_is_loopback((struct sockaddr *)&bound))
        es_log("%s is not a loopback address: anyone who can reach this port can read the "
               "program's eventlog and send it control commands",
               s->addr.desc);
    *out = s;
    return 0;
}

static void wake_loop(void *ctx) {
    struct es_server *s = ctx;
    uv_async_send(&s->wake);
}

static struct es_server *alloc_server(const struct es_config *cfg, es_command_fn fn, void *ctx) {
    struct es_server *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    if (cfg)
        s->cfg = *cfg;
    else
        es_config_defaults(&s->cfg);
    s->on_command = fn;
    s->command_ctx = ctx;
    es_gate_init(&s->gate, s->cfg.control_interval_ms);
    s->pid = getpid();
    atomic_init(&s->stop_called, false);
    atomic_init(&s->stop_requested, false);
    atomic_init(&s->debug_blocked, false);
    atomic_init(&s->last_error, 0);
    es_fanout_init(&s->fan, &s->counters, s->cfg.max_buffer, s->cfg.defs_limit);
    es_bound_init(&s->bound, s->cfg.max_buffer, s->cfg.client_limit,
                  s->cfg.slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DROP, &s->loop, &s->fan,
                  &s->counters);
    s->log_exit_stall.what = "clients that stopped reading closed at exit";
    s->log_refused.what = "clients refused";
    es_inbox_init(&s->inbox, es_server_handoff_limit(&s->cfg));
    es_walker_init(&s->walker, &s->inbox, s->fan.defs.types, wake_loop, s);
    es_flush_timer_init(&s->flush, &s->walker, &s->counters);
    es_wait_init(&s->wait, s->cfg.client_limit);
    s->client_env = (struct es_client_env){.loop = &s->loop,
                                           .store = &s->fan.store,
                                           .header = &s->fan.header,
                                           .stopping = &s->stopping,
                                           .linger_ms = s->cfg.linger_ms,
                                           .counters = &s->counters,
                                           .read_buf = s->read_buf,
                                           .read_buf_len = sizeof s->read_buf,
                                           .on_command = command,
                                           .on_reading_paused = reading_paused,
                                           .on_released = released,
                                           .on_lossless = lossless,
                                           .read_cost = read_cost,
                                           .on_closed = client_closed,
                                           .ctx = s};
    s->admit = (struct es_admit_rules){.max_clients = s->cfg.max_clients,
                                       .allow_other_users = s->cfg.allow_other_users};
    uv_mutex_init(&s->state_lock);
    uv_cond_init(&s->state_cond);
    return s;
}

int es_server_start_unix(struct es_server **out, const char *path, const struct es_config *cfg,
                         es_command_fn fn, void *ctx) {
    struct es_server *s = alloc_server(cfg, fn, ctx);
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOMEM;
    s->is_unix = s->admit.is_unix = true;
    int r = es_listen_unix(path, &s->addr);
    if (r == 0 && (s->unix_path = strdup(path)) == NULL) {
        close(s->addr.fd);
        unlink(path);
        r = EVENTLOG_SOCKET_ENOMEM;
    }
    if (r != 0) {
        discard_server(s);
        return r;
    }
    return start(s, out);
}

int es_server_start_tcp(struct es_server **out, const char *host, const char *port,
                        const struct es_config *cfg, es_command_fn fn, void *ctx) {
    struct es_server *s = alloc_server(cfg, fn, ctx);
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOMEM;
    int r = es_listen_tcp(host, port, &s->addr);
    if (r != 0) {
        discard_server(s);
        return r;
    }
    return start(s, out);
}

static uint64_t ns_of(const struct timespec *t) {
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

void es_server_submit(struct es_server *s, const void *buf, size_t len) {
    /* The thread's CPU clock around the copy: what the program pays on its
     * own threads (two clock reads per chunk, a chunk being up to 2 MiB). */
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    /* A lossless client without room makes this thread wait (es_wait.h);
     * while one is connected, nothing is dropped at the hand-off. */
    bool lossless = es_wait_for_room(&s->wait, len, &s->inbox.in_flight);
    es_inbox_push(&s->inbox, buf, len, !lossless);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    atomic_fetch_add_explicit(&s->counters.cpu_writer_ns, ns_of(&b) - ns_of(&a),
                              memory_order_relaxed);
}

/* The thread's CPU time by its clock, into `*last` (what stays once the
 * server stops). */
static uint64_t read_clock(clockid_t clock, atomic_uint_fast64_t *last) {
    struct timespec t;
    if (clock_gettime(clock, &t) == 0)
        atomic_store_explicit(last, ns_of(&t), memory_order_relaxed);
    return atomic_load_explicit(last, memory_order_relaxed);
}

void es_server_cpu(struct es_server *s, uint64_t *writer, uint64_t *walker, uint64_t *loop) {
    *writer = atomic_load_explicit(&s->counters.cpu_writer_ns, memory_order_relaxed);
    /* Only while the threads surely run: a clock id names a thread id,
     * which another thread may have once this one has ended. */
    bool live = atomic_load(&s->clocks_ok) && !atomic_load(&s->stop_called);
    *walker = live ? read_clock(s->walker_clock, &s->counters.cpu_walker_ns)
                   : atomic_load(&s->counters.cpu_walker_ns);
    *loop = live ? read_clock(s->loop_clock, &s->counters.cpu_loop_ns)
                 : atomic_load(&s->counters.cpu_loop_ns);
}

/* Wait for the loop thread to end, but not past `deadline` (uv_hrtime). */
static int wait_stopped(struct es_server *s, uint64_t deadline) {
    uv_mutex_lock(&s->state_lock);
    while (!s->stopped) {
        uint64_t now = uv_hrtime();
        if (now >= deadline ||
            uv_cond_timedwait(&s->state_cond, &s->state_lock, deadline - now) == UV_ETIMEDOUT)
            break;
    }
    int r = s->stopped ? 0 : UV_ETIMEDOUT;
    uv_mutex_unlock(&s->state_lock);
    return r;
}

/* The walker has ended: let the loop thread begin its stop. */
static void request_stop(struct es_server *s) {
    es_walker_join(&s->walker);
    atomic_store(&s->stop_requested, true);
    /* The wake handle is still open: only the loop thread closes it, and
     * only after seeing stop_requested. */
    uv_async_send(&s->wake);
}

int es_server_stop(struct es_server *s) {
    if (atomic_exchange(&s->stop_called, true))
        return 0;
    uint64_t deadline =
        uv_hrtime() + ((uint64_t)s->cfg.linger_ms + ES_STOP_MARGIN_MS) * ES_NS_PER_MS;
    /* Refuse further chunks; the walker hands over the rest, then ends. */
    es_wait_shutdown(&s->wait); /* no RTS thread waits for a client any more */
    es_inbox_close(&s->inbox);
    int r = es_walker_wait(&s->walker, deadline);
    if (r == 0) {
        request_stop(s);
        r = wait_stopped(s, deadline);
    }
    if (r == 0) {
        uv_thread_join(&s->thread);
        s->joined = true;
        es_log_drain(100); /* the last lines, if stderr is being read */
        return 0;
    }
    /* Something keeps the library's threads (a bug, or a machine too
     * overloaded to run them): the program's exit must not wait for them. */
    es_log("the library's threads did not finish within %u ms; the program exits without "
           "them, and clients still connected lose the end of the stream",
           s->cfg.linger_ms + ES_STOP_MARGIN_MS);
    if (s->is_unix)
        es_listen_unlink_unix(s->unix_path, &s->addr);
    return r;
}

void es_server_free(struct es_server *s) {
    if (!s->joined) {
        /* A stop that gave up: wait for the threads now. */
        if (!atomic_load(&s->stop_requested))
            request_stop(s);
        uv_thread_join(&s->thread);
    }
    free_server(s);
}

void es_server_debug_block(struct es_server *s, unsigned ms) {
    atomic_store(&s->debug_block_ms, ms);
    uv_async_send(&s->wake);
}

bool es_server_debug_blocked(struct es_server *s) {
    return atomic_load(&s->debug_blocked);
}

void es_server_debug_release(struct es_server *s) {
    atomic_store(&s->debug_blocked, false);
}

int es_server_wait_client(struct es_server *s) {
    uv_mutex_lock(&s->state_lock);
    while (!s->first_client && !s->stopped)
        uv_cond_wait(&s->state_cond, &s->state_lock);
    int r = s->first_client ? 0 : EVENTLOG_SOCKET_ESTOPPED;
    uv_mutex_unlock(&s->state_lock);
    return r;
}

const struct es_counters *es_server_counters(const struct es_server *s) {
    return &s->counters;
}

uint64_t es_server_bytes_received(const struct es_server *s) {
    return es_inbox_bytes_in((struct es_inbox *)&s->inbox);
}

int es_server_last_error(const struct es_server *s) {
    return atomic_load(&s->last_error);
}

int es_server_tcp_port(const struct es_server *s) {
    return s->is_unix ? -1 : s->addr.port;
}

pid_t es_server_pid(const struct es_server *s) {
    return s->pid;
}

size_t es_server_in_flight(struct es_server *s) {
    return atomic_load(&s->inbox.in_flight);
}

void es_server_handoff_dropped(struct es_server *s, uint64_t *chunks, uint64_t *bytes) {
    es_inbox_dropped(&s->inbox, chunks, bytes);
}

void es_server_threads(struct es_server *s, uv_thread_t *walker, uv_thread_t *loop) {
    *walker = s->walker.thread;
    *loop = s->thread;
}

void es_server_exiting(struct es_server *s) {
    es_wait_exiting(&s->wait, s->cfg.linger_ms);
}

void es_server_wait_stats(struct es_server *s, uint64_t *waits, uint64_t *ns, uint64_t *max_ns) {
    *waits = atomic_load(&s->wait.waits);
    *ns = atomic_load(&s->wait.wait_ns);
    *max_ns = atomic_load(&s->wait.wait_max_ns);
}
