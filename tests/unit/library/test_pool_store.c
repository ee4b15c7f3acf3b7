/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared chunk store: retention before the first client, joining,
 * per-chunk holder counts, freeing in the middle of the list, and that
 * memory comes back. */
#include "delivery/es_pool.h"
#include "delivery/es_store.h"
#include "../unit.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>

static struct es_chunk *chunk_of(size_t len, char fill) {
    char *buf = malloc(len);
    memset(buf, fill, len);
    struct es_chunk *c = es_pool_chunk_new(buf, len);
    free(buf);
    return c;
}

/* The chunks in the store's list, walked oldest to newest; (size_t)-1
 * when the walk disagrees with the list's count. */
static size_t list_length(const struct es_store *s) {
    size_t n = 0;
    for (const struct es_chunk *c = es_store_oldest(s); c; c = es_store_next(s, c))
        n++;
    return n == es_store_length(s) ? n : (size_t)-1;
}

/* What a client does when it has sent (or skipped) everything it holds. */
static void send_all(struct es_store *s, struct es_chunk **next) {
    if (*next)
        es_store_release_range(s, *next, es_store_newest(s));
    *next = NULL;
}

/* Buffers the walker reserves: ES_POOL_SPARE of them, pre-faulted, taken
 * by the next chunks that fit, topped up but never beyond, never for small
 * chunks. The pool is empty on entry (every earlier chunk was below
 * ES_POOL_MIN). */
UNIT_CASE(pool_reserve) {
    size_t full = ES_RTS_BUFFER - 24; /* a full block, as the RTS writes it */
    char *src = malloc(full);
    memset(src, 'r', full);
    ok(es_pool_fitting(full) == 0, "the pool starts empty");

    ok(es_pool_reserve(full) == 0 && es_pool_fitting(full) == ES_POOL_SPARE,
       "%d buffers reserved for full RTS buffers", ES_POOL_SPARE);
    struct es_chunk *a = es_pool_chunk_new(src, full);
    ok(a != NULL && es_pool_fitting(full) == ES_POOL_SPARE - 1 && memcmp(a->data, src, full) == 0,
       "the next full chunk takes one and holds the chunk's bytes");
    ok(es_pool_reserve(full) == 0 && es_pool_fitting(full) == ES_POOL_SPARE,
       "reserving tops the pool up again");
    ok(es_pool_reserve(full) == 0 && es_pool_fitting(full) == ES_POOL_SPARE, "but not beyond");
    ok(es_pool_fitting(full / 3) == 0,
       "a reserved buffer is not handed to a chunk of a third its size");
    /* The RTS's full blocks differ by a few bytes: one buffer fits them all. */
    struct es_chunk *shorter = es_pool_chunk_new(NULL, ES_RTS_BUFFER - 30);
    ok(shorter->cap == ES_RTS_BUFFER && es_pool_fitting(full) == 0,
       "a block 30 bytes shorter takes the reserved one");
    es_pool_chunk_free(shorter);
    ok(es_pool_fitting(ES_RTS_BUFFER) == ES_POOL_SPARE,
       "given back, it fits a block of the whole buffer");

    /* A full pool takes no more, and what is freed beyond it goes. */
    struct es_chunk *more[ES_POOL_MAX];
    for (int i = 0; i < ES_POOL_MAX; i++)
        more[i] = es_pool_chunk_new(src, full);
    ok(es_pool_fitting(full) == 0, "taking %d chunks empties the pool", ES_POOL_MAX);
    es_pool_chunk_free(a);
    for (int i = 0; i < ES_POOL_MAX; i++)
        es_pool_chunk_free(more[i]);
    ok(es_pool_fitting(full) == ES_POOL_MAX && es_pool_reserve(full) == 0 &&
           es_pool_fitting(full) == ES_POOL_MAX,
       "freeing %d fills the pool to %d; a reserve then adds nothing", ES_POOL_MAX + 1,
       ES_POOL_MAX);
    /* A pool full of buffers of one size makes room for another: the
     * least recently freed go. */
    size_t mid = ES_RTS_BUFFER / 3;
    ok(es_pool_reserve(mid) == 0 && es_pool_fitting(mid) == ES_POOL_SPARE &&
           es_pool_fitting(full) == ES_POOL_MAX - ES_POOL_SPARE,
       "a reserve in a full pool replaces the oldest buffer");
    struct es_chunk *m = es_pool_chunk_new(NULL, mid);
    ok(es_pool_fitting(mid) == 0, "and a chunk of that size takes it");
    es_pool_chunk_free(m);
    ok(es_pool_fitting(mid) == 1 && es_pool_fitting(full) == ES_POOL_MAX - 1,
       "given back, it stays, and the pool stays at %d", ES_POOL_MAX);
    m = es_pool_chunk_new(NULL, mid);
    for (int i = 0; i < ES_POOL_MAX; i++)
        more[i] = es_pool_chunk_new(NULL, full);

    size_t small = ES_POOL_MIN / 2;
    ok(es_pool_reserve(small) == 0 && es_pool_fitting(small) == 0,
       "below ES_POOL_MIN nothing is reserved");
    size_t odd = ES_RTS_BUFFER * 3 / 10;
    ok(es_pool_reserve(odd) == 0 && es_pool_fitting(odd) == ES_POOL_SPARE,
       "other sizes are reserved at their own size");
    struct es_chunk *f = es_pool_chunk_new(src, odd);
    ok(f->cap >= odd && f->cap < odd + ES_POOL_CLASS && memcmp(f->data, src, odd) == 0,
       "and taken by a chunk of that size (rounded up to a size class)");
    es_pool_chunk_free(f);
    es_pool_chunk_free(m);
    for (int i = 0; i < ES_POOL_MAX; i++)
        es_pool_chunk_free(more[i]);
    free(src);
}

