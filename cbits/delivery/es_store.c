/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_store.h"

#include "es_pool.h"

#include "format/es_header.h"

#include <assert.h>
#include <string.h>

void es_store_init(struct es_store *s, size_t retain_limit) {
    memset(s, 0, sizeof *s);
    es_queue_init(&s->chunks);
    s->retaining = true;
    s->retain_limit = retain_limit;
}

void es_store_destroy(struct es_store *s) {
    /* Whatever still holds chunks is going away with the store. */
    struct es_queue_node *n;
    while ((n = es_queue_pop_head(&s->chunks)) != NULL)
        es_pool_chunk_free(es_chunk_of(n));
    if (s->header)
        es_store_release(s, s->header);
    s->header = s->kept = NULL;
    s->bytes_held = s->linked_bytes = 0;
}

void es_store_adopt(struct es_store *s, const struct es_chunk *c) {
    s->bytes_held += c->len;
    if (s->bytes_held > s->peak_bytes)
        s->peak_bytes = s->bytes_held;
}

struct es_chunk *es_store_ref(struct es_chunk *c) {
    c->refs++;
    return c;
}

void es_store_release(struct es_store *s, struct es_chunk *c) {
    if (c == NULL)
        return;
    assert(c->refs > 0);
    if (--c->refs > 0)
        return;
    assert(s->bytes_held >= c->len);
    if (es_store_holds(s, c)) {
        assert(s->linked_bytes >= c->len && c != s->kept);
        es_queue_remove(&s->chunks, &c->link);
        s->linked_bytes -= c->len;
        /* The byte counts follow the list: none without chunks, and what
         * is kept for a first client is listed. */
        assert(!es_queue_empty(&s->chunks) || s->linked_bytes == 0);
        assert(s->kept_bytes <= s->linked_bytes);
    }
    s->bytes_held -= c->len;
    es_pool_chunk_free(c);
}

void es_store_release_range(struct es_store *s, struct es_chunk *first,
                            const struct es_chunk *last) {
    assert(es_store_holds(s, first) && es_store_holds(s, last));
    for (struct es_chunk *c = first;;) {
        /* Read the successor first: releasing may free c. */
        struct es_chunk *next = es_store_next(s, c);
        bool done = c == last;
        es_store_release(s, c);
        if (done || next == NULL)
            return;
        c = next;
    }
}

void es_store_set_header(struct es_store *s, struct es_chunk *c) {
    es_store_adopt(s, c);
    if (s->header)
        es_store_release(s, s->header);
    s->header = c;
}

struct es_chunk *es_store_append(struct es_store *s, struct es_chunk *c, unsigned holders) {
    if (es_is_block(c->data, c->len) && es_block_end_time(c->data) > s->last_time)
        s->last_time = es_block_end_time(c->data);
    if (c->flags & ES_CHUNK_END)
        s->ended = true;
    s->end_offset += c->len;
    c->end_offset = s->end_offset;
    c->refs = holders + (s->retaining ? 1 : 0);
    es_store_adopt(s, c);
    if (c->refs == 0) {
        s->bytes_held -= c->len;
        es_pool_chunk_free(c);
        return NULL;
    }
    es_queue_insert_tail(&s->chunks, &c->link); /* asserts: in no list before */
    s->linked_bytes += c->len;

    /* Before any client: drop the oldest kept chunks beyond the limit, but
     * keep the newest even if it alone exceeds it. (The window may hold
     * them, and chunks older than the first kept one, too.) */
    if (!s->retaining)
        return c;
    if (s->kept == NULL)
        s->kept = c;
    s->kept_bytes += c->len;
    while (s->kept_bytes > s->retain_limit && s->kept != c) {
        struct es_chunk *old = s->kept;
        s->kept = es_store_next(s, old); /* ours too: it stays linked */
        s->kept_bytes -= old->len;
        s->retain_dropped_chunks++;
        s->retain_dropped_bytes += old->len;
        es_store_release(s, old);
    }
    return c;
}

struct es_chunk *es_store_join(struct es_store *s) {
    if (s->retaining) {
        s->retaining = false;
        struct es_chunk *first = s->kept; /* the store's references become the client's */
        s->kept = NULL;
        s->kept_bytes = 0;
        return first;
    }
    return NULL;
}
