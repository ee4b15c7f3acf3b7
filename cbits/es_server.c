/* For SCHED_BATCH. */
#define _GNU_SOURCE
#include "es_server.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_client.h"
#include "es_events.h"
#include "es_log.h"
#include "es_notice.h"
#include "es_peer.h"
#include "es_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ES_NS_PER_MS UINT64_C(1000000)

void es_server_config_defaults(struct es_server_config *cfg) {
    cfg->max_buffer = (size_t)64 << 20;
    cfg->client_limit = (size_t)64 << 20;
    cfg->drop_slow = true;
    cfg->defs_limit = (size_t)16 << 20;
    cfg->linger_ms = 2000;
    cfg->control_interval_ms = ES_GATE_DEFAULT_MS;
    cfg->max_clients = 1024;
}

/* ---- control commands ------------------------------------------------- */

static void deliver_command(uint8_t cmd, void *ctx) {
    struct es_server *s = ctx;
    if (s->on_command == NULL)
        return;
    /* What acting took on this thread (a census is taken here, in the
     * major GC the RTS runs for it): the gate spaces costly commands by it. */
    uint64_t start = uv_hrtime();
    s->on_command(cmd, s->command_ctx);
    es_gate_cost(&s->gate, cmd, (uv_hrtime() - start) / ES_NS_PER_MS);
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
    for (struct es_client *c = s->clients, *next; c != NULL; c = next) {
        next = c->next;
        any |= es_client_resume_reading(c, now);
    }
    if (!any)
        uv_timer_stop(&s->resume_timer);
}

void es_server_reading_paused(struct es_server *s) {
    if (!uv_is_active((uv_handle_t *)&s->resume_timer))
        uv_timer_start(&s->resume_timer, on_resume_timer, 100, 100);
}

void es_server_command(struct es_server *s, uint8_t cmd) {
    es_gate_offer(&s->gate, cmd, uv_now(&s->loop), deliver_command, s);
    arm_gate(s);
}

size_t es_server_held(const struct es_server *s) {
    return s->store.bytes_held + s->defs.len;
}

void es_server_publish(struct es_server *s) {
    size_t held = es_server_held(s);
    /* A lagging client that caught up or left ends the pool's loans: no
     * backlog to refill. */
    es_pool_note_held(held);
    atomic_store_explicit(&s->counters.bytes_held, held, memory_order_relaxed);
    if (held > atomic_load_explicit(&s->counters.bytes_held_peak, memory_order_relaxed))
        atomic_store_explicit(&s->counters.bytes_held_peak, held, memory_order_relaxed);
}

void es_server_async_error(struct es_server *s, int err, const char *what) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->last_error, &expected, err))
        es_log("error while %s: %s (further errors are not logged)", what,
               eventlog_socket_strerror(err));
}

/* ---- chunks from the RTS ---------------------------------------------- */

/* Append a data chunk for every connected client. */
static void append(struct es_server *s, struct es_chunk *c) {
    uint64_t dropped = s->store.retain_dropped_chunks;
    uint64_t dropped_bytes = s->store.retain_dropped_bytes;
    struct es_chunk *kept = es_store_append(&s->store, c, s->nclients);
    es_defs_end_chunk(&s->defs, s->store.end_offset);
    if (kept != NULL)
        for (struct es_client *cl = s->clients; cl != NULL; cl = cl->next)
            es_client_on_append(cl, kept);
    if (s->store.retain_dropped_chunks > dropped) {
        atomic_fetch_add(&s->counters.chunks_dropped, s->store.retain_dropped_chunks - dropped);
        atomic_fetch_add(&s->counters.bytes_dropped, s->store.retain_dropped_bytes - dropped_bytes);
        if (dropped == 0)
            es_log("no client yet and %.1f MiB retained: dropping the oldest chunks from now "
                   "on (the first client will miss them)",
                   (double)s->cfg.max_buffer / (1 << 20));
    }
}

/* Keep only the header proper: GHC 9.0 may put a stale block marker before
 * it, which must never reach a client, and bytes after "datb" (none in
 * practice) are ordinary data. */