/* Buffers lent to the pool for skipped chunks: kept beyond ES_POOL_MAX,
 * until the RTS has needed as many buffers again (pooled or not); then
 * the pool is back to its usual size. The pool is empty on entry. */
UNIT_CASE(pool_lend) {
    enum { LENT = 3, ALL = ES_POOL_MAX + LENT };
    size_t full = ES_RTS_BUFFER - 24;
    struct es_chunk *c[ALL + 1];
    for (int i = 0; i <= ALL; i++)
        c[i] = es_pool_chunk_new(NULL, full);
    es_pool_lend(LENT);
    for (int i = 0; i <= ALL; i++)
        es_pool_chunk_free(c[i]);
    ok(es_pool_fitting(full) == ALL, "%d lent: %d of %d freed buffers kept", LENT, ALL, ALL + 1);
    for (int i = 0; i < ALL; i++)
        c[i] = es_pool_chunk_new(NULL, full);
    ok(es_pool_fitting(full) == 0, "taken again by the next %d chunks", ALL);
    for (int i = 0; i < ALL; i++)
        es_pool_chunk_free(c[i]);
    ok(es_pool_fitting(full) == ES_POOL_MAX, "after that the pool keeps its usual %d again",
       ES_POOL_MAX);
    /* Chunks that find nothing in the pool pay the loan back too. */
    es_pool_lend(2);
    struct es_chunk *small[2] = {es_pool_chunk_new(NULL, ES_POOL_MIN),
                                 es_pool_chunk_new(NULL, ES_POOL_MIN)};
    es_pool_chunk_free(small[0]);
    es_pool_chunk_free(small[1]);
    ok(es_pool_fitting(full) == ES_POOL_MAX - 2 && es_pool_fitting(ES_POOL_MIN) == 2,
       "2 lent, 2 chunks allocated anew: the 2 freed then replace the oldest buffers");
    for (int i = 0; i < 2; i++)
        free(es_pool_chunk_new(NULL, ES_POOL_MIN)); /* out of the pool */
    for (int i = 0; i < ES_POOL_MAX; i++)
        c[i] = es_pool_chunk_new(NULL, full); /* the pool is empty again */
    ok(es_pool_fitting(ES_POOL_MIN) == 0 && es_pool_fitting(full) == 0,
       "every buffer kept can be taken");
    enum { BIG = ES_POOL_MAX + ES_POOL_LENT_MAX };
    struct es_chunk *big[BIG + 1];
    for (int i = 0; i <= BIG; i++)
        big[i] = es_pool_chunk_new(NULL, ES_POOL_MIN);
    es_pool_lend(1000000);
    for (int i = 0; i <= BIG; i++)
        es_pool_chunk_free(big[i]);
    ok(es_pool_fitting(ES_POOL_MIN) == BIG, "lending is capped at %d buffers", ES_POOL_LENT_MAX);
    es_pool_recall();
    ok(es_pool_fitting(ES_POOL_MIN) == ES_POOL_MAX,
       "recalling the loan leaves the usual %d buffers", ES_POOL_MAX);
    for (int i = 0; i < BIG; i++)
        big[i] = es_pool_chunk_new(NULL, ES_POOL_MIN);
    es_pool_lend(ES_POOL_LENT_MAX);
    for (int i = 0; i < BIG; i++)
        es_pool_chunk_free(big[i]);
    for (int i = 0; i < BIG; i++)
        big[i] = es_pool_chunk_new(NULL, ES_POOL_MIN);
    ok(es_pool_fitting(ES_POOL_MIN) == 0, "and every buffer kept can be taken");
    /* Leave the pool empty for the next test: free these past it. */
    for (int i = 0; i < BIG; i++)
        free(big[i]);
    for (int i = 0; i < ES_POOL_MAX; i++)
        free(c[i]);
}

