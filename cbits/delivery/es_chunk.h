/* SPDX-License-Identifier: BSD-3-Clause */
/* A chunk: bytes the RTS handed over in one writeEventLog call (or one the
 * library made: a definitions block, a drop notice), with what the
 * library's threads learn about it on the way to the clients. Chunks are
 * made and freed by the pool (es_pool.h: es_pool_chunk_new, es_pool_chunk_free); the
 * chunk store (es_store.h) counts their holders. */
#ifndef ES_CHUNK_H
#define ES_CHUNK_H

#include "base/es_queue.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct es_header;

/* Where one event lies in a chunk. */
struct es_span {
    size_t offset, len;
};

struct es_chunk {
    /* A chunk is in at most one list at a time, each owned by one module,
     * in the order it travels: the inbox's (es_inbox.h: handed over by an
     * RTS thread), the walker's (es_walker.h: walked, for the loop
     * thread), the chunk store's (es_store.h: sent to clients); once freed,
     * the pool's free list (es_pool.c). In none while a thread holds it
     * between two of them, or the library made it for a client alone (a
     * header, a notice). */
    struct es_queue_node link;
    uint32_t refs; /* holders */
    uint32_t flags;
    uint64_t end_offset; /* stream offset just past this chunk (header excluded) */
    /* The chunk's definition events, found by the walker thread for the
     * loop thread (es_walker.h); freed with the chunk. */
    struct es_span *defs;
    size_t ndefs, defs_cap;
    /* A header chunk's parse, made by the walker thread for the loop thread
     * (es_walker.h); NULL when it did not parse. Freed with the chunk. */
    struct es_header *header;
    uint64_t arrived; /* when the RTS handed it over (uv_hrtime), set by the inbox */
    /* Chunks the hand-off dropped right before this one (es_inbox.h), their
     * bytes, and the end time of the last of them; 0 when none. Of them,
     * those lost because memory ran out (the rest: the hand-off was full). */
    uint64_t gap_chunks, gap_bytes, gap_time;
    uint64_t gap_oom_chunks, gap_oom_bytes;
    size_t len;
    size_t cap; /* bytes allocated for data (a reused buffer may be larger) */
    uint8_t data[];
};

/* The size of each capability's eventlog buffer in GHC 9.0-9.12, so the
 * size of most chunks once a program is busy. */
#define ES_RTS_BUFFER ((size_t)2 << 20)

#define ES_CHUNK_END       1u /* carries the end-of-data marker */
#define ES_CHUNK_HEADER    4u /* is an eventlog header */
#define ES_CHUNK_DEFS_LOST 8u /* defs is incomplete: out of memory while walking */
/* A notice the library made (es_notice.h). One made for every client (a
 * wait notice) is not lost by a client that skips the chunks around it:
 * the skip keeps it for that client (es_client_drop). */
#define ES_CHUNK_NOTICE 16u

/* Stream offset at which chunk `c` starts. */
static inline uint64_t es_chunk_start(const struct es_chunk *c) {
    return c->end_offset - c->len;
}

/* The chunk whose `link` is `n`, or NULL for NULL. */
static inline struct es_chunk *es_chunk_of(struct es_queue_node *n) {
    return n != NULL ? ES_QUEUE_DATA(n, struct es_chunk, link) : NULL;
}

#endif
