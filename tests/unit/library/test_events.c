/* SPDX-License-Identifier: BSD-3-Clause */
/* The event walker over real recorded streams: it must find exactly the
 * events and blocks that ghc-events found (the .expect files), and reject
 * damaged input without reading past it. Argument: the fixture directory. */
#include "format/es_events.h"
#include "../unit.h"

#include <errno.h>
#include <string.h>

static void check_fixture(const char *path) {
    char expect[512];
    unit_expect_path(path, expect, sizeof expect);
    size_t len;
    unsigned char *buf = unit_read_file(path, &len);
    struct es_header *h = malloc(sizeof *h);
    es_header_parse(buf, len, h);
    const unsigned char *data = buf + h->len;
    size_t dlen = len - h->len;

    /* Walk everything after the header in one go. */
    struct es_event_iter it;
    struct es_event ev;
    long events = 0, blocks = 0, markers = 0;
    int r;
    es_events_iter_init(&it, h, data, dlen);
    while ((r = es_events_next(&it, &ev)) == ES_WALK_EVENT) {
        if (ev.type == ES_EVENT_BLOCK_MARKER)
            blocks++;
        else
            events++;
        if (ev.type == 58 /* user marker */)
            markers++;
    }
    ok(r == ES_WALK_END && it.pos == dlen, "%s: walks to the end marker at the last byte", path);
    ok(events == unit_expect(expect, "events"), "%s: %ld events, as ghc-events found", path,
       events);
    ok(blocks == unit_expect(expect, "blocks"), "%s: %ld blocks, as ghc-events found", path,
       blocks);
    ok(markers == unit_expect(expect, "UserMarker"), "%s: %ld user markers", path, markers);

    /* Walk block by block, as chunks arrive from the RTS. */
    size_t pos = 0, chunk_events = 0, bad = 0, marker_wrong = 0;
    bool saw_end = false;
    while (pos < dlen) {
        struct es_chunk_info info;
        size_t n = dlen - pos;
        bool block = es_be16(data + pos) == ES_EVENT_BLOCK_MARKER;
        if (block) {
            n = es_be32(data + pos + 10);
            /* GHC >= 9.2 writes the end marker in the last block's chunk. */
            if (pos + n + 2 == dlen)
                n += 2;
        }
        if (es_events_inspect(h, data + pos, n, &info, NULL, NULL, NULL) != 0)
            bad++;
        /* The block's own size and capability, read from its marker. */
        if (info.is_block != block || (block && (info.block_len != es_be32(data + pos + 10) ||
                                                 info.cap != es_be16(data + pos + 22))))
            marker_wrong++;
        chunk_events += info.events;
        saw_end |= info.has_end;
        pos += n;
    }
    ok(bad == 0 && saw_end, "%s: every block inspects cleanly, the last has the end", path);
    ok((long)chunk_events == events + blocks, "%s: chunk walk counts the same events", path);
    ok(marker_wrong == 0, "%s: every block's marker is reported, and only those", path);

    /* Every cut inside the first block is reported, never over-read. */
    size_t first = es_be32(data + 10), wrong = 0;
    for (size_t n = 1; n < first; n++) {
        unsigned char *copy = malloc(n);
        memcpy(copy, data, n);
        struct es_chunk_info info;
        es_events_iter_init(&it, h, copy, n);
        int last;
        while ((last = es_events_next(&it, &ev)) == ES_WALK_EVENT)
            ;
        /* A cut on an event boundary walks cleanly; anything else fails. */
        if (last == ES_WALK_DONE) {
            if (es_events_inspect(h, copy, n, &info, NULL, NULL, NULL) != 0)
                wrong++;
        } else if (last != -EINVAL ||
                   es_events_inspect(h, copy, n, &info, NULL, NULL, NULL) != -EINVAL) {
            wrong++;
        }
        free(copy);
    }
    ok(wrong == 0, "%s: truncations of the first block are handled", path);

    /* An event type the header does not declare stops the walk. */
    unsigned char unknown[12] = {0x01, 0xf4};
    es_events_iter_init(&it, h, unknown, sizeof unknown);
    ok(es_events_next(&it, &ev) == -EINVAL && it.pos == 0, "%s: undeclared type rejected", path);
    unsigned char trailing[4] = {0xff, 0xff, 0, 0};
    struct es_chunk_info info;
    ok(es_events_inspect(h, trailing, 4, &info, NULL, NULL, NULL) == -EINVAL,
       "%s: bytes after the end marker rejected", path);
    free(h);
    free(buf);
}

UNIT_FIXTURE_CASE(events_recorded, path) {
    check_fixture(path);
}
