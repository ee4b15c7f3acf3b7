/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_bound.h"

#include "es_cut.h"
#include "delivery/es_notice.h"
#include "delivery/es_pool.h"

#include <assert.h>
#include <stdio.h>

void es_bound_init(struct es_bound *b, size_t max_buffer, size_t client_limit, bool drop_slow,
                   uv_loop_t *loop, struct es_fanout *fan, struct es_counters *counters) {
    *b = (struct es_bound){.max_buffer = max_buffer,
                           .client_limit = client_limit,
                           .drop_slow = drop_slow,
                           .loop = loop,
                           .fan = fan,
                           .counters = counters};
    b->log_dropping.what = "times chunks were skipped for slow clients";
    b->log_lagging.what = "slow clients disconnected";
    b->log_handoff.what = "times chunks were dropped at the hand-off";
    b->log_oom.what = "times chunks were lost for memory at the hand-off";
}

void es_bound_flush_logs(struct es_bound *b, uint64_t now_ms, bool force) {
    es_log_limit_flush(&b->log_dropping, now_ms, force);
    es_log_limit_flush(&b->log_lagging, now_ms, force);
    es_log_limit_flush(&b->log_handoff, now_ms, force);
    es_log_limit_flush(&b->log_oom, now_ms, force);
}

/* The stream it got ends on an event boundary, with a cut notice saying
 * why when there is room (es_cut.h). */
static void disconnect(struct es_bound *b, struct es_client *c, uint64_t lag, const char *limit) {
    atomic_fetch_add(&b->counters->clients_lagged, 1);
    es_log_limited(&b->log_lagging, uv_now(b->loop),
                   "client %llu fell %.1f MiB behind (%s); disconnecting it",
                   (unsigned long long)es_client_id(c), (double)lag / (1 << 20), limit);
    char why[256];
    snprintf(why, sizeof why,
             "the program disconnected this slow client: it fell %.1f MiB behind (%s)",
             (double)lag / (1 << 20), limit);
    es_cut_client(c, why);
}

/* Skip chunks for `c` down to `target` bytes; returns how many. */
static uint64_t skip(struct es_bound *b, struct es_client *c, uint64_t target) {
    /* A lossless client is never skipped: the program waits for it. */
    assert(!es_client_is(c, ES_CLIENT_LOSSLESS));
    struct es_skipped k = es_client_drop(c, target);
    if (k.chunks == 0)
        return 0;
    /* The RTS refills what was skipped with chunks of the same size, soon:
     * the pool keeps those buffers for them. The loans end below half of
     * what remains after the skip: a client still stalled keeps the library
     * above it; one that caught up or left takes it below. */
    es_pool_lend_until(k.reusable, es_fanout_held(b->fan) / 2);
    atomic_fetch_add(&b->counters->chunks_dropped, k.chunks);
    atomic_fetch_add(&b->counters->bytes_dropped, k.bytes);
    es_log_limited(&b->log_dropping, uv_now(b->loop),
                   "client %llu is too slow: skipping %.1f MiB of chunks for it (it gets a notice "
                   "in its stream)",
                   (unsigned long long)es_client_id(c), (double)k.bytes / (1 << 20));
    return k.chunks;
}

/* The disconnect policy's judge. A client past its limit is disconnected
 * once it has stayed past it for its stall time, so that a reader that
 * takes in a burst within that time keeps its stream, while one that
 * reads nothing, or more slowly than the program writes, is cut. A judge
 * that fires more than ES_BOUND_LATE_MS late found the loop thread held
 * up: what the clients read meanwhile is in write completions not yet run
 * (timers run before them), so it looks again once the loop has run that
 * long. */
#define ES_BOUND_LATE_MS 100

static void on_judge(uv_timer_t *t);

/* Whether `c` is past its own limit (`*lag` behind) and subject to it:
 * the intake's look and the judge's ask the same. */
