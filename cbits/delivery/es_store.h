/* SPDX-License-Identifier: BSD-3-Clause */
/* The chunk store: every chunk the RTS wrote, held once and shared by all
 * clients (no per-client copies).
 *
 * Chunks form a list from oldest to newest (an es_queue through each
 * chunk's `link`; a chunk is in it from es_store_append until its last
 * holder lets go, and walkers step along it with es_store_next). Each chunk counts
 * its holders: every connected client that has yet to send it, every write
 * in flight that contains it, the store itself while it keeps chunks for a
 * first client that has not connected yet, and the flight recorder's
 * window (es_window.h), which keeps the newest ones at all times. When the count reaches
 * zero the chunk is unlinked and freed at once, wherever it is in the list,
 * so skipping chunks for one slow client frees exactly what no other client
 * still needs, even while that client's own write is stuck.
 *
 * Chunks outside the list (the header, synthesised blocks) use the same
 * counting. Loop thread only. */
#ifndef ES_STORE_H
#define ES_STORE_H

#include "es_chunk.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct es_store {
    struct es_queue chunks;  /* the list, oldest first (es_chunk.link) */
    struct es_chunk *header; /* the current header (a reference), or NULL */
    uint64_t end_offset;     /* stream offset after the newest chunk */
    uint64_t last_time;      /* end time of the newest block appended */
    bool ended;              /* a chunk with the end-of-data marker came */
    bool retaining;          /* no client has joined yet: keep chunks */
    size_t retain_limit;     /* bytes of chunks kept for the first client */
    struct es_chunk *kept;   /* the oldest of them (the list may hold older
                              * ones that the window keeps) */
    size_t kept_bytes;
    size_t linked_bytes; /* bytes of chunks in the list */
    size_t bytes_held;   /* bytes of all live chunks of this store */
    size_t peak_bytes;
    uint64_t retain_dropped_chunks; /* dropped before the first client joined */
    uint64_t retain_dropped_bytes;
};

/* Whether no client has joined yet: chunks are kept for the first. */
static inline bool es_store_retaining(const struct es_store *s) {
    return s->retaining;
}

/* The stream offset after the newest chunk. */
static inline uint64_t es_store_end_offset(const struct es_store *s) {
    return s->end_offset;
}

/* The end time of the newest block appended (what a notice is stamped
 * with), 0 before any. */
static inline uint64_t es_store_last_time(const struct es_store *s) {
    return s->last_time;
}

/* Whether the stream's end marker has been appended: nothing may follow
 * it. */
static inline bool es_store_ended(const struct es_store *s) {
    return s->ended;
}

/* The current header (the store's reference: es_store_ref to keep it), or
 * NULL. */
static inline struct es_chunk *es_store_header(const struct es_store *s) {
    return s->header;
}

/* The oldest and the newest chunk in the list, or NULL. */
static inline struct es_chunk *es_store_oldest(const struct es_store *s) {
    return s->chunks.head.next != &s->chunks.head ? es_chunk_of(s->chunks.head.next) : NULL;
}
static inline struct es_chunk *es_store_newest(const struct es_store *s) {
    return s->chunks.head.prev != &s->chunks.head ? es_chunk_of(s->chunks.head.prev) : NULL;
}

/* Whether `c` is in the list. */
static inline bool es_store_holds(const struct es_store *s, const struct es_chunk *c) {
    return es_queue_contains(&s->chunks, &c->link);
}

/* The chunk after and before `c` in the list, or NULL past its ends. `c`
 * must be in the list: a walker only steps along chunks it holds. */
static inline struct es_chunk *es_store_next(const struct es_store *s, const struct es_chunk *c) {
    assert(es_store_holds(s, c));
    return c->link.next != &s->chunks.head ? es_chunk_of(c->link.next) : NULL;
}
static inline struct es_chunk *es_store_prev(const struct es_store *s, const struct es_chunk *c) {
    assert(es_store_holds(s, c));
    return c->link.prev != &s->chunks.head ? es_chunk_of(c->link.prev) : NULL;
}

/* Chunks in the list (for tests and asserts). */
static inline size_t es_store_length(const struct es_store *s) {
    return es_queue_len(&s->chunks);
}

/* Bytes of all live chunks of this store. */
static inline size_t es_store_held(const struct es_store *s) {
    return s->bytes_held;
}

/* Chunks and bytes dropped before the first client joined. */
static inline void es_store_retain_dropped(const struct es_store *s, uint64_t *chunks,
                                           uint64_t *bytes) {
    *chunks = s->retain_dropped_chunks;
    *bytes = s->retain_dropped_bytes;
}

void es_store_init(struct es_store *s, size_t retain_limit);
void es_store_destroy(struct es_store *s);

/* Count a chunk that lives outside the list (a synthesised block) in
 * bytes_held; releasing its last reference uncounts it. */
void es_store_adopt(struct es_store *s, const struct es_chunk *c);

/* Replace the header; takes over the caller's reference to `c`. */
void es_store_set_header(struct es_store *s, struct es_chunk *c);

/* Append a chunk that `holders` clients will send; takes over the caller's
 * reference. While no client has joined, the store holds it too, dropping
 * the oldest kept chunks beyond retain_limit (never the newest). Returns
 * the chunk, or NULL when nobody holds it and it was freed at once. */
struct es_chunk *es_store_append(struct es_store *s, struct es_chunk *c, unsigned holders);

/* The first chunk a joining client has to send: everything kept, for the
 * first client ever (the store's references pass to it); NULL (nothing
 * yet: it starts with the next chunk) for any later one. */
struct es_chunk *es_store_join(struct es_store *s);

struct es_chunk *es_store_ref(struct es_chunk *c);
/* Drop one reference; the last one unlinks and frees the chunk. */
void es_store_release(struct es_store *s, struct es_chunk *c);
/* Release one reference on every chunk from `first` to `last` (inclusive,
 * along the list). */
void es_store_release_range(struct es_store *s, struct es_chunk *first,
                            const struct es_chunk *last);

#endif