/* A pooled buffer freed twice, in a child: with the free list hand-linked
 * the second free linked the buffer to itself and two chunks would later
 * share it; the list's asserts stop the program at the second call. */
static void pool_misuse(int twice) {
    struct es_chunk *c = es_pool_chunk_new(NULL, ES_RTS_BUFFER - 24);
    es_pool_chunk_free(c);
    if (twice)
        es_pool_chunk_free(c);
}

UNIT_CASE(pool_asserts) {
#ifdef NDEBUG
    ok(1, "# SKIP built with NDEBUG: no asserts to test");
#else
    ok(unit_dies_of(pool_misuse, 0) == 0, "freeing a pooled chunk once is fine");
    ok(unit_dies_of(pool_misuse, 1) == SIGABRT, "freeing it twice stops at the second free");
#endif
}

UNIT_CASE(store_retention_and_clients) {
    struct es_store s;
    es_store_init(&s, 1000);
    es_store_set_header(&s, chunk_of(50, 'h'));
    ok(s.bytes_held == 50, "header counted");

    /* Before any client: everything within the limit is retained. */
    for (int i = 0; i < 5; i++)
        ok(es_store_append(&s, chunk_of(100, (char)('a' + i)), 0) != NULL, "kept %c", 'a' + i);
    ok(s.bytes_held == 550 && s.retain_dropped_chunks == 0, "500 bytes retained, none dropped");

    /* Past the limit, the oldest go first. */
    for (int i = 0; i < 10; i++)
        es_store_append(&s, chunk_of(100, (char)('f' + i)), 0);
    ok(s.retain_dropped_chunks == 5 && s.retain_dropped_bytes == 500,
       "5 oldest chunks dropped past the limit (got %llu)",
       (unsigned long long)s.retain_dropped_chunks);
    ok(s.linked_bytes == 1000 && list_length(&s) == 10, "exactly the limit is retained");
    ok(es_store_oldest(&s)->data[0] == 'f', "the oldest kept chunk is the 6th");
    ok(s.end_offset == 1500 && es_store_newest(&s)->end_offset == 1500,
       "offsets count every chunk");

    /* The first client gets the retained chunks; a second only new ones. */
    struct es_chunk *first = es_store_join(&s);
    ok(first == es_store_oldest(&s) && !s.retaining,
       "first client starts at the oldest kept chunk");
    struct es_chunk *second = es_store_join(&s);
    ok(second == NULL, "second client starts with the next chunk");

    struct es_chunk *x = es_store_append(&s, chunk_of(100, 'x'), 2);
    second = x;
    ok(x->refs == 2 && list_length(&s) == 11, "new chunk held by both clients");

    /* The first client sends everything: what only it held is freed, the
     * chunk the second client still needs stays. */
    send_all(&s, &first);
    ok(s.bytes_held == 50 + 100 && list_length(&s) == 1 && es_store_oldest(&s) == x,
       "sent chunks freed (%zu bytes held)", s.bytes_held);
    ok(s.peak_bytes >= 1150, "peak remembered (%zu)", s.peak_bytes);

    /* A chunk in the middle of the list can go while older and newer ones
     * stay (a slow client skipping what others already sent). */
    struct es_chunk *y = es_store_append(&s, chunk_of(100, 'y'), 2);
    struct es_chunk *z = es_store_append(&s, chunk_of(100, 'z'), 2);
    es_store_ref(y);         /* y is in a write in flight for the first client */
    es_store_release(&s, y); /* ... and the second client skips it */
    ok(list_length(&s) == 3, "a chunk in a write in flight survives a skip");
    es_store_release(&s, x); /* the second client sends x */
    es_store_release(&s, y); /* the first client's write of y ends */
    ok(list_length(&s) == 2 && es_store_oldest(&s) == y && es_store_next(&s, y) == z,
       "x freed at the head");
    es_store_release(&s, y);
    ok(list_length(&s) == 1 && es_store_oldest(&s) == z && es_store_newest(&s) == z &&
           es_store_prev(&s, z) == NULL,
       "y freed, list relinked");
    second = z; /* sent x, skipped y: z is what the second client has left */
    send_all(&s, &second);
    es_store_release(&s, z); /* the first client sends z */
    ok(es_store_oldest(&s) == NULL && es_store_newest(&s) == NULL && s.bytes_held == 50,
       "all data freed");
    es_store_destroy(&s);
}

