/* SPDX-License-Identifier: BSD-3-Clause */
#include "shot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whole bytes at the end of the file. */
static int put(struct es_shot *s, const uint8_t *data, size_t n) {
    int r = es_blocks_append(&s->b, data, n);
    s->off += n;
    return r != 0 ? r : es_blocks_whole(&s->b, s->off);
}

static int put_block(struct es_shot *s, const struct es_ring_block *b) {
    if (s->from == 0 || b->start_time < s->from)
        s->from = b->start_time;
    if (b->end_time > s->last)
        s->last = s->b.last_time = b->end_time;
    s->stream_end = b->offset + b->len;
    return put(s, b->data, b->len);
}

int es_shot_begin(struct es_shot *s, int fd, const char *path, const struct es_ring *r,
                  uint64_t until) {
    memset(s, 0, sizeof *s);
    es_blocks_init(&s->b);
    s->until = until;
    snprintf(s->path, sizeof s->path, "%s", path);
    s->open = true;
    int e = es_blocks_set_fd(&s->b, fd);
    es_blocks_header(&s->b, r->header_len);
    if (e == 0)
        e = put(s, r->header, r->header_len);
    size_t dlen;
    uint8_t *defs = es_ring_defs_block(r, &dlen);
    if (e == 0 && defs != NULL)
        e = put(s, defs, dlen);
    free(defs);
    for (size_t i = 0; e == 0 && i < r->n; i++)
        e = put_block(s, es_ring_at(r, i));
    return e;
}

int es_shot_block(struct es_shot *s, const struct es_ring_block *b) {
    if (!s->open)
        return 1;
    if (b->start_time >= s->until)
        return 1;
    int e = put_block(s, b);
    return e != 0 ? e : 0;
}

int es_shot_end(struct es_shot *s, const struct es_header *hdr, bool complete, uint64_t end,
                const char *why) {
    if (!s->open)
        return 0;
    s->open = false;
    int e = 0;
    bool inside = complete && s->stream_end >= end;
    if (inside) {
        /* GHC 9.2+ ends its last block with the end marker: written. */
        es_blocks_end_marker(&s->b, s->off);
    } else if (complete) {
        static const uint8_t marker[2] = {0xff, 0xff};
        e = es_blocks_append(&s->b, marker, 2);
        s->off += 2;
        es_blocks_end_marker(&s->b, s->off);
    }
    int f = es_blocks_finish_cut(&s->b, hdr, why);
    if (e == 0)
        e = f;
    /* The writer kept an end marker after the last block while it went
     * on (blocks.h); the file's own is in that block. */
    if (inside && e == 0 && s->b.seekable && ftruncate(s->b.fd, (off_t)s->off) != 0)
        e = -errno;
    if (close(s->b.fd) != 0 && e == 0)
        e = -errno;
    es_blocks_destroy(&s->b);
    return e;
}