static bool past_limit(const struct es_bound *b, const struct es_client *c, uint64_t *lag) {
    if (es_client_is_any(c, ES_CLIENT_CLOSING | ES_CLIENT_LOSSLESS))
        return false;
    *lag = es_client_droppable(c);
    return *lag > b->client_limit;
}

/* Have the judge look at `at` (loop clock), unless it will sooner. */
static void judge_by(struct es_bound *b, uint64_t at) {
    if (!b->open || (b->armed && b->judge_at <= at))
        return;
    uint64_t now = uv_now(b->loop);
    b->armed = true;
    b->judge_at = at > now ? at : now + 1; /* never due in the pass that armed it */
    uv_timer_start(&b->judge, on_judge, b->judge_at - now, 0);
}

/* Start the time of a client now past its limit. */
static void note_over(struct es_bound *b, struct es_client *c) {
    if (es_client_over_since(c) != 0)
        return;
    uint64_t now = uv_now(b->loop);
    es_client_set_over_since(c, now);
    judge_by(b, now + es_client_stall_ms(c));
}

static void disconnect_over(struct es_bound *b, struct es_client *c, uint64_t lag) {
    char why[64];
    snprintf(why, sizeof why, "limit %.1f MiB", (double)b->client_limit / (1 << 20));
    disconnect(b, c, lag, why);
}

static void judge_all(struct es_bound *b, uint64_t now) {
    uint64_t soonest = UINT64_MAX;
    es_fanout_each(b->fan, c, next) {
        uint64_t since = es_client_over_since(c), lag;
        if (since == 0)
            continue;
        uint64_t due = since + es_client_stall_ms(c);
        if (!past_limit(b, c, &lag)) {
            es_client_set_over_since(c, 0);
        } else if (now < due) {
            soonest = due < soonest ? due : soonest;
        } else {
            es_client_set_over_since(c, 0);
            disconnect_over(b, c, lag);
        }
    }
    if (soonest != UINT64_MAX)
        judge_by(b, soonest);
}

static void on_judge(uv_timer_t *t) {
    struct es_bound *b = t->data;
    assert(b->open && b->armed); /* it fires only when armed */
    b->armed = false;
    uint64_t now = uv_now(b->loop);
    if (!b->deferred && now > b->judge_at + ES_BOUND_LATE_MS) {
        b->deferred = true;
        judge_by(b, now + ES_BOUND_LATE_MS);
        return;
    }
    b->deferred = false;
    judge_all(b, now);
}

void es_bound_open(struct es_bound *b) {
    assert(!b->open);
    uv_timer_init(b->loop, &b->judge); /* cannot fail */
    b->judge.data = b;
    b->open = true;
}

void es_bound_close(struct es_bound *b, uv_close_cb cb) {
    if (!b->open)
        return;
    b->open = b->armed = false;
    uv_close((uv_handle_t *)&b->judge, cb);
}