/* Misuses of the store's list, each in a child: a chunk appended twice
 * (hand-linked, the second append made the list loop), and a range
 * released from a chunk that is not in the list (the header). */
static void store_misuse(int m) {
    struct es_store s;
    es_store_init(&s, 1000);
    struct es_chunk *h = chunk_of(50, 'h');
    es_store_set_header(&s, h);
    struct es_chunk *a = es_store_append(&s, chunk_of(100, 'a'), 1);
    if (m == 1)
        es_store_append(&s, a, 1);
    else if (m == 2)
        es_store_release_range(&s, h, a);
    else
        es_store_release_range(&s, a, a);
}

UNIT_CASE(store_asserts) {
#ifdef NDEBUG
    ok(1, "# SKIP built with NDEBUG: no asserts to test");
#else
    ok(unit_dies_of(store_misuse, 0) == 0, "releasing a range of listed chunks is fine");
    ok(unit_dies_of(store_misuse, 1) == SIGABRT, "appending a chunk already in the list stops");
    ok(unit_dies_of(store_misuse, 2) == SIGABRT,
       "releasing a range that starts outside the list stops");
#endif
}

/* A store with its header whose first client has joined (with nothing
 * retained): it retains no more. */
static void store_joined(struct es_store *s) {
    es_store_init(s, 1000);
    es_store_set_header(s, chunk_of(50, 'h'));
    if (es_store_join(s) != NULL)
        unit_bail("an empty store gave its first client chunks");
}

/* Without clients and without retention, nothing is kept. */
UNIT_CASE(store_nobody_holds) {
    struct es_store s;
    store_joined(&s);
    ok(es_store_append(&s, chunk_of(1000, 'q'), 0) == NULL && s.bytes_held == 50,
       "a chunk nobody holds is freed at once");
    es_store_destroy(&s);
}

/* A long list released in one go. */
UNIT_CASE(store_million_chunks) {
    struct es_store s;
    store_joined(&s);
    struct es_chunk *slow = NULL;
    for (int i = 0; i < 1000000; i++) {
        struct es_chunk *c = es_store_append(&s, chunk_of(1, 'c'), 1);
        if (slow == NULL)
            slow = c;
    }
    send_all(&s, &slow);
    ok(s.bytes_held == 50 && es_store_oldest(&s) == NULL && es_store_length(&s) == 0,
       "a million-chunk range released");
    es_store_destroy(&s);
}

/* Adopted (synthesised) chunks are counted and uncounted. */
UNIT_CASE(store_adopted) {
    struct es_store s;
    store_joined(&s);
    struct es_chunk *block = chunk_of(300, 'b');
    es_store_adopt(&s, block);
    ok(s.bytes_held == 350, "adopted block counted");
    es_store_release(&s, block);
    ok(s.bytes_held == 50, "and uncounted when released");

    es_store_destroy(&s);
    ok(s.bytes_held == 0, "destroy releases everything");
}
