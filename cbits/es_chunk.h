/* The chunk store: every chunk the RTS wrote, held once and shared by all
 * clients (no per-client copies).
 *
 * Chunks form a singly-linked list from oldest to newest. Each chunk holds a
 * reference to the next one, the store holds one to the newest (the tail),
 * and every client holds one to the last chunk it has fully handed to its
 * socket (its cursor). A chunk therefore lives exactly as long as some
 * client still has to send it, or the store retains it for the first client;
 * when the oldest reference goes, the chain behind it is freed in order.
 * All functions except es_chunk_new/es_chunk_free run on the loop thread. */
#ifndef ES_CHUNK_H
#define ES_CHUNK_H

#include <stddef.h>
#include <stdint.h>

struct es_chunk {
    struct es_chunk *next; /* newer chunk; this chunk holds a reference to it */
    uint32_t refs;
    uint32_t flags;
    uint64_t end_offset; /* stream offset just past this chunk (header excluded) */
    size_t len;
    uint8_t data[];
};

/* The chunk carries the end-of-data marker. */
#define ES_CHUNK_END 1u

struct es_store {
    struct es_chunk *header;   /* the current header (a reference), or NULL */
    struct es_chunk *tail;     /* newest chunk (a reference); a sentinel at first */
    struct es_chunk *retained; /* chunks after it are kept for the first client
                                * (a reference); NULL once a client has joined */
    size_t retain_limit;       /* bytes of data kept before the first client */
    size_t bytes_held;         /* bytes of all live chunks in the store */
    size_t peak_bytes;
    uint64_t retain_dropped_chunks; /* dropped before the first client joined */
    uint64_t retain_dropped_bytes;
};

/* A new chunk holding a copy of `data`, with one reference owned by the
 * caller; NULL when out of memory. Safe on any thread. */
struct es_chunk *es_chunk_new(const void *data, size_t len);
/* Free a chunk that never entered a store. */
void es_chunk_free(struct es_chunk *c);

int es_store_init(struct es_store *s, size_t retain_limit);
void es_store_destroy(struct es_store *s);

/* Replace the header; takes over the caller's reference to `c`. */
void es_store_set_header(struct es_store *s, struct es_chunk *c);
/* Append a chunk; takes over the caller's reference. While no client has
 * joined, the oldest retained chunks are dropped when more than
 * retain_limit bytes are held. */
void es_store_append(struct es_store *s, struct es_chunk *c);

/* A reference to the chunk a joining client starts after: the first client
 * to join starts before everything retained, later ones at the tail. */
struct es_chunk *es_store_join(struct es_store *s);

struct es_chunk *es_store_ref(struct es_chunk *c);
void es_store_unref(struct es_store *s, struct es_chunk *c);

/* Bytes of stream after `cursor`, up to the tail. */
static inline uint64_t es_store_behind(const struct es_store *s, const struct es_chunk *cursor) {
    return s->tail->end_offset - cursor->end_offset;
}

#endif
