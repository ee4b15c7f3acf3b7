/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_defs.h"

#include "es_pool.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void es_defs_init(struct es_defs *d, size_t limit) {
    memset(d, 0, sizeof *d);
    d->limit = limit;
    for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++)
        d->types[t] = es_defs_is_definition((uint16_t)t);
}

int es_defs_take_chunk(struct es_defs *d, struct es_chunk *c) {
    int r = c->flags & ES_CHUNK_DEFS_LOST ? -ENOMEM : 0;
    bool was_full = d->full;
    for (size_t i = 0; i < c->ndefs; i++) {
        /* The walker found each one inside the chunk. */
        assert(c->defs[i].offset <= c->len && c->defs[i].len <= c->len - c->defs[i].offset);
        const uint8_t *p = c->data + c->defs[i].offset;
        struct es_event ev = {.type = es_be16(p),
                              .time = es_be64(p + 2),
                              .offset = c->defs[i].offset,
                              .len = c->defs[i].len};
        if (!es_defs_keep(d, &ev, c->data) && !was_full && r == 0)
            r = d->oom ? -ENOMEM : -ENOSPC;
    }
    free(c->defs);
    c->defs = NULL;
    c->ndefs = c->defs_cap = 0;
    return r;
}

void es_defs_destroy(struct es_defs *d, struct es_store *st) {
    if (d->block)
        es_store_release(st, d->block);
    free(d->buf);
    free(d->marks);
    memset(d, 0, sizeof *d);
}

bool es_defs_is_definition(uint16_t type) {
    return es_event_types_is_definition(type);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (q == NULL)
        return false;
    *p = q;
    *cap = n;
    return true;
}

bool es_defs_keep(struct es_defs *d, const struct es_event *ev, const uint8_t *chunk) {
    if (d->full || d->len + ev->len > d->limit) {
        d->full = true;
        return false;
    }
    /* One mark per chunk that keeps something; it stays open (offset
     * unknown) until es_defs_end_chunk. */
    bool open = d->nmarks > 0 && d->marks[d->nmarks - 1].end_offset == UINT64_MAX;
    void *buf = d->buf;
    void *marks = d->marks;
    bool grown = grow(&buf, &d->cap, d->len + ev->len, 1);
    d->buf = buf;
    grown = grown && grow(&marks, &d->marks_cap, d->nmarks + 1, sizeof *d->marks);
    d->marks = marks;
    if (!grown) {
        d->full = d->oom = true;
        return false;
    }
    if (d->len == 0)
        d->first_time = ev->time;
    memcpy(d->buf + d->len, chunk + ev->offset, ev->len);
    d->len += ev->len;
    if (!open)
        d->marks[d->nmarks++].end_offset = UINT64_MAX;
    d->marks[d->nmarks - 1].len = d->len;
    d->marks[d->nmarks - 1].last_time = ev->time;
    assert(d->len <= d->limit);
    return true;
}

void es_defs_end_chunk(struct es_defs *d, uint64_t end_offset) {
    /* The open mark (if this chunk kept anything) now has its offset. */
    if (d->nmarks > 0 && d->marks[d->nmarks - 1].end_offset == UINT64_MAX)
        d->marks[d->nmarks - 1].end_offset = end_offset;
    /* Marks follow the stream: offsets and lengths never go back. */
    assert(d->nmarks < 2 ||
           (d->marks[d->nmarks - 2].end_offset <= d->marks[d->nmarks - 1].end_offset &&
            d->marks[d->nmarks - 2].len <= d->marks[d->nmarks - 1].len));
}

static struct es_chunk *make_block(const struct es_defs *d, size_t len, uint64_t last_time) {
    struct es_chunk *b = es_pool_chunk_new(NULL, ES_BLOCK_MARKER_LEN + len);
    if (b == NULL)
        return NULL;
    es_put_block_marker(b->data, d->first_time, (uint32_t)(ES_BLOCK_MARKER_LEN + len), last_time,
                        ES_GLOBAL_CAP);
    memcpy(b->data + ES_BLOCK_MARKER_LEN, d->buf, len);
    return b;
}

struct es_chunk *es_defs_block(struct es_defs *d, struct es_store *st, uint64_t start_offset) {
    /* The kept events from chunks that end at or before start_offset. */
    size_t i = d->nmarks;
    while (i > 0 && d->marks[i - 1].end_offset > start_offset)
        i--;
    if (i == 0)
        return NULL;
    const struct es_defs_mark *m = &d->marks[i - 1];
    assert(m->len <= d->len);
    if (m->len == d->len) {
        /* Everything: the common case, shared by all late joiners. */
        if (d->block != NULL && d->block->len != ES_BLOCK_MARKER_LEN + d->len) {
            es_store_release(st, d->block);
            d->block = NULL;
        }
        if (d->block == NULL) {
            d->block = make_block(d, d->len, m->last_time);
            if (d->block == NULL)
                return NULL;
            es_store_adopt(st, d->block);
        }
        return es_store_ref(d->block);
    }
    struct es_chunk *b = make_block(d, m->len, m->last_time);
    if (b != NULL)
        es_store_adopt(st, b);
    return b;
}
