/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_inbox.h"

#include "es_pool.h"

#include "format/es_header.h"

#include <assert.h>
#include <string.h>

int es_inbox_init(struct es_inbox *in, size_t limit) {
    memset(in, 0, sizeof *in);
    es_queue_init(&in->pending);
    in->open = true;
    in->limit = limit;
    atomic_init(&in->in_flight, 0);
    in->reserve = es_pool_chunk_new(NULL, ES_RTS_BUFFER);
    if (in->reserve == NULL)
        return UV_ENOMEM;
    int r = uv_mutex_init(&in->lock);
    if (r == 0 && (r = uv_cond_init(&in->ready)) != 0)
        uv_mutex_destroy(&in->lock);
    if (r != 0)
        es_pool_chunk_free(in->reserve);
    return r;
}

void es_inbox_destroy(struct es_inbox *in) {
    struct es_queue_node *n;
    while ((n = es_queue_pop_head(&in->pending)) != NULL)
        es_pool_chunk_free(es_chunk_of(n));
    es_pool_chunk_free(in->reserve);
    in->reserve = NULL;
    uv_cond_destroy(&in->ready);
    uv_mutex_destroy(&in->lock);
}

/* Whether a chunk may be dropped when the limit is reached: never the
 * header (a stream without it cannot be parsed), never a chunk whose last
 * two bytes could be the end-of-data marker (a block's last event may end
 * in FF FF too; keeping such a chunk costs nothing), never a chunk too
 * short to be a block. */
static bool droppable(const uint8_t *p, size_t len) {
    return es_is_block(p, len) && !es_header_detect(p, len) &&
           !(p[len - 2] == 0xff && p[len - 1] == 0xff);
}

/* With the lock held: count a chunk dropped for the limit or lost for
 * memory (`oom`); the next accepted one carries the gap. */
static void gap(struct es_inbox *in, const uint8_t *p, size_t len, bool oom) {
    in->gap_chunks++;
    in->gap_bytes += len;
    if (es_is_block(p, len))
        in->gap_time = es_block_end_time(p);
    if (oom) {
        in->gap_oom_chunks++;
        in->gap_oom_bytes += len;
        in->oom_chunks++;
        in->oom_bytes += len;
    } else {
        in->dropped_chunks++;
        in->dropped_bytes += len;
    }
}

static void drop(struct es_inbox *in, const uint8_t *p, size_t len) {
    uv_mutex_lock(&in->lock);
    gap(in, p, len, false);
    uv_mutex_unlock(&in->lock);
}

/* With the lock held: a chunk that could not be kept, for memory (`oom`:
 * a gap in the stream) or because the inbox is closed. */
static void lose(struct es_inbox *in, const uint8_t *p, size_t len, bool oom) {
    if (oom) {
        gap(in, p, len, true);
    } else {
        in->lost_chunks++;
        in->lost_bytes += len;
    }
}

bool es_inbox_push(struct es_inbox *in, const void *buf, size_t len, bool may_drop) {
    /* Past the limit, drop before allocating anything. Racy by design:
     * concurrent writers may overshoot it by a chunk each. One chunk is
     * always let through, so a chunk larger than the limit is not lost
     * for that alone. */
    size_t flying = atomic_load_explicit(&in->in_flight, memory_order_relaxed);
    if (may_drop && in->limit > 0 && flying > 0 && flying + len > in->limit &&
        droppable(buf, len)) {
        drop(in, buf, len);
        return false;
    }
    /* Allocate and copy outside the lock, so concurrent writers only
     * serialise on a pointer append. The time is taken before the copy:
     * whatever the RTS posts to the buffer it is emptying is newer. */
    uint64_t now = uv_hrtime();
    struct es_chunk *c = es_pool_chunk_new(buf, len);
    uv_mutex_lock(&in->lock);
    if (c == NULL && !droppable(buf, len) && in->reserve != NULL && len <= in->reserve->cap) {
        c = es_pool_chunk_fill(in->reserve, buf, len); /* under the lock: one reserve */
        in->reserve = NULL;
    }
    if (c == NULL || !in->open) {
        lose(in, buf, len, c == NULL && in->open);
        uv_mutex_unlock(&in->lock);
        es_pool_chunk_free(c);
        return false;
    }
    c->arrived = now;
    if (in->gap_chunks > 0) {
        c->gap_chunks = in->gap_chunks;
        c->gap_bytes = in->gap_bytes;
        c->gap_time = in->gap_time;
        c->gap_oom_chunks = in->gap_oom_chunks;
        c->gap_oom_bytes = in->gap_oom_bytes;
        in->gap_chunks = in->gap_bytes = in->gap_time = 0;
        in->gap_oom_chunks = in->gap_oom_bytes = 0;
    }
    atomic_fetch_add_explicit(&in->in_flight, len, memory_order_relaxed);
    es_queue_insert_tail(&in->pending, &c->link);
    in->chunks_in++;
    in->bytes_in += len;
    /* Under the lock: once it is released, the inbox may be closed and
     * destroyed. Without a waiting consumer this costs no system call. */
    uv_cond_signal(&in->ready);
    uv_mutex_unlock(&in->lock);
    return true;
}

void es_inbox_release(struct es_inbox *in, size_t bytes) {
    /* Only what was handed over is taken in. */
    size_t was = atomic_fetch_sub_explicit(&in->in_flight, bytes, memory_order_relaxed);
    assert(was >= bytes);
    (void)was;
}

bool es_inbox_refill(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    bool full = in->reserve != NULL;
    uv_mutex_unlock(&in->lock);
    if (full)
        return true;
    struct es_chunk *c = es_pool_chunk_new(NULL, ES_RTS_BUFFER);
    if (c == NULL)
        return false;
    uv_mutex_lock(&in->lock);
    if (in->reserve == NULL) {
        in->reserve = c;
        c = NULL;
    }
    uv_mutex_unlock(&in->lock);
    es_pool_chunk_free(c);
    return true;
}

void es_inbox_oom(struct es_inbox *in, uint64_t *chunks, uint64_t *bytes) {
    uv_mutex_lock(&in->lock);
    *chunks = in->oom_chunks;
    *bytes = in->oom_bytes;
    uv_mutex_unlock(&in->lock);
}

void es_inbox_dropped(struct es_inbox *in, uint64_t *chunks, uint64_t *bytes) {
    uv_mutex_lock(&in->lock);
    *chunks = in->dropped_chunks;
    *bytes = in->dropped_bytes;
    uv_mutex_unlock(&in->lock);
}

uint64_t es_inbox_bytes_in(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    uint64_t n = in->bytes_in;
    uv_mutex_unlock(&in->lock);
    return n;
}

bool es_inbox_empty(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    bool empty = es_queue_empty(&in->pending);
    uv_mutex_unlock(&in->lock);
    return empty;
}

bool es_inbox_wait(struct es_inbox *in, struct es_queue *out) {
    uv_mutex_lock(&in->lock);
    while (es_queue_empty(&in->pending) && in->open)
        uv_cond_wait(&in->ready, &in->lock);
    bool any = !es_queue_empty(&in->pending);
    es_queue_move(out, &in->pending);
    uv_mutex_unlock(&in->lock);
    return any;
}

void es_inbox_close(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    in->open = false;
    uv_cond_signal(&in->ready);
    uv_mutex_unlock(&in->lock);
}