static void ingest_header(struct es_server *s, struct es_chunk *c) {
    if (es_header_parse(c->data, c->len, &s->header) != 0) {
        if (!s->bad_header_logged) {
            s->bad_header_logged = true;
            es_log("the RTS wrote a header that does not parse; passing it on unchanged");
        }
        s->header.skip = 0;
        s->header.len = c->len;
    }
    s->have_header = true;
    size_t rest = c->len - s->header.skip - s->header.len;
    if (s->header.skip == 0 && rest == 0) {
        es_store_set_header(&s->store, c);
        return;
    }
    struct es_chunk *h = es_chunk_new(c->data + s->header.skip, s->header.len);
    struct es_chunk *tail = rest ? es_chunk_new(c->data + c->len - rest, rest) : NULL;
    es_chunk_free(c);
    if (h == NULL || (rest && tail == NULL)) {
        es_chunk_free(h);
        es_chunk_free(tail);
        es_server_async_error(s, UV_ENOMEM, "storing the eventlog header");
        return;
    }
    es_store_set_header(&s->store, h);
    if (tail)
        append(s, tail);
}

/* Keep the definition events the walker found in a chunk. Every one of
 * every chunk passes here once. */
static void keep_definitions(struct es_server *s, struct es_chunk *c) {
    if (c->flags & ES_CHUNK_DEFS_LOST)
        es_server_async_error(s, UV_ENOMEM, "noting definition events for late joiners");
    for (size_t i = 0; i < c->ndefs; i++) {
        const uint8_t *p = c->data + c->defs[i].offset;
        struct es_event ev = {.type = es_be16(p),
                              .time = es_be64(p + 2),
                              .offset = c->defs[i].offset,
                              .len = c->defs[i].len};
        if (!es_defs_keep(&s->defs, &ev, c->data) && !s->defs_full_logged) {
            s->defs_full_logged = true;
            es_log("more than %.1f MiB of start-up definition events; clients joining later "
                   "will miss the rest",
                   (double)s->cfg.defs_limit / (1 << 20));
        }
    }
    free(c->defs);
    c->defs = NULL;
    c->ndefs = c->defs_cap = 0;
}

/* Chunks were dropped at the hand-off right before `c` (es_inbox.h): every
 * client missed them. Under the drop policy each gets a notice where the
 * gap is (one block for all, in the stream's order); under the disconnect
 * policy, which promises a client no gap, each is disconnected. */
static void handoff_gap(struct es_server *s, const struct es_chunk *c) {
    uint64_t now = uv_now(&s->loop);
    es_log_limited(&s->log_handoff, now,
                   "the library's threads fell behind the program: dropped %llu chunks "
                   "(%.1f MiB) before they reached any client (%s)",
                   (unsigned long long)c->gap_chunks, (double)c->gap_bytes / (1 << 20),
                   s->cfg.drop_slow ? "each gets a drop notice where the gap is"
                                    : "clients connected are disconnected");
    unsigned missed = s->nclients > 0 ? s->nclients : s->store.retaining ? 1 : 0;
    atomic_fetch_add(&s->counters.chunks_dropped, c->gap_chunks * missed);
    atomic_fetch_add(&s->counters.bytes_dropped, c->gap_bytes * missed);
    if (!s->cfg.drop_slow) {
        for (struct es_client *cl = s->clients, *next; cl != NULL; cl = next) {
            next = cl->next;
            if (!cl->closing)
                es_client_disconnect_lagging(cl, c->gap_bytes, "chunks dropped at the hand-off");
        }
        if (!s->store.retaining)
            return;
    }
    struct es_chunk *notice = es_notice_new(&s->header, c->gap_chunks, c->gap_bytes, c->gap_time);
    if (notice != NULL)
        append(s, notice);
}

static void ingest(struct es_server *s, struct es_chunk *c) {
    c->next = NULL;
    if (c->gap_chunks > 0 && s->have_header)
        handoff_gap(s, c);
    if (c->flags & ES_CHUNK_HEADER) {
        ingest_header(s, c);
        return;
    }
    if (!s->have_header) {
        /* Data before any header cannot be parsed by a client. */
        if (!s->orphan_logged) {
            s->orphan_logged = true;
            es_log("dropping eventlog data that arrived before the header");
        }
        es_chunk_free(c);
        return;
    }
    keep_definitions(s, c);
    append(s, c);
}

/* Past the bound, with nothing left to skip, what remains is held by
 * unfinished writes. One such write per client that has stopped reading
 * may stay (ES_PINNED_SLACK), but clients that stop reading one after
 * another, each at another place in the stream, would pin a chunk each
 * without limit (200 of them joining a flood 30 ms apart held 88 MiB
 * against a 16 MiB bound): then stuck clients (es_client_stuck), oldest
 * write first, are disconnected, whatever the policy, until what closing
 * them frees brings the library back within the bound. Their memory comes
 * back when the closes complete. */
