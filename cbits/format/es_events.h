/* SPDX-License-Identifier: BSD-3-Clause */
/* Walker over the events of an eventlog chunk written after the header:
 * a block marker followed by whole events, or GHC 9.0's bare end marker.
 * Sizes come from the parsed header, because they differ between GHC
 * versions (a fixed table would misparse newer or older streams). */
#ifndef ES_EVENTS_H
#define ES_EVENTS_H

#include "es_header.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct es_event {
    uint16_t type;
    uint64_t time;
    size_t offset; /* of the event's first byte in the chunk */
    size_t len;    /* of the whole event, type and time included */
    const uint8_t *payload;
    size_t payload_len;
};

struct es_event_iter {
    const struct es_header *hdr;
    const uint8_t *buf;
    size_t len;
    size_t pos;
};

enum {
    ES_WALK_EVENT = 1, /* *ev holds the next event */
    ES_WALK_DONE = 0,  /* the chunk ended on an event boundary */
    ES_WALK_END = 2,   /* the end-of-data marker (FF FF) was reached */
};

void es_events_iter_init(struct es_event_iter *it, const struct es_header *hdr, const uint8_t *buf,
                         size_t len);

/* The next event. Returns ES_WALK_EVENT, ES_WALK_DONE, ES_WALK_END, or
 * -EINVAL for a truncated event or an undeclared event type (it->pos then
 * stays at the offending event). */
int es_events_next(struct es_event_iter *it, struct es_event *ev);

/* GHC's postIPE (rts/eventlog/EventLog.c, GHC 9.4 and later, seen on 9.6)
 * declares an IPE event one byte longer than it writes: it counts a ':'
 * between the source file and span plus a NUL after the file, and writes
 * only the ':'. Such an event's six strings (after its 8-byte address) end
 * one byte before its declared end, which is the first byte of the next
 * event: its true payload length is that one byte less. A correct event's
 * last string ends at its declared end. ghc-events reads both. Returns the
 * true payload length, judged from the `avail` bytes there (at most `size`;
 * the declared `size` when it cannot tell yet). */
static inline size_t es_events_ipe_len(const uint8_t *payload, size_t size, size_t avail) {
    /* `avail` (at most `size`) bytes of the payload are there to look at. */
    size_t pos = 8;
    for (int n = 0; n < 6; n++) {
        const uint8_t *z = pos < avail ? memchr(payload + pos, 0, avail - pos) : NULL;
        if (z == NULL)
            return size;
        pos = (size_t)(z - payload) + 1;
    }
    return pos + 1 == size ? pos : size;
}

/* The extent of the event at `p`, with `left` (at least 2) bytes
 * available: its head (type, time, and the length of a variable-size
 * event) and payload sizes. Returns 0, -EAGAIN when the bytes end inside
 * it, or -EINVAL for a type the header did not declare. Shared by every
 * walker; inline, because the walker thread runs it for every event the RTS
 * writes. */
static inline int es_events_extent(const struct es_header *hdr, const uint8_t *p, size_t left,
                                   size_t *head, size_t *size) {
    uint16_t type = es_be16(p);
    if (type >= ES_MAX_EVENT_TYPES || hdr->size[type] == ES_SIZE_UNDECLARED)
        return -EINVAL;
    if (left < 10)
        return -EAGAIN;
    *head = 10;
    *size = hdr->size[type];
    if (*size == ES_SIZE_VARIABLE) {
        if (left < 12)
            return -EAGAIN;
        *size = es_be16(p + 10);
        *head = 12;
        if (type == ES_EVENT_IPE && left - *head + 1 >= *size) {
            size_t avail = left - *head < *size ? left - *head : *size;
            *size = es_events_ipe_len(p + 12, *size, avail);
        }
    }
    return left - *head < *size ? -EAGAIN : 0;
}

/* The capability number of blocks from the RTS's global buffer. */
#define ES_GLOBAL_CAP 0xffff

/* What a chunk is, as far as streaming is concerned. */
struct es_chunk_info {
    bool is_block;      /* starts with a block marker */
    uint16_t cap;       /* the block's capability, or ES_GLOBAL_CAP */
    uint32_t block_len; /* block size from the marker, marker included */
    size_t events;      /* events in the chunk, block marker included (0 unless counted) */
    bool has_end;       /* the end-of-data marker is in the chunk */
};

/* Called for the events of a chunk that a walk is asked to report. */
typedef void (*es_event_fn)(const struct es_event *ev, void *ctx);

/* Walk a whole chunk, calling `fn` for each event whose type is set in
 * `want` (an array of ES_MAX_EVENT_TYPES flags; NULL: none), and count its
 * events. Returns 0, -EINVAL when it does not walk cleanly to its last byte
 * (events before the fault have been reported), or -ENOMEM when there is
 * no memory for the plan (below) it builds for this one walk; a thread
 * that walks many chunks of one stream keeps a plan instead. */
int es_events_inspect(const struct es_header *hdr, const uint8_t *buf, size_t len,
                      struct es_chunk_info *info, const bool *want, es_event_fn fn, void *ctx);

/* What a walk needs to know about each event type, in one table, so that
 * the common event (a type that is declared and not wanted) costs one load
 * and a few compares: the walker thread runs this over every byte the RTS
 * writes (BENCHMARKS.md, section 1c). `step` is the whole event's length
 * for a fixed size, ES_STEP_VARIABLE for a variable size, or 0 for a type
 * that needs the careful path (wanted, undeclared, or larger than a step
 * can say); it has a row for every type two bytes can name, so that no
 * event's type is tested against a bound. The rows from
 * ES_MAX_EVENT_TYPES on are 0 and es_events_plan_init leaves them alone:
 * a plan must start zeroed (calloc, or static), and 128 KiB does not
 * belong on a stack; calloc's fresh pages are neither cleared nor
 * resident. The plan points at the header and the `want` table, which
 * must outlive it. `count`: fill es_chunk_info.events, an instruction an
 * event that the walker thread, which needs no count, does without. */
#define ES_STEP_VARIABLE 0xffffu
struct es_walk_plan {
    const struct es_header *hdr;
    const bool *want; /* NULL: none */
    bool count;       /* es_chunk_info.events wanted */
    uint16_t step[UINT16_MAX + 1];
};

/* Make `plan` (zeroed when first made, see above) for `hdr` and `want`;
 * a plan may be made again for a later header. */
void es_events_plan_init(struct es_walk_plan *plan, const struct es_header *hdr, const bool *want,
                         bool count);

/* es_events_inspect with a plan made for the chunk's header and `want`. */
int es_events_walk(const struct es_walk_plan *plan, const uint8_t *buf, size_t len,
                   struct es_chunk_info *info, es_event_fn fn, void *ctx);

#endif
