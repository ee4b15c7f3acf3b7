/* SPDX-License-Identifier: BSD-3-Clause */
/* Start-up ("definition") events kept for clients that join late.
 *
 * The RTS posts capability sets, the RTS identifier, program arguments, heap
 * profile set-up and similar events once, at start. A client that joins
 * after those chunks have gone would get a stream it cannot interpret, so
 * as chunks pass through, the loop thread copies every definition event
 * here, in arrival order. A late joiner receives them, after the header, as
 * one synthesised block in the global buffer (capability 0xffff), with their
 * original timestamps. Loop thread only. */
#ifndef ES_DEFS_H
#define ES_DEFS_H

#include "es_store.h"
#include "format/es_events.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* After the chunk ending at stream offset `end_offset`, `len` bytes of
 * definitions had been kept, the last with timestamp `last_time`. */
struct es_defs_mark {
    uint64_t end_offset;
    size_t len;
    uint64_t last_time;
};

struct es_defs {
    uint8_t *buf; /* the kept events, whole, back to back */
    size_t len, cap;
    size_t limit; /* bytes; past it nothing more is kept */
    bool full;    /* the limit was reached (logged once by the caller) */
    bool oom;     /* ... because memory ran out */
    uint64_t first_time;
    struct es_defs_mark *marks;
    size_t nmarks, marks_cap;
    struct es_chunk *block; /* cached block of all kept events, or NULL */
    /* es_defs_is_definition as a table, for the walker thread, which finds
     * the definition events of each chunk (es_walker.h); read-only after
     * es_defs_init. */
    bool types[ES_MAX_EVENT_TYPES];
};

/* Bytes of the definitions kept. */
static inline size_t es_defs_held(const struct es_defs *d) {
    return d->len;
}

/* The kept definitions' limit in bytes. */
static inline size_t es_defs_limit(const struct es_defs *d) {
    return d->limit;
}

/* The definition event types, ES_MAX_EVENT_TYPES flags (for the walker). */
static inline const bool *es_defs_types(const struct es_defs *d) {
    return d->types;
}

void es_defs_init(struct es_defs *d, size_t limit);
void es_defs_destroy(struct es_defs *d, struct es_store *st);

/* Whether events of this type are kept. */
bool es_defs_is_definition(uint16_t type);

/* Keep the definition events the walker found in chunk `c` (its `defs`
 * spans, which this frees). Returns 0, -ENOSPC the first time the limit
 * stops one (later ones are dropped silently), or -ENOMEM when the walker
 * could not note them all, or the first time memory ran out keeping
 * one. */
int es_defs_take_chunk(struct es_defs *d, struct es_chunk *c);

/* Keep the definition event `ev` from a chunk; returns false when the limit
 * stopped it. */
bool es_defs_keep(struct es_defs *d, const struct es_event *ev, const uint8_t *chunk);

/* Mark the end of a chunk at stream offset `end_offset` (call after keeping
 * its events). */
void es_defs_end_chunk(struct es_defs *d, uint64_t end_offset);

/* A reference to a block holding the definitions kept from chunks that end
 * at or before `start_offset` (those a client starting there will not get),
 * or NULL when there are none. The block is accounted in `st`. */
struct es_chunk *es_defs_block(struct es_defs *d, struct es_store *st, uint64_t start_offset);

#endif