void es_bound_check_client(struct es_bound *b, struct es_client *c) {
    uint64_t lag;
    if (!past_limit(b, c, &lag)) {
        es_client_set_over_since(c, 0);
        return;
    }
    if (b->drop_slow) {
        /* Down to half the limit, so that a client that keeps falling
         * behind gets a notice per several MiB, not one per chunk. */
        skip(b, c, b->client_limit / 2);
    } else {
        note_over(b, c);
    }
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

static void close_stuck(struct es_bound *b) {
    size_t held = es_fanout_held_for_clients(b->fan);
    uint64_t now = uv_now(b->loop);
    while (held > b->max_buffer + ES_PINNED_SLACK) {
        uint64_t oldest = UINT64_MAX, freed = 0, since, unique;
        struct es_client *victim = NULL;
        es_fanout_each(b->fan, c, next) {
            if (es_client_stuck(c, now, &since, &unique) && since < oldest) {
                oldest = since;
                freed = unique;
                victim = c;
            }
        }
        if (victim == NULL)
            return;
        disconnect(b, victim, es_fanout_end_offset(b->fan) - oldest,
                   "it stopped reading, and the unsent data of clients like it exceeds the "
                   "buffer bound");
        held -= freed < held ? freed : held;
    }
}

/* Chunks in a write in flight cannot be released, so a stalled client pins
 * at most one write's worth (ES_CLIENT_MAX_WRITE, or one chunk). */
void es_bound_enforce(struct es_bound *b) {
    while (es_fanout_held_for_clients(b->fan) > b->max_buffer) {
        struct es_client *worst = NULL;
        uint64_t worst_lag = 0;
        es_fanout_each(b->fan, c, next) {
            uint64_t lag = es_client_droppable(c);
            if (!(es_client_is_any(c, ES_CLIENT_CLOSING | ES_CLIENT_LOSSLESS)) && lag > worst_lag) {
                worst = c;
                worst_lag = lag;
            }
        }
        if (worst == NULL) {
            close_stuck(b);
            return;
        }
        if (!b->drop_slow) {
            /* Its memory comes back when the close completes; look again
             * at the next wake-up rather than disconnect everyone now. */
            disconnect(b, worst, worst_lag, "the global buffer limit");
            return;
        }
        uint64_t excess = es_fanout_held_for_clients(b->fan) - b->max_buffer;
        if (skip(b, worst, worst_lag > excess ? worst_lag - excess : 0) == 0)
            return;
    }
}

/* Log a gap at the hand-off, by its cause. */
static void log_gap(struct es_bound *b, const struct es_chunk *c) {
    uint64_t now = uv_now(b->loop);
    uint64_t full = c->gap_chunks - c->gap_oom_chunks;
    const char *then = b->drop_slow ? "each gets a drop notice where the gap is"
                                    : "clients connected are disconnected";
    if (full > 0)
        es_log_limited(&b->log_handoff, now,
                       "the library's threads fell behind the program: dropped %llu chunks "
                       "(%.1f MiB) before they reached any client (%s)",
                       (unsigned long long)full,
                       (double)(c->gap_bytes - c->gap_oom_bytes) / (1 << 20), then);
    if (c->gap_oom_chunks > 0)
        es_log_limited(&b->log_oom, now,
                       "out of memory: lost %llu chunks (%.1f MiB) of the eventlog before they "
                       "reached any client (%s)",
                       (unsigned long long)c->gap_oom_chunks, (double)c->gap_oom_bytes / (1 << 20),
                       then);
}

/* A drop notice for every client, for the chunks of this gap and of any
 * earlier one whose notice found no memory; out of memory again, it is
 * tried before the next chunk. */
static void notice_all(struct es_bound *b, const struct es_chunk *c) {
    struct es_fanout *f = b->fan;
    b->unnoticed_chunks += c->gap_chunks;
    b->unnoticed_bytes += c->gap_bytes;
    if (c->gap_chunks > 0)
        b->unnoticed_time = c->gap_time;
    struct es_chunk *notice = es_notice_drop(es_fanout_header(f), b->unnoticed_chunks,
                                             b->unnoticed_bytes, b->unnoticed_time);
    if (notice == NULL)
        return;
    b->unnoticed_chunks = b->unnoticed_bytes = b->unnoticed_time = 0;
    es_fanout_append(f, notice);
}

void es_bound_handoff_gap(struct es_bound *b, const struct es_chunk *c) {
    struct es_fanout *f = b->fan;
    if (c->gap_chunks > 0) {
        log_gap(b, c);
        unsigned n = es_fanout_nclients(f), missed = n > 0 ? n : es_fanout_retaining(f) ? 1 : 0;
        atomic_fetch_add(&b->counters->chunks_dropped, c->gap_chunks * missed);
        atomic_fetch_add(&b->counters->bytes_dropped, c->gap_bytes * missed);
    }
    if (!b->drop_slow) {
        es_fanout_each(f, cl, next) {
            if (c->gap_chunks > 0 && !es_client_is(cl, ES_CLIENT_CLOSING))
                disconnect(b, cl, c->gap_bytes, "chunks dropped at the hand-off");
        }
        if (!es_fanout_retaining(f))
            return;
    }
    notice_all(b, c);
}
