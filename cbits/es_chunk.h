/* The chunk store: every chunk the RTS wrote, held once and shared by all
 * clients (no per-client copies).
 *
 * Chunks form a doubly-linked list from oldest to newest. Each chunk counts
 * its holders: every connected client that has yet to send it, every write
 * in flight that contains it, and the store itself while it keeps chunks
 * for a first client that has not connected yet. When the count reaches
 * zero the chunk is unlinked and freed at once, wherever it is in the list,
 * so skipping chunks for one slow client frees exactly what no other client
 * still needs, even while that client's own write is stuck.
 *
 * Chunks outside the list (the header, synthesised blocks) use the same
 * counting. All functions except es_chunk_new/es_chunk_free run on the
 * loop thread. */
#ifndef ES_CHUNK_H
#define ES_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where one event lies in a chunk. */
struct es_span {
    size_t offset, len;
};

struct es_chunk {
    struct es_chunk *next, *prev; /* list neighbours while linked */
    uint32_t refs;                /* holders */
    uint32_t flags;
    uint64_t end_offset; /* stream offset just past this chunk (header excluded) */
    /* The chunk's definition events, found by the walker thread for the
     * loop thread (es_walker.h); freed with the chunk. */
    struct es_span *defs;
    size_t ndefs, defs_cap;
    uint64_t arrived; /* when the RTS handed it over (uv_hrtime), set by the inbox */
    /* Chunks the hand-off dropped right before this one (es_inbox.h), their
     * bytes, and the end time of the last of them; 0 when none. */
    uint64_t gap_chunks, gap_bytes, gap_time;
    size_t len;
    size_t cap; /* bytes allocated for data (a reused buffer may be larger) */
    uint8_t data[];
};

/* Freed chunk buffers of at least this size are kept for reuse, at most
 * ES_POOL_MAX of them (more for a while after a slow client skipped
 * chunks, see ES_POOL_LENT_MAX), and the walker keeps ES_POOL_SPARE ready
 * before the RTS needs them (es_chunk_reserve): a fresh 2 MiB allocation
 * touches new pages, and those page faults (about 1 ms) cost the RTS
 * thread calling writeEventLog far more than the copy itself. Their sizes
 * are multiples of ES_POOL_CLASS, so that blocks of about the same size
 * share buffers. */
#define ES_POOL_MIN   ((size_t)256 << 10)
#define ES_POOL_CLASS ((size_t)128 << 10)
#define ES_POOL_MAX   4
/* Buffers of chunks skipped for a slow client that the pool may keep on
 * top of ES_POOL_MAX, until the RTS has needed as many again: a skip frees
 * up to half the buffer bound at once, which the RTS would otherwise have
 * to fault in afresh as it refills the backlog. Buffers lent plus bytes
 * held stay within the bound, so this moves memory rather than adding
 * any. */
#define ES_POOL_LENT_MAX 64
/* Buffers of a size the walker keeps ready. One was enough for no call to
 * fault at 400 MB/s from two writers; two did no better and added 4-11 MB
 * to the peak RSS with a stalled client. */
#define ES_POOL_SPARE 1

/* The size of each capability's eventlog buffer in GHC 9.0-9.12, so the
 * size of most chunks once a program is busy. */
#define ES_RTS_BUFFER ((size_t)2 << 20)

#define ES_CHUNK_END       1u /* carries the end-of-data marker */
#define ES_CHUNK_LINKED    2u /* is in the store's list */
#define ES_CHUNK_HEADER    4u /* is an eventlog header */
#define ES_CHUNK_DEFS_LOST 8u /* defs is incomplete: out of memory while walking */

struct es_store {
    struct es_chunk *head, *tail; /* the list, oldest first */
    struct es_chunk *header;      /* the current header (a reference), or NULL */
    uint64_t end_offset;          /* stream offset after the newest chunk */
    bool retaining;               /* no client has joined yet: keep chunks */
    size_t retain_limit;          /* bytes of chunks kept for the first client */
    size_t linked_bytes;          /* bytes of chunks in the list */
    size_t bytes_held;            /* bytes of all live chunks of this store */
    size_t peak_bytes;
    uint64_t retain_dropped_chunks; /* dropped before the first client joined */
    uint64_t retain_dropped_bytes;
};

/* A new chunk holding a copy of `data` (or uninitialised bytes when `data`
 * is NULL), with one reference owned by the caller; NULL when out of
 * memory. Safe on any thread. */
struct es_chunk *es_chunk_new(const void *data, size_t len);
/* Free a chunk (or keep its buffer for reuse). Safe on any thread. */
void es_chunk_free(struct es_chunk *c);
/* Make sure the pool holds ES_POOL_SPARE buffers for chunks of `len` bytes,
 * all of their pages faulted in, unless `len` is below ES_POOL_MIN.
 * For the walker thread: a fresh 2 MiB buffer costs about a millisecond of
 * page faults, which then falls on the walker instead of the RTS thread
 * that calls writeEventLog next. Returns 0 or -ENOMEM. Safe on any thread. */
int es_chunk_reserve(size_t len);
/* Let the pool keep `n` more freed buffers than ES_POOL_MAX, until the
 * RTS has needed `n` more buffers (at most ES_POOL_LENT_MAX in all). For
 * chunks about to be freed because a slow client skips them. Safe on any
 * thread. */
void es_chunk_pool_lend(unsigned n);
/* End every loan: the pool gives what it holds beyond ES_POOL_MAX back to
 * the allocator. For when the client that lagged has caught up or gone, so
 * that a program that then goes quiet does not keep the buffers. Safe on
 * any thread. */
void es_chunk_pool_recall(void);
/* How many pooled buffers a chunk of `len` bytes could take (tests). */
size_t es_chunk_pool_fitting(size_t len);

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
void es_store_release_range(struct es_store *s, struct es_chunk *first, struct es_chunk *last);

/* Stream offset at which chunk `c` starts. */
static inline uint64_t es_chunk_start(const struct es_chunk *c) {
    return c->end_offset - c->len;
}

#endif
