/* SPDX-License-Identifier: BSD-3-Clause */
/* The memory bound and the slow-client policy, in one place: how far one
 * client may fall behind (the client limit), how much the library holds
 * for all of them (the global bound), and what happens past either: the
 * client skips chunks and gets a drop notice (the drop policy, default) or
 * is disconnected (the disconnect policy). A skip is seen in the stream
 * and mends itself; a disconnection is final, so a client is disconnected
 * for its own limit only once it has stayed past it for its stall time
 * (half the linger, es_client_stall_ms), judged by a timer here, not as
 * chunks arrive: chunks come many at once after the loop thread was held
 * up (a loaded machine), and that burst, past the limit of every client
 * at once, the reading ones too, is no client's fault. The global bound
 * acts at once. Lossless clients are exempt:
 * the program waits for them instead (es_wait.h), so the library may hold
 * up to their limit beyond the bound. Clients that stopped reading
 * with a write in flight, and chunks lost at the hand-off before any client
 * saw them, are handled here too. The flight recorder's window
 * (es_window.h) is not counted against the bound: its chunks stay
 * whatever clients do. Loop thread only. */
#ifndef ES_BOUND_H
#define ES_BOUND_H

#include "delivery/es_chunk.h"
#include "delivery/es_client.h"
#include "base/es_counters.h"
#include "delivery/es_fanout.h"
#include "base/es_log.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct es_bound {
    size_t max_buffer;   /* bytes held for all clients at most */
    size_t client_limit; /* unsent bytes one client may fall behind */
    bool drop_slow;      /* past a limit: skip chunks (true) or disconnect */
    uv_loop_t *loop;
    struct es_fanout *fan;
    struct es_counters *counters;
    /* Causes that repeat per client or per chunk, logged a few lines a
     * second at most however many clients misbehave (es_log.h). */
    struct es_log_limit log_dropping; /* chunks skipped for a slow client */
    struct es_log_limit log_lagging;  /* slow clients disconnected */
    struct es_log_limit log_handoff;  /* chunks dropped at the hand-off */
    struct es_log_limit log_oom;      /* chunks lost at the hand-off for memory */
    /* Chunks no client got whose drop notice found no memory yet: it is
     * made before the next chunk instead (es_bound_handoff_gap). */
    uint64_t unnoticed_chunks, unnoticed_bytes, unnoticed_time;
    /* The disconnect policy's judge: due at judge_at (loop clock) while a
     * client is past its limit; `deferred` once it found the loop late. */
    uv_timer_t judge;
    uint64_t judge_at;
    bool open, armed, deferred;
};

void es_bound_init(struct es_bound *b, size_t max_buffer, size_t client_limit, bool drop_slow,
                   uv_loop_t *loop, struct es_fanout *fan, struct es_counters *counters);

/* The judge's timer, on the loop `b` was made for (once it runs), and its
 * close with the server's other handles. */
void es_bound_open(struct es_bound *b);
void es_bound_close(struct es_bound *b, uv_close_cb cb);

/* The client limit: past it, the client skips chunks down to half the
 * limit at once, or is disconnected once it has stayed past it for its
 * stall time (the judge looks then). */
void es_bound_check_client(struct es_bound *b, struct es_client *c);

/* The global bound: while the library holds more, the client furthest
 * behind skips chunks (or is disconnected), then the next; past the bound
 * plus what unfinished writes may pin, stuck clients are disconnected. */
void es_bound_enforce(struct es_bound *b);

/* `c` arrives right after chunks the hand-off dropped or lost for memory
 * (es_inbox.h, which counts them): every client missed them. They are
 * logged; under the drop policy each client gets a notice where the
 * gap is; under the disconnect policy, which promises no gap, each is
 * disconnected. Call before es_fanout_ingest(c), for a chunk with a gap or
 * while es_bound_notice_due (a notice that found no memory before). */
void es_bound_handoff_gap(struct es_bound *b, const struct es_chunk *c);

/* Whether a drop notice for every client is still to be made. */
static inline bool es_bound_notice_due(const struct es_bound *b) {
    return b->unnoticed_chunks > 0;
}

/* Log the summaries of repeating causes whose window has ended (all of
 * them with `force`). */
void es_bound_flush_logs(struct es_bound *b, uint64_t now_ms, bool force);

#endif
