/* SPDX-License-Identifier: BSD-3-Clause */
/* `record --trigger`'s memory of the stream: the header, the most recent
 * whole blocks (at least --before of program time, at most a number of
 * bytes), and the definition events of the blocks it let go, so that what
 * it writes when a condition holds (client/flight/shot.h) is an eventlog
 * that reads as a whole: header, definitions, blocks. Fed the stream's
 * bytes with the reader's block markers (which come before their bytes),
 * in pieces of any size. Why a ring of the command's own, beside the
 * program's window: it works with any program (no GHC_EVENTLOG_RETAIN
 * needed) and costs the program nothing more than one client, and a
 * firing needs no new connection; the program's window, asked for at the
 * connection, fills it at the start. The bytes no whole block holds yet
 * are bounded as every reader of untrusted blocks bounds them
 * (es_blocks_past_max, client/source/blocks.h): past it, the stream is
 * refused, whatever a block marker claims. Pure (no I/O); the watcher's
 * loop thread. */
#ifndef ES_RING_H
#define ES_RING_H

#include "base/es_bytes.h"
#include "format/es_events.h"
#include "format/es_header.h"
#include "source/blocks.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a block costs beside its bytes (its slot, the allocator's
 * header), counted against max_bytes: a GHC 9.2+ stream is mostly the
 * 24-byte empty blocks of its flushes. */
#define ES_RING_PER_BLOCK 64

/* Definition events kept from blocks let go, at most. */
#define ES_RING_DEFS_MAX ((size_t)16 << 20)

struct es_ring_block {
    uint8_t *data;
    size_t len;
    uint64_t offset; /* in the stream */
    uint64_t start_time, end_time;
};

struct es_ring {
    size_t max_bytes;
    uint8_t *header;
    size_t header_len, header_got;
    const struct es_header *hdr; /* the stream's parse, for walking blocks */
    /* Whole blocks, oldest first: a circular array. */
    struct es_ring_block *b;
    size_t cap, first, n;
    size_t bytes;             /* the blocks' bytes and ES_RING_PER_BLOCK each */
    uint64_t let_go_for_size; /* blocks let go before their time: past max_bytes */
    /* Blocks whose markers came and whose bytes are still arriving (their
     * data is not allocated yet). */
    struct es_ring_block *pend;
    size_t npend, pend_cap;
    /* The stream's bytes from stage_off on that no whole block holds yet:
     * the block being received, and what comes before its marker is read
     * (a marker split across two reads is reported with the second). */
    struct es_bytes stage;
    uint64_t stage_off;
    uint64_t claimed; /* where the last block registered ends */
    /* The staged bytes grew past the bound (es_blocks_past_max): the
     * stream is refused from then on; where that block began, and what
     * its marker claimed (0: no marker). */
    bool too_long;
    uint64_t long_at, long_claims;
    /* Definitions of the blocks let go, back to back, and their times. */
    uint8_t *defs;
    size_t defs_len, defs_cap;
    uint64_t defs_first, defs_last;
};

void es_ring_init(struct es_ring *r, size_t max_bytes);
void es_ring_destroy(struct es_ring *r);

/* The stream's header has been read: `hdr` (which must outlive the ring)
 * and its length; its bytes come with the first es_ring_bytes. */
void es_ring_header(struct es_ring *r, const struct es_header *hdr, size_t len);

/* A block marker at stream offset `offset` (the reader's event). Returns
 * 0 or -ENOMEM. */
int es_ring_marker(struct es_ring *r, const struct es_event *ev, uint64_t offset);

/* Called for each block as it becomes whole, after it joined the ring. */
typedef void es_ring_block_fn(const struct es_ring_block *b, void *ctx);

/* The stream's bytes from `offset` on (each call's bytes follow the
 * last's). Returns 0, -ENOMEM, or -EMSGSIZE once the bytes no whole block
 * holds have grown past the bound of client/source/blocks.h (a marker that
 * claims 4 GiB, events that no marker claims): they are let go, and so is
 * everything after; the blocks whole before stay. */
int es_ring_bytes(struct es_ring *r, uint64_t offset, const uint8_t *data, size_t n,
                  es_ring_block_fn *fn, void *ctx);

/* After -EMSGSIZE: what was refused and why, for people, into `out`. */
void es_ring_too_long_why(const struct es_ring *r, char *out, size_t size);

/* Let go of the oldest blocks that ended before `time` (program time),
 * and of any past max_bytes, keeping their definitions. */
void es_ring_trim(struct es_ring *r, uint64_t time);

/* Whether the header's bytes have all come (es_ring_bytes): a shot can
 * begin. The reader reports a read's events before its bytes, so a
 * condition can hold in the read that brings the header. */
static inline bool es_ring_has_header(const struct es_ring *r) {
    return r->header_len > 0 && r->header_got >= r->header_len;
}

/* The i-th block, oldest first (i < r->n). */
static inline const struct es_ring_block *es_ring_at(const struct es_ring *r, size_t i) {
    return &r->b[(r->first + i) % r->cap];
}

/* The definitions of the blocks let go as one block of the global buffer
 * (malloc'd, *len its size), or NULL when there are none (or no memory). */
uint8_t *es_ring_defs_block(const struct es_ring *r, size_t *len);

#endif
