/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_lossless.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "delivery/es_notice.h"
#include "base/es_signal.h"

#include <assert.h>
#include <stdio.h>

int es_lossless_init(struct es_lossless *l, const struct es_config *cfg,
                     const struct es_admit_rules *rules, const atomic_size_t *in_flight) {
    *l = (struct es_lossless){.who = cfg->lossless_clients,
                              .disconnect_slow =
                                  cfg->slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT,
                              .every_client = cfg->slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_WAIT,
                              .stall_ms = cfg->lossless_stall_ms,
                              .linger_ms = cfg->linger_ms,
                              .limit = cfg->client_limit,
                              .rules = *rules,
                              .in_flight = in_flight};
    es_peer_finder_init(&l->finder);
    l->log_refused.what = "lossless requests refused";
    l->log_ended.what = "lossless clients demoted";
    return es_wait_init(&l->wait, cfg->client_limit);
}

static void on_check(uv_timer_t *t);

void es_lossless_open(struct es_lossless *l, uv_loop_t *loop, struct es_fanout *fan,
                      struct es_counters *counters) {
    assert(!l->check_open && l->count == 0);
    l->loop = loop;
    l->fan = fan;
    l->counters = counters;
    uv_timer_init(loop, &l->check);
    l->check.data = l;
    l->check_open = true;
}

void es_lossless_close(struct es_lossless *l, uv_close_cb cb) {
    if (l->check_open)
        uv_close((uv_handle_t *)&l->check, cb);
    l->check_open = false;
}

void es_lossless_destroy(struct es_lossless *l) {
    es_wait_destroy(&l->wait);
    es_peer_finder_close(&l->finder);
}

/* ---- who may have it ---------------------------------------------------- */

/* Why `c` may not have lossless delivery, or NULL if it may. */
static const char *refusal(struct es_lossless *l, struct es_client *c, char *why, size_t n) {
    if (l->who == EVENTLOG_SOCKET_LOSSLESS_NONE) {
        snprintf(why, n, "lossless delivery is off (GHC_EVENTLOG_LOSSLESS_CLIENTS=none)");
        return why;
    }
    if (l->who == EVENTLOG_SOCKET_LOSSLESS_ALL)
        return NULL;
    char who[256];
    int fd = es_client_fd(c);
    if (fd >= 0 && es_admit_is_owner(&l->rules, &l->finder, fd, who, sizeof who))
        return NULL;
    snprintf(why, n,
             "only the program's own user may have it, and %s "
             "(GHC_EVENTLOG_LOSSLESS_CLIENTS=all allows any client)",
             fd >= 0 ? who : "the connection is closing");
    return why;
}

/* A notice for `c` alone: "eventlog-socket: lossless delivery WHAT: WHY;
 * ..." and what the connection gets from now on (es_fanout_tell: before
 * the header, once it has come). */
static void tell(struct es_lossless *l, struct es_client *c, const char *what, const char *why) {
    char text[512];
    snprintf(text, sizeof text, "eventlog-socket: lossless delivery %s: %s; from here on %s", what,
             why,
             l->disconnect_slow
                 ? "this connection is disconnected when it falls behind"
                 : "chunks are skipped for this connection when it falls behind, with a drop "
                   "notice");
    es_fanout_tell(l->fan, c, text);
}

static void start_checks(struct es_lossless *l) {
    if (l->check_open && !uv_is_active((uv_handle_t *)&l->check)) {
        l->seen_signals = es_signal_count();
        uv_timer_start(&l->check, on_check, ES_LOSSLESS_CHECK_MS, ES_LOSSLESS_CHECK_MS);
    }
}

static void make_lossless(struct es_lossless *l, struct es_client *c) {
    /* A Ctrl-C from now on must reach the loop thread, also one that comes
     * before a program thread first waits for this client (es_signal.h). */
    es_signal_chain();
    es_client_set_flags(c, ES_CLIENT_LOSSLESS, true);
    es_client_set_held_since(c, 0);
    l->count++;
    start_checks(l);
    es_lossless_publish(l);
}

