/* SPDX-License-Identifier: BSD-3-Clause */
/* The walker thread over real recorded streams: chunks pushed by "RTS
 * threads" come out in order and unchanged, the header chunk is marked,
 * exactly the last chunk is marked as ending the stream, and each chunk
 * lists exactly its definition events (what late joiners are given).
 * Argument: the fixture directory. */
#include "delivery/es_defs.h"
#include "delivery/es_pool.h"
#include "delivery/es_walker.h"
#include "../unit.h"

#include <stdatomic.h>

static atomic_int wakes;

static void count_wake(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&wakes, 1);
}

/* The definition events of a chunk, found independently with the plain
 * iterator: their offsets, in order. */
static size_t definitions_of(const struct es_header *h, const uint8_t *p, size_t n, size_t *offsets,
                             size_t max) {
    struct es_event_iter it;
    struct es_event ev;
    size_t k = 0;
    es_events_iter_init(&it, h, p, n);
    while (es_events_next(&it, &ev) == ES_WALK_EVENT)
        if (es_defs_is_definition(ev.type) && k < max)
            offsets[k++] = ev.offset;
    return k;
}

static void check_fixture(const char *path) {
    size_t len;
    unsigned char *buf = unit_read_file(path, &len);
    struct es_header *h = malloc(sizeof *h);
    es_header_parse(buf, len, h);
    bool want[ES_MAX_EVENT_TYPES];
    for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++)
        want[t] = es_defs_is_definition((uint16_t)t);

    struct es_inbox in;
    struct es_walker w;
    es_inbox_init(&in, 0);
    es_walker_init(&w, &in, want, count_wake, NULL);
    atomic_store(&wakes, 0);
    /* A chunk before the header cannot be walked: it passes unmarked. */
    static const uint8_t early[24] = {0, 18};
    es_inbox_push(&in, early, sizeof early, true);
    ok(es_walker_start(&w) == 0, "%s: walker started", path);

    /* The header, then one chunk per block, as the RTS writes them. */
    uint64_t pushed_from = uv_hrtime();
    size_t nchunks = 0, pos = h->len, starts[4096], ends[4096];
    es_inbox_push(&in, buf, h->len, true);
    while (pos < len && nchunks < 4096) {
        size_t n = len - pos;
        if (es_be16(buf + pos) == ES_EVENT_BLOCK_MARKER) {
            n = es_be32(buf + pos + 10);
            if (pos + n + 2 == len)
                n += 2;
        }
        starts[nchunks] = pos;
        ends[nchunks++] = pos + n;
        es_inbox_push(&in, buf + pos, n, true);
        pos += n;
    }
    es_inbox_close(&in);
    ok(!es_inbox_push(&in, buf, 16, true), "%s: a closed inbox refuses chunks", path);
    es_walker_join(&w);
    uint64_t pushed_to = uv_hrtime();

    /* Every capability handed blocks over while they were pushed; without
     * them the next flush would be due one interval after the last. */
    const uint64_t interval = UINT64_C(100000000) /* 100 ms */,
                   long_ago = pushed_from - 5 * interval;
    uint64_t due = es_walker_next_flush(&w, long_ago, interval);
    ok(due >= pushed_from + interval && due <= pushed_to + interval,
       "%s: the next flush is due one interval after the capabilities' hand-overs", path);

    struct es_queue taken;
    es_queue_init(&taken);
    ok(es_walker_take(&w, &taken) && es_queue_len(&taken) == nchunks + 2 && es_queue_valid(&taken),
       "%s: every chunk pushed is taken, each once", path);
    ok(!es_walker_take(&w, &taken) && es_queue_len(&taken) == nchunks + 2,
       "%s: a second take finds nothing more", path);
    struct es_chunk *c = es_chunk_of(es_queue_pop_head(&taken));
    ok(c != NULL && c->len == sizeof early && c->flags == 0 && c->ndefs == 0,
       "%s: data before the header passes on unwalked", path);
    es_pool_chunk_free(c);
    c = es_chunk_of(es_queue_pop_head(&taken));
    ok(c != NULL && c->len == h->len && memcmp(c->data, buf, h->len) == 0 &&
           (c->flags & ES_CHUNK_HEADER),
       "%s: the header comes out first, marked as the header", path);
    ok(c != NULL && c->header != NULL && c->header->len == h->len &&
           c->header->ntypes == h->ntypes && memcmp(c->header->size, h->size, sizeof h->size) == 0,
       "%s: the header carries the walker's parse of it for the loop", path);
    es_pool_chunk_free(c);
    c = es_chunk_of(es_queue_pop_head(&taken));

    size_t i = 0, same = 0, marked_end = 0, end_at = 0, defs = 0, defs_right = 0, lost = 0;
    size_t offsets[8192];
    for (; c != NULL; c = es_chunk_of(es_queue_pop_head(&taken)), i++) {
        if (i < nchunks && c->len == ends[i] - starts[i] &&
            memcmp(c->data, buf + starts[i], c->len) == 0)
            same++;
        if (c->flags & ES_CHUNK_END) {
            marked_end++;
            end_at = i;
        }
        lost += (c->flags & ES_CHUNK_DEFS_LOST) != 0;
        size_t k = definitions_of(h, c->data, c->len, offsets, 8192);
        bool right = k == c->ndefs;
        for (size_t j = 0; right && j < k; j++)
            right = c->defs[j].offset == offsets[j] &&
                    es_be16(c->data + offsets[j]) < ES_MAX_EVENT_TYPES &&
                    want[es_be16(c->data + c->defs[j].offset)];
        defs += c->ndefs;
        defs_right += right;
        es_pool_chunk_free(c);
    }
    ok(i == nchunks && same == nchunks, "%s: all %zu chunks came out in order, unchanged", path,
       nchunks);
    ok(marked_end == 1 && end_at == nchunks - 1, "%s: only the last chunk ends the stream", path);
    ok(defs > 0 && defs_right == nchunks && lost == 0,
       "%s: every chunk lists exactly its %zu definition events", path, defs);
    ok(atomic_load(&wakes) >= 1, "%s: the loop was woken (%d times)", path, atomic_load(&wakes));
    es_walker_destroy(&w);
    es_inbox_destroy(&in);
    free(h);
    free(buf);
}

UNIT_FIXTURE_CASE(walker_recorded, path) {
    check_fixture(path);
}
