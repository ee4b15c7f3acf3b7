/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_linger.h"

#include "delivery/es_client.h"
#include "es_cut.h"

#include <assert.h>
#include <stdio.h>

void es_linger_open(struct es_linger *l, uv_loop_t *loop, struct es_fanout *fan, unsigned linger_ms,
                    unsigned max_ms) {
    *l = (struct es_linger){.loop = loop, .fan = fan, .linger_ms = linger_ms, .max_ms = max_ms};
    l->log_stall.what = "clients that stopped reading cut at exit";
    l->log_slow.what = "clients too slow to finish cut at exit";
    uv_timer_init(loop, &l->linger);
    uv_timer_init(loop, &l->check);
    l->linger.data = l->check.data = l;
    l->open = true;
}

void es_linger_close(struct es_linger *l, uv_close_cb cb) {
    if (!l->open)
        return;
    l->open = false;
    uv_close((uv_handle_t *)&l->linger, cb);
    uv_close((uv_handle_t *)&l->check, cb);
}

static void on_linger_timeout(uv_timer_t *t) {
    struct es_linger *l = t->data;
    unsigned n = 0;
    es_fanout_each(l->fan, c, next) n += !es_client_is(c, ES_CLIENT_CLOSING);
    if (n == 0)
        return;
    es_log("%u client(s) did not take the rest of the stream within %u ms "
           "(GHC_EVENTLOG_LINGER_MAX_MS); cutting them",
           n, l->max_ms);
    char why[160];
    snprintf(why, sizeof why,
             "the program exited, and this connection did not take the rest of the stream "
             "within %u ms (GHC_EVENTLOG_LINGER_MAX_MS)",
             l->max_ms);
    es_fanout_each(l->fan, c, next) es_cut_client(c, why);
}

/* Past the linger time: whether `c`, at its pace since the exit began,
 * would take the rest of its stream before the maximum (with a margin of
 * two: it stays if it is at least half as fast as that needs). */
static bool keeps_up(const struct es_linger *l, const struct es_client *c, uint64_t elapsed) {
    uint64_t left = es_client_unsent(c);
    if (left == 0)
        return true; /* all handed to the socket: the stall rule judges it */
    if (elapsed >= l->max_ms)
        return false;
    uint64_t done = es_client_consumed_since_exit(c);
    return left * elapsed <= 2 * done * (l->max_ms - elapsed);
}

static void cut_slow(struct es_linger *l, struct es_client *c, uint64_t now, uint64_t elapsed) {
    double mib = (double)es_client_unsent(c) / (1 << 20);
    double rate = (double)es_client_consumed_since_exit(c) / (1 << 20) * 1000 / (double)elapsed;
    es_log_limited(&l->log_slow, now,
                   "client %llu reads too slowly to take the rest of the stream (%.1f MiB at "
                   "%.2f MiB/s) within %u ms of the exit; cutting it",
                   (unsigned long long)es_client_id(c), mib, rate, l->max_ms);
    char why[200];
    snprintf(why, sizeof why,
             "the program exited, and at this connection's pace (%.2f MiB/s) the rest of the "
             "stream (%.1f MiB) would not arrive within %u ms (GHC_EVENTLOG_LINGER_MAX_MS)",
             rate, mib, l->max_ms);
    es_cut_client(c, why);
}

/* Whether `c` has stopped reading: no progress for the client's stall
 * time (es_client_stalled); one that has read since the exit began gets
 * the whole linger time of silence, as a busy machine may leave a reader
 * unscheduled for a second. */
static bool stopped(const struct es_linger *l, struct es_client *c, uint64_t now) {
    if (!es_client_stalled(c, now))
        return false;
    return es_client_consumed_since_exit(c) == 0 || now - es_client_moved_ms(c) >= l->linger_ms;
}

static void on_check(uv_timer_t *t) {
    struct es_linger *l = t->data;
    uint64_t now = uv_now(l->loop), elapsed = now - l->began_ms;
    es_fanout_each(l->fan, c, next) {
        if (es_client_is(c, ES_CLIENT_CLOSING))
            continue;
        if (stopped(l, c, now)) {
            es_log_limited(&l->log_stall, now,
                           "client %llu stopped reading; cutting it without the rest of the "
                           "stream",
                           (unsigned long long)es_client_id(c));
            es_cut_client(c, "the program exited, and this connection had stopped reading");
        } else if (elapsed >= l->linger_ms && !keeps_up(l, c, elapsed)) {
            cut_slow(l, c, now, elapsed);
        }
    }
    es_log_limit_flush(&l->log_stall, now, false);
    es_log_limit_flush(&l->log_slow, now, false);
}

void es_linger_begin(struct es_linger *l) {
    /* Once, at the stop, while its timers are open. */
    assert(l->open && !uv_is_active((uv_handle_t *)&l->linger) &&
           !uv_is_active((uv_handle_t *)&l->check));
    l->began_ms = uv_now(l->loop);
    if (es_fanout_nclients(l->fan) == 0)
        return;
    es_fanout_each(l->fan, c, next) {
        es_client_note_progress(c, l->began_ms);
        es_client_mark_exit(c);
    }
    uv_timer_start(&l->linger, on_linger_timeout, l->max_ms, 0);
    uv_timer_start(&l->check, on_check, 50, 50);
    /* A client that was already stuck before the exit is not waited for
     * at all. */
    on_check(&l->check);
}

void es_linger_flush_logs(struct es_linger *l, uint64_t now_ms, bool force) {
    es_log_limit_flush(&l->log_stall, now_ms, force);
    es_log_limit_flush(&l->log_slow, now_ms, force);
}
