/* SPDX-License-Identifier: BSD-3-Clause */
/* The hand-off from RTS threads to the walker thread. writeEventLog copies a
 * chunk, appends it here under a short lock and signals the walker; it
 * never waits for a client or for the walker. The walker takes everything
 * pending at once: the batch moves from the inbox's queue to the walker's
 * in one step under the lock, and each chunk is then in the walker's
 * hands alone (a chunk is in one list at a time, es_chunk.h).
 *
 * A chunk that finds no memory for its copy is lost like one dropped for
 * the limit below: counted, and the next chunk accepted carries the gap
 * (with how much of it memory took). The header and a chunk that may end
 * the stream are not lost for memory while the reserve lasts: one buffer
 * of an RTS buffer's size, allocated at the start (untouched, it costs no
 * memory) and again by the walker after it was used (es_inbox_refill).
 *
 * What was handed over but not yet taken in by the loop thread (here, in
 * the walker, between walker and loop) is bounded too: should those threads
 * fall behind or get stuck, RTS threads would otherwise queue everything
 * the program writes. Past `limit`, whole chunks are dropped here (never
 * the header or a chunk that may end the stream), counted, and the next
 * chunk that is accepted carries the gap (es_chunk.gap_*), so that the
 * loop thread puts a drop notice where it is in every client's stream. */
#ifndef ES_INBOX_H
#define ES_INBOX_H

#include "es_chunk.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct es_inbox {
    uv_mutex_t lock;
    uv_cond_t ready;                  /* signalled when chunks arrive or the inbox closes */
    struct es_queue pending;          /* chunks handed over, oldest first (es_chunk.link) */
    bool open;                        /* false once the server stops accepting chunks */
    uint64_t chunks_in, bytes_in;     /* accepted from the RTS */
    uint64_t lost_chunks, lost_bytes; /* refused: closed */
    uint64_t oom_chunks, oom_bytes;   /* lost: no memory for the copy */
    struct es_chunk *reserve;         /* for a chunk that must not be lost, or NULL */
    size_t limit;                     /* bytes in flight before chunks are dropped (0: none) */
    atomic_size_t in_flight;          /* pushed, not yet released by the loop */
    uint64_t gap_chunks, gap_bytes, gap_time; /* dropped since the last accepted chunk */
    uint64_t gap_oom_chunks, gap_oom_bytes;   /* ... of them for memory */
    uint64_t dropped_chunks, dropped_bytes;   /* dropped for the limit, in all */
};

/* `limit`: bytes in flight past which chunks are dropped; 0 for none. */
int es_inbox_init(struct es_inbox *in, size_t limit);
void es_inbox_destroy(struct es_inbox *in);

/* Copy `len` bytes into a new pending chunk. Any thread. Returns false when
 * the chunk was lost (dropped for the limit, out of memory or the inbox is
 * closed); the loss is counted, and a loss while open is a gap the next
 * accepted chunk carries. With `may_drop` false the limit does not
 * apply: a lossless client is connected (es_wait.h), and the caller has
 * waited for room instead. */
bool es_inbox_push(struct es_inbox *in, const void *buf, size_t len, bool may_drop);

/* The loop thread has taken in `bytes` of the chunks it took (their
 * original lengths): they no longer count as in flight. */
void es_inbox_release(struct es_inbox *in, size_t bytes);

/* Allocate the reserve again if it was used; false while memory is still
 * out. The walker thread, after a chunk. */
bool es_inbox_refill(struct es_inbox *in);

/* Chunks and bytes lost for memory so far. Any thread. */
void es_inbox_oom(struct es_inbox *in, uint64_t *chunks, uint64_t *bytes);

/* Chunks and bytes dropped for the limit so far. Any thread. */
void es_inbox_dropped(struct es_inbox *in, uint64_t *chunks, uint64_t *bytes);

/* Bytes accepted from the RTS so far. Any thread. */
uint64_t es_inbox_bytes_in(struct es_inbox *in);

/* Bytes pushed and not yet released by the loop: the counter itself, for
 * es_lossless_init, and its value. Any thread. */
static inline const atomic_size_t *es_inbox_in_flight_counter(const struct es_inbox *in) {
    return &in->in_flight;
}
static inline size_t es_inbox_in_flight(const struct es_inbox *in) {
    return atomic_load(&in->in_flight);
}

/* Whether no chunk is waiting to be taken. Any thread. */
bool es_inbox_empty(struct es_inbox *in);

/* Wait for pending chunks and move them all to the end of `out`, oldest
 * first. Returns false (moving nothing) once the inbox is closed and
 * empty. One consumer thread. */
bool es_inbox_wait(struct es_inbox *in, struct es_queue *out);

/* Refuse further chunks and wake the consumer, which still gets the chunks
 * pushed before. */
void es_inbox_close(struct es_inbox *in);

#endif