static void refuse(struct es_lossless *l, struct es_client *c, const char *why) {
    es_client_set_flags(c, ES_CLIENT_LOSSLESS_OVER, true);
    es_log_limited(&l->log_refused, uv_now(l->loop),
                   "client %llu asked for lossless delivery; refused: %s",
                   (unsigned long long)es_client_id(c), why);
    tell(l, c, "refused", why);
}

void es_lossless_joined(struct es_lossless *l, struct es_client *c) {
    if (!l->every_client)
        return;
    char why[400];
    const char *no = refusal(l, c, why, sizeof why);
    if (no != NULL)
        refuse(l, c, no);
    else
        make_lossless(l, c);
}

void es_lossless_request(struct es_lossless *l, struct es_client *c) {
    if (es_client_is_any(c, ES_CLIENT_LOSSLESS | ES_CLIENT_LOSSLESS_OVER | ES_CLIENT_CLOSING))
        return;
    char why[400];
    const char *no = refusal(l, c, why, sizeof why);
    if (no != NULL) {
        refuse(l, c, no);
        return;
    }
    es_log("client %llu asked for lossless delivery: the program waits for it when it falls "
           "behind",
           (unsigned long long)es_client_id(c));
    make_lossless(l, c);
}

void es_lossless_left(struct es_lossless *l, struct es_client *c) {
    if (!es_client_is(c, ES_CLIENT_LOSSLESS))
        return;
    es_client_set_flags(c, ES_CLIENT_LOSSLESS, false);
    assert(l->count > 0);
    l->count--;
    es_lossless_publish(l);
}

/* ---- when it ends ------------------------------------------------------- */

static void demote(struct es_lossless *l, struct es_client *c, const char *why) {
    es_client_set_flags(c, ES_CLIENT_LOSSLESS, false);
    es_client_set_flags(c, ES_CLIENT_LOSSLESS_OVER, true);
    assert(l->count > 0);
    l->count--;
    l->ended++;
    es_log_limited(&l->log_ended, uv_now(l->loop),
                   "client %llu: lossless delivery ends: %s; it is served as any other client "
                   "from now on",
                   (unsigned long long)es_client_id(c), why);
    tell(l, c, "ended", why);
}

/* Whether the next full RTS buffer would have to wait for `c`. */
static bool holds_program(struct es_lossless *l, const struct es_client *c) {
    uint64_t unsent = es_client_unsent(c) + atomic_load(l->in_flight);
    return unsent + ES_RTS_BUFFER > l->limit;
}

/* Whether the program waited since the last wait notice. */
static bool waits_untold(struct es_lossless *l) {
    return atomic_load(&l->wait.waits) > l->noticed_waits;
}

static void on_check(uv_timer_t *t) {
    struct es_lossless *l = t->data;
    assert(l->check_open);
    uint64_t now = uv_now(l->loop);
    unsigned signals = es_signal_count();
    if (signals != l->seen_signals && !l->interrupted) {
        /* From now on no wait outlasts the linger time, and a lossless
         * client that stops reading is demoted, at this check or a later
         * one (the RTS's exit may take a while to get to its end). */
        l->interrupted = true;
        es_wait_interrupted(&l->wait, l->linger_ms);
    }
    l->seen_signals = signals;
    bool interrupted = l->interrupted;
    bool changed = false;
    es_fanout_each(l->fan, c, next) {
        if (!es_client_is(c, ES_CLIENT_LOSSLESS) || es_client_is(c, ES_CLIENT_CLOSING))
            continue;
        es_client_note_progress(c, now);
        if (interrupted && es_client_stalled(c, now)) {
            demote(l, c, "the program was interrupted, and this connection had stopped reading");
            changed = true;
            continue;
        }
        if (!holds_program(l, c)) {
            es_client_set_held_since(c, 0);
            continue;
        }
        if (es_client_held_since(c) == 0)
            es_client_set_held_since(c, now);
        uint64_t held = es_client_held_since(c), moved = es_client_moved_ms(c);
        uint64_t since = held > moved ? held : moved;
        if (l->stall_ms > 0 && now - since >= l->stall_ms) {
            char why[160];
            snprintf(why, sizeof why,
                     "it read nothing for %.1f s while the program waited for it "
                     "(GHC_EVENTLOG_LOSSLESS_STALL_MS)",
                     (double)(now - since) / 1000);
            demote(l, c, why);
            changed = true;
        }
    }
    if (es_lossless_notice(l))
        changed = true;
    if (changed) {
        es_fanout_each(l->fan, c, next) es_client_pump(c);
        es_lossless_publish(l);
    }
    /* A thread that still waits (its client just left) counts its wait
     * when it wakes: look again until it has, and the wait is told. */
    if (l->count == 0 && !es_wait_waiting(&l->wait) && !waits_untold(l))
        uv_timer_stop(&l->check);
}

