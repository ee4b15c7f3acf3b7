/* SPDX-License-Identifier: BSD-3-Clause */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void es_ring_init(struct es_ring *r, size_t max_bytes) {
    memset(r, 0, sizeof *r);
    r->max_bytes = max_bytes;
}

void es_ring_destroy(struct es_ring *r) {
    for (size_t i = 0; i < r->n; i++)
        free(r->b[(r->first + i) % r->cap].data);
    free(r->b);
    free(r->pend);
    es_bytes_free(&r->stage);
    free(r->defs);
    free(r->header);
    memset(r, 0, sizeof *r);
}

void es_ring_header(struct es_ring *r, const struct es_header *hdr, size_t len) {
    r->hdr = hdr;
    r->header_len = len;
}

int es_ring_marker(struct es_ring *r, const struct es_event *ev, uint64_t offset) {
    if (ev->payload_len < 12 || r->too_long)
        return 0;
    size_t len = es_be32(ev->payload);
    if (len < ES_BLOCK_MARKER_LEN || offset < r->stage_off)
        return 0;
    if (r->npend == r->pend_cap) {
        size_t cap = r->pend_cap ? 2 * r->pend_cap : 8;
        struct es_ring_block *p = realloc(r->pend, cap * sizeof *p);
        if (p == NULL)
            return -ENOMEM;
        r->pend = p;
        r->pend_cap = cap;
    }
    r->pend[r->npend++] = (struct es_ring_block){
        .len = len, .offset = offset, .start_time = ev->time, .end_time = es_be64(ev->payload + 4)};
    if (offset + len > r->claimed)
        r->claimed = offset + len;
    return 0;
}

/* Keep the definition events of a block let go. */
static void keep_defs(struct es_ring *r, const struct es_ring_block *b) {
    struct es_event_iter it;
    struct es_event ev;
    es_events_iter_init(&it, r->hdr, b->data, b->len);
    while (es_events_next(&it, &ev) == ES_WALK_EVENT) {
        if (!es_event_types_is_definition(ev.type) || r->defs_len + ev.len > ES_RING_DEFS_MAX)
            continue;
        if (r->defs_len + ev.len > r->defs_cap) {
            size_t cap = r->defs_cap ? r->defs_cap : 4096;
            while (cap < r->defs_len + ev.len)
                cap *= 2;
            uint8_t *p = realloc(r->defs, cap);
            if (p == NULL)
                return;
            r->defs = p;
            r->defs_cap = cap;
        }
        if (r->defs_len == 0)
            r->defs_first = ev.time;
        r->defs_last = ev.time;
        memcpy(r->defs + r->defs_len, b->data + ev.offset, ev.len);
        r->defs_len += ev.len;
    }
}

static void let_go(struct es_ring *r) {
    struct es_ring_block *b = &r->b[r->first];
    if (r->hdr != NULL)
        keep_defs(r, b);
    r->bytes -= b->len + ES_RING_PER_BLOCK;
    free(b->data);
    r->first = (r->first + 1) % r->cap;
    r->n--;
}

static int push(struct es_ring *r, const struct es_ring_block *b) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct es_ring_block *p = malloc(cap * sizeof *p);
        if (p == NULL)
            return -ENOMEM;
        for (size_t i = 0; i < r->n; i++)
            p[i] = r->b[(r->first + i) % r->cap];
        free(r->b);
        r->b = p;
        r->cap = cap;
        r->first = 0;
    }
    r->b[(r->first + r->n) % r->cap] = *b;
    r->n++;
    r->bytes += b->len + ES_RING_PER_BLOCK;
    while (r->bytes > r->max_bytes && r->n > 1) {
        r->let_go_for_size++;
        let_go(r);
    }
    return 0;
}