#define ES_PINNED_SLACK (ES_CLIENT_MAX_WRITE + ES_RTS_BUFFER)

static void close_stuck(struct es_server *s) {
    size_t held = es_server_held(s);
    uint64_t now = uv_now(&s->loop);
    while (held > s->cfg.max_buffer + ES_PINNED_SLACK) {
        uint64_t oldest = UINT64_MAX, freed = 0, since, unique;
        struct es_client *victim = NULL;
        for (struct es_client *c = s->clients; c != NULL; c = c->next)
            if (es_client_stuck(c, now, &since, &unique) && since < oldest) {
                oldest = since;
                freed = unique;
                victim = c;
            }
        if (victim == NULL)
            return;
        es_client_disconnect_lagging(victim, s->store.end_offset - oldest,
                                     "it stopped reading, and the unsent data of clients like it "
                                     "exceeds the buffer bound");
        held -= freed < held ? freed : held;
    }
}

/* Keep the memory held within max_buffer: the client furthest behind skips
 * chunks (or is disconnected) until the chunks only it still needed are
 * freed, then the next furthest. Chunks in a write in flight cannot be
 * released, so a stalled client pins at most one write's worth
 * (ES_CLIENT_MAX_WRITE, or one chunk). */
static void enforce_bound(struct es_server *s) {
    while (es_server_held(s) > s->cfg.max_buffer) {
        struct es_client *worst = NULL;
        uint64_t worst_lag = 0;
        for (struct es_client *c = s->clients; c != NULL; c = c->next) {
            uint64_t lag = es_client_droppable(c);
            if (!c->closing && lag > worst_lag) {
                worst = c;
                worst_lag = lag;
            }
        }
        if (worst == NULL) {
            close_stuck(s);
            return;
        }
        if (!s->cfg.drop_slow) {
            /* Its memory comes back when the close completes; look again
             * at the next wake-up rather than disconnect everyone now. */
            es_client_disconnect_lagging(worst, worst_lag, "the global buffer limit");
            return;
        }
        uint64_t excess = es_server_held(s) - s->cfg.max_buffer;
        if (es_client_drop(worst, worst_lag > excess ? worst_lag - excess : 0) == 0)
            return;
    }
}

static void begin_stop(struct es_server *s);

/* Take in what the walker handed over; returns whether there was any. */
static bool take_chunks(struct es_server *s) {
    struct es_chunk *c = es_walker_take(&s->walker);
    bool any = c != NULL;
    size_t bytes = 0;
    while (c != NULL) {
        struct es_chunk *next = c->next;
        bytes += c->len; /* before ingest, which may free or split it */
        ingest(s, c);
        c = next;
    }
    es_inbox_release(&s->inbox, bytes);
    return any;
}

/* Summaries of repeating causes whose one-second window has ended. */
static void flush_logs(struct es_server *s, bool force) {
    uint64_t now = uv_now(&s->loop);
    es_log_limit_flush(&s->log_dropping, now, force);
    es_log_limit_flush(&s->log_lagging, now, force);
    es_log_limit_flush(&s->log_exit_stall, now, force);
    es_log_limit_flush(&s->log_handoff, now, force);
    es_log_limit_flush(&s->log_refused, now, force);
}

