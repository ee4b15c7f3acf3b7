/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_pool.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* Stores that bypass the cache: x86-64's, outside the sanitizers' builds
 * (which check a copy as one range when it is memcpy's). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define ES_POOL_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ES_POOL_SANITIZED 1
#endif
#if defined(__x86_64__) && defined(__SSE2__) && !defined(ES_POOL_SANITIZED)
#define ES_POOL_STREAM 1
#include <emmintrin.h>
#endif

/* Recently freed large buffers, shared by the RTS threads that allocate
 * chunks and the loop thread that frees them, in `free` through their
 * `link`, most recently freed first (under `lock`). The pool keeps
 * ES_POOL_MAX of them, and `lent` more after a slow client's chunks were
 * skipped (es_pool_lend). */
static struct {
    pthread_mutex_t lock;
    struct es_queue free;
    unsigned lent;
    /* While loans are open: the bytes held (es_pool_note_held) below which
     * they end, or 0 when none are open. */
    size_t until;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .free = ES_QUEUE_INIT(pool.free)};

/* Whether a buffer of `cap` bytes may hold a chunk of `len`: not much
 * larger than needed, or small chunks would pin big buffers. */
static bool fits(size_t cap, size_t len) {
    return cap >= len && cap <= 2 * len;
}

static struct es_chunk *pool_take(size_t len) {
    pthread_mutex_lock(&pool.lock);
    struct es_chunk *c = NULL;
    ES_QUEUE_FOREACH(n, &pool.free) {
        if (fits(es_chunk_of(n)->cap, len)) {
            c = es_chunk_of(n);
            break;
        }
    }
    if (c != NULL)
        es_queue_remove(&pool.free, &c->link);
    /* Every buffer the RTS needs, pooled or not, pays back one lent: the
     * pool shrinks to its usual size as the RTS refills the backlog. */
    if (pool.lent > 0)
        pool.lent--;
    pthread_mutex_unlock(&pool.lock);
    return c;
}

/* With the lock held: keep the `keep` most recently freed buffers and move
 * the rest to `evicted`, to be freed once the lock is released. */
static void pool_trim(unsigned keep, struct es_queue *evicted) {
    while (es_queue_len(&pool.free) > keep) {
        struct es_queue_node *oldest = es_queue_last(&pool.free);
        es_queue_remove(&pool.free, oldest);
        es_queue_insert_tail(evicted, oldest);
    }
}

static void free_evicted(struct es_queue *evicted) {
    struct es_queue_node *n;
    while ((n = es_queue_pop_head(evicted)) != NULL)
        free(es_chunk_of(n));
}

/* Keep a buffer for reuse. Beyond the pool's size the least recently
 * freed ones go instead: their sizes are the least likely to fit what the
 * RTS writes next. */
static void pool_keep(struct es_chunk *c) {
    struct es_queue evicted;
    es_queue_init(&evicted);
    pthread_mutex_lock(&pool.lock);
    es_queue_insert_head(&pool.free, &c->link); /* asserts: not pooled twice */
    pool_trim(ES_POOL_MAX + pool.lent, &evicted);
    pthread_mutex_unlock(&pool.lock);
    free_evicted(&evicted);
}

void es_pool_lend(unsigned n) {
    pthread_mutex_lock(&pool.lock);
    pool.lent = pool.lent + n > ES_POOL_LENT_MAX ? ES_POOL_LENT_MAX : pool.lent + n;
    pthread_mutex_unlock(&pool.lock);
}

void es_pool_lend_until(unsigned n, size_t held_below) {
    if (n > 0)
        es_pool_lend(n);
    pthread_mutex_lock(&pool.lock);
    bool open = n > 0 || pool.until > 0;
    if (open)
        pool.until = held_below > 0 ? held_below : 1;
    pthread_mutex_unlock(&pool.lock);
}

void es_pool_note_held(size_t held) {
    pthread_mutex_lock(&pool.lock);
    bool recall = pool.until > 0 && held < pool.until;
    pthread_mutex_unlock(&pool.lock);
    if (recall)
        es_pool_recall();
}

void es_pool_recall(void) {
    struct es_queue evicted;
    es_queue_init(&evicted);
    pthread_mutex_lock(&pool.lock);
    pool.lent = 0;
    pool.until = 0;
    pool_trim(ES_POOL_MAX, &evicted);
    pthread_mutex_unlock(&pool.lock);
    free_evicted(&evicted);
}

size_t es_pool_fitting(size_t len) {
    pthread_mutex_lock(&pool.lock);
    size_t n = 0;
    ES_QUEUE_FOREACH(e, &pool.free) {
        n += fits(es_chunk_of(e)->cap, len);
    }
    pthread_mutex_unlock(&pool.lock);
    return n;
}

/* The buffer size for a chunk of `len` bytes: poolable sizes are rounded
 * up to a multiple of ES_POOL_CLASS. The RTS's blocks differ by a few
 * bytes even when full (2097122 to 2097152 were seen, as the last event
 * fits), and flushed ones grow and shrink with the program's rate, so
 * buffers sized exactly kept missing the next block by a few bytes, and
 * each miss faulted a fresh buffer in. */
static size_t buffer_size(size_t len) {
    if (len < ES_POOL_MIN)
        return len;
    return (len + ES_POOL_CLASS - 1) / ES_POOL_CLASS * ES_POOL_CLASS;
}

/* A chunk with a buffer for at least `len` bytes right after the struct,
 * data uninitialised. */
static struct es_chunk *chunk_alloc(size_t len) {
    size_t cap = buffer_size(len);
    struct es_chunk *c = malloc(sizeof *c + cap);
    if (c == NULL)
        return NULL;
    c->cap = cap;
    c->link = (struct es_queue_node){0}; /* in no list */
    return c;
}

int es_pool_reserve(size_t len) {
    if (len < ES_POOL_MIN)
        return 0;
    while (es_pool_fitting(len) < ES_POOL_SPARE) {
        struct es_chunk *c = chunk_alloc(len);
        if (c == NULL)
            return -ENOMEM;
        /* Fault every page in here, so that the RTS thread whose chunk
         * lands in this buffer only copies. Every 4 KiB: the smallest page
         * size. From malloc, like every chunk: freed beyond the pool, the
         * buffer stays with the allocator, which hands it out again
         * without faults (a mapping of its own would be unmapped). */
        for (size_t off = 0; off < c->cap; off += 4096)
            c->data[off] = 0;
        c->data[c->cap - 1] = 0; /* the buffer need not start on a page */
        pool_keep(c);
    }
    return 0;
}

/* A buffer for a chunk of `len` bytes (`cap` set, nothing else): a pooled
 * one that fits, or a fresh one. NULL when out of memory. */
static struct es_chunk *pool_get(size_t len) {
    struct es_chunk *c = len >= ES_POOL_MIN ? pool_take(len) : NULL;
    return c != NULL ? c : chunk_alloc(len);
}

/* Keep a chunk's buffer for reuse, or free it. */
static void pool_put(struct es_chunk *c) {
    if (c->cap >= ES_POOL_MIN)
        pool_keep(c);
    else
        free(c);
}

struct es_chunk *es_pool_chunk_new(const void *data, size_t len) {
    struct es_chunk *c = pool_get(len);
    return c != NULL ? es_pool_chunk_fill(c, data, len) : NULL;
}

/* A large chunk's bytes copied in with stores that bypass the cache, where
 * the machine has them: the buffer was most likely freed by the loop
 * thread just after another core read it, and plain stores would first
 * fetch each of its lines back from that core (several times the copy
 * itself, BENCHMARKS.md section 2). The walker reads the bytes next, on its
 * own core, from memory either way. The fence orders these stores before
 * the chunk is handed over (es_inbox's lock). */
static void copy_in(uint8_t *dst, const uint8_t *src, size_t len) {
#ifdef ES_POOL_STREAM
    if (len >= ES_POOL_MIN) {
        size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
        memcpy(dst, src, head);
        size_t i = head;
        for (; i + 64 <= len; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
            _mm_stream_si128((__m128i *)(dst + i), a);
            _mm_stream_si128((__m128i *)(dst + i + 16), b);
            _mm_stream_si128((__m128i *)(dst + i + 32), c);
            _mm_stream_si128((__m128i *)(dst + i + 48), d);
        }
        memcpy(dst + i, src + i, len - i);
        _mm_sfence();
        return;
    }
#endif
    memcpy(dst, src, len);
}

struct es_chunk *es_pool_chunk_fill(struct es_chunk *c, const void *data, size_t len) {
    assert(!es_queue_linked(&c->link) && len <= c->cap);
    c->refs = 1;
    c->flags = 0;
    c->end_offset = 0;
    c->defs = NULL;
    c->ndefs = c->defs_cap = 0;
    c->header = NULL;
    c->arrived = 0;
    c->gap_chunks = c->gap_bytes = c->gap_time = 0;
    c->gap_oom_chunks = c->gap_oom_bytes = 0;
    c->len = len;
    if (data != NULL && len > 0)
        copy_in(c->data, data, len);
    return c;
}

void es_pool_chunk_free(struct es_chunk *c) {
    if (c == NULL)
        return;
    /* Out of every list first: freed while its owner still links it, the
     * chunk would leave that list pointing at reused memory. */
    assert(!es_queue_linked(&c->link));
    free(c->defs);
    c->defs = NULL;
    free(c->header);
    c->header = NULL;
    pool_put(c);
}
