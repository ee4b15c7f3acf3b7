/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: an eventlog header and one chunk after it, through
 * everything in cbits/ that reads what the RTS writes: the header parser,
 * the walker's chunk inspection (checked against the plain event iterator,
 * which must agree on every chunk), the definitions kept for late joiners,
 * and the block built from them (which must walk cleanly itself).
 *
 * Input: a big-endian u16 header length, the header, then the chunk. The
 * RTS is trusted to write well-formed eventlogs, but a bug in a GHC version
 * we have not seen, or in this library, must give "does not walk cleanly",
 * never a read out of bounds. Build and run with `make fuzz`. */
#include "delivery/es_pool.h"
#include "delivery/es_store.h"
#include "delivery/es_defs.h"
#include "format/es_events.h"
#include "format/es_header.h"
#include "fuzz_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walk_ctx {
    struct es_defs *defs;
    const uint8_t *chunk;
    size_t reported;
};

static void keep(const struct es_event *ev, void *ctx) {
    struct walk_ctx *w = ctx;
    w->reported++;
    (void)es_defs_keep(w->defs, ev, w->chunk);
}

/* Events in the chunk by the reference iterator: 0 with *events and
 * *has_end set when the chunk walks to its last byte, else -1. */
static int reference_walk(const struct es_header *h, const uint8_t *buf, size_t len, size_t *events,
                          size_t *defs, bool *has_end) {
    struct es_event_iter it;
    struct es_event ev;
    int r;
    *events = *defs = 0;
    *has_end = false;
    es_events_iter_init(&it, h, buf, len);
    while ((r = es_events_next(&it, &ev)) == ES_WALK_EVENT) {
        (*events)++;
        *defs += es_defs_is_definition(ev.type);
        CHECK(ev.offset + ev.len <= len && ev.payload + ev.payload_len <= buf + len);
    }
    if (r == ES_WALK_END) {
        *has_end = true;
        return it.pos == len ? 0 : -1; /* nothing may follow the end marker */
    }
    return r == ES_WALK_DONE ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct es_header h;
    static bool want[ES_MAX_EVENT_TYPES];
    if (!want[25])
        for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++)
            want[t] = es_defs_is_definition((uint16_t)t);
    if (size < 2 || (size_t)es_be16(data) > size - 2)
        return 0;
    size_t hlen = es_be16(data), clen = size - 2 - hlen;
    /* Copies of exactly their size, so that reading one byte past either
     * is caught. */
    uint8_t *hbuf = malloc(hlen + 1), *chunk = malloc(clen + 1);
    memcpy(hbuf, data + 2, hlen);
    memcpy(chunk, data + 2 + hlen, clen);

    (void)es_header_detect(hbuf, hlen);
    if (es_header_parse(hbuf, hlen, &h) == 0) {
        /* The parser's promises, which the walk below relies on. */
        CHECK(h.skip + h.len <= hlen && h.size[ES_EVENT_BLOCK_MARKER] == ES_BLOCK_MARKER_LEN - 10);
        struct es_defs defs;
        struct es_store store;
        es_defs_init(&defs, 1 << 20);
        es_store_init(&store, 0);
        struct walk_ctx w = {.defs = &defs, .chunk = chunk};
        struct es_chunk_info info;
        int r = es_events_inspect(&h, chunk, clen, &info, want, keep, &w);
        size_t events, ndefs;
        bool has_end;
        int rr = reference_walk(&h, chunk, clen, &events, &ndefs, &has_end);
        CHECK((r == 0) == (rr == 0));
        if (r == 0) {
            CHECK(info.events == events && info.has_end == has_end && w.reported == ndefs);
            es_defs_end_chunk(&defs, clen);
            struct es_chunk *block = es_defs_block(&defs, &store, clen);
            /* The synthesised block is walked by every client's parser:
             * with this header, it must walk like any block. */
            if (block != NULL) {
                struct es_chunk_info binfo;
                CHECK(es_events_inspect(&h, block->data, block->len, &binfo, NULL, NULL, NULL) ==
                      0);
                CHECK(binfo.is_block && binfo.cap == ES_GLOBAL_CAP && binfo.events == ndefs + 1 &&
                      binfo.block_len == block->len);
            }
            es_store_release(&store, block);
        }
        es_defs_destroy(&defs, &store);
        es_store_destroy(&store);
        CHECK(store.bytes_held == 0);
    }
    free(hbuf);
    free(chunk);
    return 0;
}