static void on_wake(uv_async_t *h) {
    struct es_server *s = h->data;
    unsigned block = atomic_exchange(&s->debug_block_ms, 0);
    if (block > 0) {
        struct timespec ts = {block / 1000, (long)(block % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        uv_update_time(&s->loop);
    }
    bool any = take_chunks(s);
    if (any) {
        uint64_t now = uv_now(&s->loop);
        /* Each client gets to write what it can before its lag is judged:
         * chunks can arrive many at a time (the loop thread was busy, or
         * a client joined just before a burst), and that burst is not the
         * client's fault. */
        for (struct es_client *cl = s->clients, *next; cl != NULL; cl = next) {
            next = cl->next;
            es_client_note_progress(cl, now);
            es_client_pump(cl);
            es_client_check_lag(cl);
        }
        enforce_bound(s);
        for (struct es_client *cl = s->clients, *next; cl != NULL; cl = next) {
            next = cl->next;
            es_client_pump(cl);
        }
        es_server_publish(s);
    }
    flush_logs(s, false);
    if (atomic_load(&s->stop_requested) && !s->stopping)
        begin_stop(s);
    es_server_update_tick(s);
}

/* ---- periodic tick (the RTS flush on GHC >= 9.2) ------------------------ */

static void on_tick(uv_timer_t *t);

/* Fire the tick at `due` (uv_hrtime), or at once if that has passed. */
static void arm_tick(struct es_server *s, uint64_t due) {
    uint64_t now = uv_hrtime();
    uint64_t ms = due > now ? (due - now + ES_NS_PER_MS - 1) / ES_NS_PER_MS : 0;
    uv_timer_start(&s->tick, on_tick, ms, 0);
}

static void on_tick(uv_timer_t *t) {
    struct es_server *s = t->data;
    uv_mutex_lock(&s->state_lock);
    es_tick_fn fn = s->tick_fn;
    void *ctx = s->tick_ctx;
    uint64_t interval = (uint64_t)s->tick_ms * ES_NS_PER_MS;
    bool paced = s->tick_paced;
    uv_mutex_unlock(&s->state_lock);
    if (fn == NULL || interval == 0 || s->stopping) {
        s->tick_active = false; /* es_server_update_tick starts it again */
        return;
    }
    uint64_t now = uv_hrtime();
    /* The first time after the tick starts, there is no flush to pace
     * from: capabilities that never handed a block over are unknown. */
    if (paced && s->tick_flushed) {
        uint64_t due = es_walker_next_flush(&s->walker, s->last_flush, interval);
        /* The timer counts in milliseconds: within one, it is due now. */
        if (due > now + ES_NS_PER_MS) {
            arm_tick(s, due);
            return;
        }
    }
    /* Every buffer is emptied during the flush: from its start on, nothing
     * older is left in one. */
    s->last_flush = now;
    s->tick_flushed = true;
    if (fn(ctx)) {
        atomic_fetch_add_explicit(&s->counters.flushes, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->counters.flush_us, (uv_hrtime() - now) / 1000,
                                  memory_order_relaxed);
    }
    arm_tick(s, s->last_flush + interval);
}

void es_server_update_tick(struct es_server *s) {
    uv_mutex_lock(&s->state_lock);
    bool want = s->tick_fn != NULL && s->tick_ms > 0;
    unsigned ms = s->tick_ms;
    uv_mutex_unlock(&s->state_lock);
    want = want && s->nclients > 0 && !s->stopping;
    if (want && (!s->tick_active || ms != s->tick_armed_ms)) {
        if (!s->tick_active) {
            s->last_flush = uv_hrtime();
            s->tick_flushed = false;
        }
        /* A new interval counts from the last flush, so a shorter one may
         * fire at once. */
        s->tick_armed_ms = ms;
        arm_tick(s, s->last_flush + (uint64_t)ms * ES_NS_PER_MS);
        s->tick_active = true;
    } else if (!want && s->tick_active) {
        uv_timer_stop(&s->tick);
        s->tick_active = false;
    }
}

void es_server_set_tick(struct es_server *s, es_tick_fn fn, void *ctx, unsigned interval_ms,
                        bool paced) {
    uv_mutex_lock(&s->state_lock);
    s->tick_fn = fn;
    s->tick_ctx = ctx;
    s->tick_ms = interval_ms;
    s->tick_paced = paced;
    /* The loop thread picks the change up when it wakes. Under the lock,
     * so that the loop cannot close `wake` in between. */
    if (!s->wake_closed)
        uv_async_send(&s->wake);
    uv_mutex_unlock(&s->state_lock);
}

/* ---- stopping --------------------------------------------------------- */

static void on_handle_closed(uv_handle_t *h) {
    (void)h;
}

void es_server_maybe_finish(struct es_server *s) {
    if (!s->stopping || s->finished || s->nclients > 0)
        return;
    s->finished = true;
    flush_logs(s, true);
    uv_mutex_lock(&s->state_lock);
    s->wake_closed = true;
    uv_mutex_unlock(&s->state_lock);
    uv_close((uv_handle_t *)&s->wake, on_handle_closed);
    uv_close((uv_handle_t *)&s->linger, on_handle_closed);
    uv_close((uv_handle_t *)&s->exit_check, on_handle_closed);
    uv_close((uv_handle_t *)&s->tick, on_handle_closed);
    uv_close((uv_handle_t *)&s->gate_timer, on_handle_closed);
    uv_close((uv_handle_t *)&s->resume_timer, on_handle_closed);
}

static void on_linger_timeout(uv_timer_t *t) {
    struct es_server *s = t->data;
    if (s->nclients == 0)
        return;
    es_log("%u client(s) did not take the rest of the stream within %u ms; closing them",
           s->nclients, s->cfg.linger_ms);
    for (struct es_client *c = s->clients, *next; c != NULL; c = next) {
        next = c->next;
        es_client_close(c);
    }
}

static void on_exit_check(uv_timer_t *t) {
    struct es_server *s = t->data;
    uint64_t now = uv_now(&s->loop);
    for (struct es_client *c = s->clients, *next; c != NULL; c = next) {
        next = c->next;
        es_client_check_exit_stall(c, now);
    }
    flush_logs(s, false);
}

static void begin_stop(struct es_server *s) {
    s->stopping = true;
    es_server_update_tick(s);
    uv_timer_stop(&s->gate_timer); /* commands held back are moot now */
    /* The walker has ended (es_server_stop): take what it handed over last. */
    take_chunks(s);
    uv_close(&s->listener.handle, on_handle_closed);
    if (s->nclients > 0) {
        uv_timer_start(&s->linger, on_linger_timeout, s->cfg.linger_ms, 0);
        uv_timer_start(&s->exit_check, on_exit_check, 50, 50);
        /* A client that was already stuck before the exit is not waited
         * for at all. */
        on_exit_check(&s->exit_check);
    }
    for (struct es_client *c = s->clients, *next; c != NULL; c = next) {
        next = c->next;
        es_client_pump(c);
    }
    es_server_maybe_finish(s);
}

/* ---- the loop thread -------------------------------------------------- */

static void on_connection(uv_stream_t *listener, int status) {
    struct es_server *s = listener->data;
    if (status < 0) {
        es_server_async_error(s, status, "waiting for clients");
        return;
    }
    es_client_accept(s);
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
    es_defs_destroy(&s->defs, &s->store);
    es_store_destroy(&s->store);
    es_walker_destroy(&s->walker);
    es_inbox_destroy(&s->inbox);
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
    s->wake.data = s->linger.data = s->tick.data = s->exit_check.data = s->gate_timer.data =
        s->resume_timer.data = s;
    s->listener.handle.data = s;
    uv_async_init(&s->loop, &s->wake, on_wake);
    uv_timer_init(&s->loop, &s->linger);
    uv_timer_init(&s->loop, &s->tick);
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
        uv_close((uv_handle_t *)&s->tick, NULL);
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

static struct es_server *alloc_server(const struct es_server_config *cfg, es_command_fn fn,
                                      void *ctx) {
    struct es_server *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    if (cfg)
        s->cfg = *cfg;
    else
        es_server_config_defaults(&s->cfg);
    s->on_command = fn;
    s->command_ctx = ctx;
    es_gate_init(&s->gate, s->cfg.control_interval_ms);
    s->pid = getpid();
    atomic_init(&s->stop_called, false);
    atomic_init(&s->stop_requested, false);
    atomic_init(&s->last_error, 0);
    es_store_init(&s->store, s->cfg.max_buffer);
    es_defs_init(&s->defs, s->cfg.defs_limit);
    for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++)
        s->is_definition[t] = es_defs_is_definition((uint16_t)t);
    s->log_dropping.what = "times chunks were skipped for slow clients";
    s->log_lagging.what = "slow clients disconnected";
    s->log_exit_stall.what = "clients that stopped reading closed at exit";
    s->log_handoff.what = "times chunks were dropped at the hand-off";
    s->log_refused.what = "clients refused";
    es_inbox_init(&s->inbox, es_server_handoff_limit(&s->cfg));
    es_walker_init(&s->walker, &s->inbox, s->is_definition, wake_loop, s);
    uv_mutex_init(&s->state_lock);
    uv_cond_init(&s->state_cond);
    return s;
}

int es_server_start_unix(struct es_server **out, const char *path,
                         const struct es_server_config *cfg, es_command_fn fn, void *ctx) {
    struct es_server *s = alloc_server(cfg, fn, ctx);
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOMEM;
    s->is_unix = true;
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
                        const struct es_server_config *cfg, es_command_fn fn, void *ctx) {
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
    es_inbox_push(&s->inbox, buf, len);
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

int es_server_wait_client(struct es_server *s) {
    uv_mutex_lock(&s->state_lock);
    while (!s->first_client && !s->stopped)
        uv_cond_wait(&s->state_cond, &s->state_lock);
    int r = s->first_client ? 0 : EVENTLOG_SOCKET_ESTOPPED;
    uv_mutex_unlock(&s->state_lock);
    return r;
}
