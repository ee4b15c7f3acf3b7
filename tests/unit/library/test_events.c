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

/* What the walk reports of a chunk, with the iterator (which steps each
 * event by its own length, es_events_extent) as the reference. */
struct walked {
    size_t n, offsets[4096];
};

static void note_offset(const struct es_event *ev, void *ctx) {
    struct walked *w = ctx;
    if (w->n < sizeof w->offsets / sizeof w->offsets[0])
        w->offsets[w->n] = ev->offset;
    w->n++;
}

/* One event of `type` at `p`, its payload `len` bytes of zeros (a
 * variable-size one says so); returns its length. */
static size_t put(uint8_t *p, const struct es_header *h, uint16_t type, size_t len) {
    size_t head = h->size[type] == ES_SIZE_VARIABLE ? 12 : 10;
    memset(p, 0, head + len);
    p[0] = (uint8_t)(type >> 8);
    p[1] = (uint8_t)type;
    if (head == 12) {
        p[10] = (uint8_t)(len >> 8);
        p[11] = (uint8_t)len;
    }
    return head + len;
}

/* The walk steps by the last event's length while the next one's agrees
 * (es_events.c, skim_part): runs of one length, lengths that alternate,
 * messages of one length and then another, in pieces longer than the
 * walk's prefetch distance; each walk must find every event where the
 * iterator does, also without counting (as the walker thread walks), and
 * an event that runs past the chunk after a run of others must fail it. */
UNIT_CASE(events_walk_steps_by_each_length) {
    size_t flen;
    uint8_t *fixture = unit_read_fixture("ghc-9.6.6.eventlog", &flen);
    struct es_header *h = malloc(sizeof *h);
    ok(es_header_parse(fixture, flen, h) == 0 && h->size[ES_EVENT_USER_MARKER] == ES_SIZE_VARIABLE,
       "the fixture's header parses, user markers of variable size");
    const uint16_t run = 1, stop = 2; /* RUN_THREAD, STOP_THREAD: two fixed sizes */
    ok(h->size[run] != h->size[stop] && h->size[run] < ES_SIZE_VARIABLE &&
           h->size[stop] < ES_SIZE_VARIABLE,
       "run and stop thread events are of two fixed sizes");
    size_t cap = 1 << 20, len = 0, expected = 0;
    uint8_t *buf = malloc(cap);
    uint32_t seed = 12345;
    while (len + 300 < cap) {
        seed = seed * 1103515245u + 12345u;
        unsigned pick = (seed >> 16) % 6, reps = 1 + (seed >> 8) % 40;
        for (unsigned i = 0; i < reps && len + 300 < cap; i++, expected++) {
            if (pick == 0)
                len += put(buf + len, h, run, h->size[run]);
            else if (pick == 1)
                len += put(buf + len, h, stop, h->size[stop]);
            else if (pick == 2) /* alternating */
                len += put(buf + len, h, i % 2 ? run : stop, h->size[i % 2 ? run : stop]);
            else if (pick == 3) /* messages of one length */
                len += put(buf + len, h, ES_EVENT_USER_MARKER, reps);
            else if (pick == 4) /* messages whose length changes now and then */
                len += put(buf + len, h, ES_EVENT_USER_MARKER, 3 + i / 4);
            else /* messages of the length of a fixed-size event */
                len += put(buf + len, h, ES_EVENT_USER_MARKER, h->size[run] - 2);
        }
    }
    /* The reference: the iterator's events and its markers' offsets. */
    struct walked ref = {0}, got = {0}, uncounted = {0};
    struct es_event_iter it;
    struct es_event ev;
    size_t iterated = 0;
    es_events_iter_init(&it, h, buf, len);
    while (es_events_next(&it, &ev) == ES_WALK_EVENT) {
        iterated++;
        if (ev.type == ES_EVENT_USER_MARKER)
            note_offset(&ev, &ref);
    }
    ok(iterated == expected && it.pos == len, "the iterator finds the %zu events written",
       expected);
    static bool want[ES_MAX_EVENT_TYPES];
    want[ES_EVENT_USER_MARKER] = true;
    struct es_chunk_info info;
    ok(es_events_inspect(h, buf, len, &info, want, note_offset, &got) == 0 &&
           info.events == expected,
       "the counting walk finds the same %zu events", info.events);
    ok(got.n == ref.n && memcmp(got.offsets, ref.offsets, sizeof ref.offsets) == 0,
       "and the %zu markers at the iterator's offsets", got.n);
    /* As the walker thread walks: the markers, no count; then wanting
     * nothing, so that every event, markers too, goes through the step. */
    struct es_walk_plan *plan = calloc(1, sizeof *plan);
    es_events_plan_init(plan, h, want, false);
    int r = es_events_walk(plan, buf, len, &info, note_offset, &uncounted);
    bool same = uncounted.n == ref.n;
    same = same && memcmp(uncounted.offsets, ref.offsets, sizeof ref.offsets) == 0;
    ok(r == 0 && info.events == 0 && same, "the uncounted walk finds the markers too");
    es_events_plan_init(plan, h, NULL, false);
    ok(es_events_walk(plan, buf, len, &info, NULL, NULL) == 0 && !info.has_end,
       "a walk that reports nothing steps over every event to the last byte");
    /* Cut after runs of each kind: every cut on an event boundary walks
     * cleanly, every other fails, with either plan. */
    size_t wrong = 0, cuts = 0;
    es_events_iter_init(&it, h, buf, len);
    size_t boundary = 0;
    for (size_t n = 1; n < len && cuts < 4000; n += 1 + n % 97, cuts++) {
        while (boundary < n && es_events_next(&it, &ev) == ES_WALK_EVENT)
            boundary = it.pos;
        bool clean = boundary == n;
        int counted = es_events_inspect(h, buf, n, &info, NULL, NULL, NULL);
        int walked = es_events_walk(plan, buf, n, &info, NULL, NULL);
        if (counted != (clean ? 0 : -EINVAL) || walked != counted)
            wrong++;
    }
    ok(wrong == 0, "%zu cuts: on a boundary clean, elsewhere refused", cuts);
    free(plan);
    free(buf);
    free(h);
    free(fixture);
}