/* The header's bytes among [offset, offset + n). */
static int take_header(struct es_ring *r, uint64_t offset, const uint8_t *data, size_t n) {
    if (offset >= r->header_len || r->header_got >= r->header_len)
        return 0;
    if (r->header == NULL && (r->header = malloc(r->header_len)) == NULL)
        return -ENOMEM;
    size_t k = r->header_len - (size_t)offset < n ? r->header_len - (size_t)offset : n;
    memcpy(r->header + offset, data, k);
    r->header_got = (size_t)offset + k;
    return 0;
}

/* Let go of the staged bytes before `off`: no block will claim them. */
static void unstage(struct es_ring *r, uint64_t off) {
    if (off <= r->stage_off)
        return;
    size_t k = off - r->stage_off < r->stage.len ? (size_t)(off - r->stage_off) : r->stage.len;
    es_bytes_consume(&r->stage, k);
    r->stage_off += k;
}

/* The bytes no whole block holds grew past the bound: refuse the stream,
 * letting them go. */
static int too_long(struct es_ring *r) {
    r->too_long = true;
    r->long_at = r->stage_off;
    r->long_claims = r->npend > 0 && r->pend[0].offset == r->stage_off ? r->pend[0].len : 0;
    es_bytes_free(&r->stage);
    r->npend = 0;
    return -EMSGSIZE;
}

void es_ring_too_long_why(const struct es_ring *r, char *out, size_t size) {
    es_blocks_refusal_words(r->long_at, r->long_claims,
                            "the recordings already written, and the one being written up to "
                            "the block before it, are whole",
                            out, size);
}

int es_ring_bytes(struct es_ring *r, uint64_t offset, const uint8_t *data, size_t n,
                  es_ring_block_fn *fn, void *ctx) {
    if (r->too_long)
        return -EMSGSIZE;
    if (take_header(r, offset, data, n) != 0)
        return -ENOMEM;
    if (r->stage.len == 0)
        r->stage_off = offset; /* nothing held: the next bytes start it */
    if (es_bytes_append(&r->stage, data, n, 1 << 16) != 0)
        return -ENOMEM;
    uint64_t end = r->stage_off + r->stage.len;
    size_t done = 0; /* pending blocks made whole */
    int rc = 0;
    for (; done < r->npend && r->pend[done].offset + r->pend[done].len <= end; done++) {
        struct es_ring_block b = r->pend[done];
        if (b.offset < r->stage_off || (b.data = malloc(b.len)) == NULL)
            continue; /* its first bytes went (cannot happen), or no memory */
        memcpy(b.data, r->stage.data + (b.offset - r->stage_off), b.len);
        if (push(r, &b) != 0) {
            free(b.data); /* it stays pending, with the bytes it needs */
            rc = -ENOMEM;
            break;
        }
        if (fn != NULL)
            fn(es_ring_at(r, r->n - 1), ctx);
    }
    r->npend -= done;
    if (done > 0)
        memmove(r->pend, r->pend + done, r->npend * sizeof *r->pend);
    /* Keep what a block may still claim: from the first one waiting, or
     * past the last one known (the header and the end marker are no
     * block's). */
    unstage(r, r->npend > 0                 ? r->pend[0].offset
               : r->claimed > r->header_len ? r->claimed
                                            : r->header_len);
    if (rc == 0 && es_blocks_past_max(r->stage.len))
        return too_long(r);
    return rc;
}

void es_ring_trim(struct es_ring *r, uint64_t time) {
    while (r->n > 0 && es_ring_at(r, 0)->end_time < time)
        let_go(r);
}

uint8_t *es_ring_defs_block(const struct es_ring *r, size_t *len) {
    if (r->defs_len == 0)
        return NULL;
    *len = ES_BLOCK_MARKER_LEN + r->defs_len;
    uint8_t *b = malloc(*len);
    if (b == NULL)
        return NULL;
    es_put_block_marker(b, r->defs_first, (uint32_t)*len, r->defs_last, ES_GLOBAL_CAP);
    memcpy(b + ES_BLOCK_MARKER_LEN, r->defs, r->defs_len);
    return b;
}