/* ---- what it costs ------------------------------------------------------- */

void es_lossless_publish(struct es_lossless *l) {
    atomic_store_explicit(&l->counters->clients_lossless, l->count, memory_order_relaxed);
    if (l->count == 0) {
        es_wait_publish(&l->wait, false, 0);
        return;
    }
    uint64_t backlog = 0;
    unsigned n = 0;
    es_fanout_each(l->fan, c, next) {
        n += es_client_is(c, ES_CLIENT_LOSSLESS);
        if (es_client_is(c, ES_CLIENT_LOSSLESS) && !es_client_is(c, ES_CLIENT_CLOSING)) {
            uint64_t u = es_client_unsent(c);
            backlog = u > backlog ? u : backlog;
        }
    }
    /* The count is the lossless clients' (closing ones until they left). */
    assert(n == l->count);
    (void)n;
    es_wait_publish(&l->wait, true, backlog);
}

bool es_lossless_notice(struct es_lossless *l) {
    uint64_t now = uv_now(l->loop);
    if (!es_fanout_have_header(l->fan) || now - l->notice_ms < ES_WAIT_NOTICE_MS)
        return false;
    uint64_t waits = atomic_load(&l->wait.waits), ns = atomic_load(&l->wait.wait_ns);
    bool sent = false;
    if (waits > l->noticed_waits) {
        struct es_chunk *n = es_notice_wait(es_fanout_header(l->fan), es_fanout_last_time(l->fan),
                                            waits - l->noticed_waits, ns - l->noticed_ns,
                                            l->notice_ms ? now - l->notice_ms : ES_WAIT_NOTICE_MS);
        if (n != NULL) {
            es_fanout_append(l->fan, n);
            sent = true;
        }
    }
    l->notice_ms = now;
    l->noticed_waits = waits;
    l->noticed_ns = ns;
    return sent;
}

bool es_lossless_full(struct es_lossless *l) {
    return es_wait_full(&l->wait, atomic_load(l->in_flight));
}

void es_lossless_rts_call(struct es_lossless *l, bool calling) {
    es_wait_rts_call(&l->wait, calling);
}

bool es_lossless_wait_for_room(struct es_lossless *l, size_t len) {
    return es_wait_for_room(&l->wait, len, l->in_flight);
}

void es_lossless_exiting(struct es_lossless *l) {
    es_wait_exiting(&l->wait, l->linger_ms);
}

void es_lossless_shutdown(struct es_lossless *l) {
    es_wait_shutdown(&l->wait);
}

void es_lossless_wait_stats(struct es_lossless *l, uint64_t *waits, uint64_t *ns,
                            uint64_t *max_ns) {
    *waits = atomic_load(&l->wait.waits);
    *ns = atomic_load(&l->wait.wait_ns);
    *max_ns = atomic_load(&l->wait.wait_max_ns);
}

bool es_lossless_waiting(struct es_lossless *l) {
    return es_wait_waiting(&l->wait);
}

void es_lossless_flush_logs(struct es_lossless *l, uint64_t now_ms, bool force) {
    es_log_limit_flush(&l->log_refused, now_ms, force);
    es_log_limit_flush(&l->log_ended, now_ms, force);
}
