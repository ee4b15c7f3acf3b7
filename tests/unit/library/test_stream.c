/* SPDX-License-Identifier: BSD-3-Clause */
/* The incremental stream reader on real recorded streams: fed in pieces of
 * every size it finds exactly the events ghc-events found; cut at every
 * offset it reports a cut stream, never a complete one, and never crashes;
 * garbage is "not an eventlog". Argument: the fixture directory. */
#include "format/es_stream.h"
#include "../unit.h"

#include <errno.h>
#include <string.h>

struct counts {
    long events, blocks, markers;
    bool header;
};

static void on_header(const struct es_header *h, void *ctx) {
    (void)h;
    ((struct counts *)ctx)->header = true;
}

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    struct counts *c = ctx;
    /* The event's bytes are where the reader says they are. */
    if (es_be16(base + ev->offset) != ev->type)
        c->events = -1000000;
    if (ev->type == ES_EVENT_BLOCK_MARKER)
        c->blocks++;
    else
        c->events++;
    if (ev->type == 58)
        c->markers++;
}

/* Feed `len` bytes in pieces of `piece` (0: pieces of varying size). */
static int feed_all(struct es_stream *s, const uint8_t *buf, size_t len, size_t piece,
                    struct counts *c) {
    struct es_stream_callbacks cb = {.on_header = on_header, .on_event = on_event, .ctx = c};
    size_t pos = 0, k = 1;
    while (pos < len) {
        size_t n = piece ? piece : (k * 7919) % 70001 + 1;
        k++;
        if (n > len - pos)
            n = len - pos;
        int r = es_stream_feed(s, buf + pos, n, &cb);
        if (r != 0)
            return r;
        pos += n;
    }
    return 0;
}

static void check_fixture(const char *path) {
    char expect[512];
    unit_expect_path(path, expect, sizeof expect);
    size_t len;
    uint8_t *buf = unit_read_file(path, &len);
    static const size_t pieces[] = {1, 2, 3, 13, 4096, 65536, 0, (size_t)1 << 30};
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        struct es_stream s;
        struct counts c = {0};
        es_stream_init(&s);
        int r = feed_all(&s, buf, len, pieces[i], &c);
        int f = es_stream_finish(&s);
        ok(r == 0 && f == 0 && c.header && s.state == ES_STREAM_END,
           "%s: pieces of %zu: complete stream", path, pieces[i]);
        ok(c.events == unit_expect(expect, "events") && c.blocks == unit_expect(expect, "blocks") &&
               c.markers == unit_expect(expect, "UserMarker"),
           "%s: pieces of %zu: %ld events, %ld blocks, %ld markers as ghc-events found", path,
           pieces[i], c.events, c.blocks, c.markers);
        es_stream_destroy(&s);
    }

    /* Cut at every offset: never complete, never an error, the right reason. */
    size_t bad = 0, boundary = 0;
    for (size_t cut = 0; cut < len; cut++) {
        struct es_stream s;
        struct counts c = {0};
        es_stream_init(&s);
        int r = feed_all(&s, buf, cut, 0, &c);
        int f = es_stream_finish(&s);
        if (r != 0 || f != -EPIPE || s.error == NULL || s.error_offset != cut)
            bad++;
        if (f == -EPIPE && strstr(s.error, "without the end-of-data marker"))
            boundary++;
        es_stream_destroy(&s);
    }
    ok(bad == 0, "%s: cut at each of %zu offsets: reported as cut, where it was cut (%zu bad)",
       path, len, bad);
    /* After the header and after every event but the end marker. */
    ok(boundary ==
           1 + (size_t)unit_expect(expect, "events") + (size_t)unit_expect(expect, "blocks"),
       "%s: a cut between events says the end marker is missing (%zu times)", path, boundary);

    /* Bytes after the end marker, and an undeclared event type. */
    uint8_t *more = malloc(len + 1);
    memcpy(more, buf, len);
    more[len] = 0;
    struct es_stream s;
    struct counts c = {0};
    es_stream_init(&s);
    ok(feed_all(&s, more, len + 1, 4096, &c) == -EINVAL && s.state == ES_STREAM_ERROR &&
           s.error_offset == len,
       "%s: a byte after the end marker is an error at its offset", path);
    es_stream_destroy(&s);
    struct es_header h;
    es_header_parse(buf, len, &h);
    memcpy(more, buf, len);
    more[h.len] = 0x03;
    more[h.len + 1] = 0xE7; /* type 999, never declared */
    es_stream_init(&s);
    ok(feed_all(&s, more, len, 0, &c) == -EINVAL && s.error_offset == h.len &&
           es_stream_finish(&s) == -EINVAL,
       "%s: an undeclared event type right after the header is an error", path);
    es_stream_destroy(&s);
    free(more);
    free(buf);
}

/* The owner's tap (es_stream_tap) while skimming: every event of a tapped
 * type goes to the owner, with its ctx, just before the consumer gets the
 * same event, and none is skimmed; latest_time is the latest time of an
 * event other than a block marker. */
struct tapped {
    long tapped, reported, skipped, out_of_turn;
    size_t last_offset; /* of the event tapped last, for the consumer to see next */
    bool pending;
    void *owner;
};

static void tap_owner(const struct es_event *ev, const uint8_t *base, void *ctx) {
    struct tapped *t = *(struct tapped **)ctx; /* the owner holds the tally */
    (void)base;
    t->tapped++;
    t->out_of_turn += t->pending;
    t->pending = true;
    t->last_offset = ev->offset;
    t->owner = ctx;
}

static void tap_consumer(const struct es_event *ev, const uint8_t *base, void *ctx) {
    struct tapped *t = ctx;
    (void)base;
    t->reported++;
    if (ev->type == ES_EVENT_RUN_THREAD || ev->type == ES_EVENT_PROGRAM_ARGS) {
        t->out_of_turn += !t->pending || t->last_offset != ev->offset;
        t->pending = false;
    }
}

static void tap_skip(const struct es_stream_skip *run, void *ctx) {
    ((struct tapped *)ctx)->skipped += (long)run->events;
}

/* Every event read: the latest time and how many of the tapped types. */
struct whole {
    uint64_t latest;
    long tapped_types;
};

static void whole_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct whole *w = ctx;
    if (ev->type != ES_EVENT_BLOCK_MARKER && ev->time > w->latest)
        w->latest = ev->time;
    w->tapped_types += ev->type == ES_EVENT_RUN_THREAD || ev->type == ES_EVENT_PROGRAM_ARGS;
}

static void check_tap(const char *path) {
    size_t len;
    uint8_t *buf = unit_read_file(path, &len);
    struct whole w = {0};
    struct es_stream s;
    es_stream_init(&s);
    struct es_stream_callbacks all = {.on_event = whole_event, .ctx = &w};
    es_stream_feed(&s, buf, len, &all);
    uint64_t events = s.events;
    es_stream_destroy(&s);
    long runs = 0;
    static bool want[ES_MAX_EVENT_TYPES] = {
        [ES_EVENT_BLOCK_MARKER] = true, [ES_EVENT_GC_START] = true};
    static bool tapped[ES_MAX_EVENT_TYPES] = {
        [ES_EVENT_RUN_THREAD] = true, [ES_EVENT_PROGRAM_ARGS] = true};
    static const size_t pieces[] = {1, 13, 4096, (size_t)1 << 30};
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        struct tapped t = {0};
        struct tapped *owner = &t;
        es_stream_init(&s);
        es_stream_skim(&s, want, NULL, tap_skip);
        es_stream_tap(&s, tapped, tap_owner);
        struct es_stream_callbacks cb = {.on_event = tap_consumer, .ctx = &t, .owner_ctx = &owner};
        for (size_t pos = 0; pos < len; pos += pieces[i])
            es_stream_feed(&s, buf + pos, len - pos < pieces[i] ? len - pos : pieces[i], &cb);
        runs += t.skipped > 0;
        ok(es_stream_finish(&s) == 0 && t.tapped == w.tapped_types && t.tapped > 0 &&
               t.out_of_turn == 0 && !t.pending && t.owner == &owner &&
               t.reported + t.skipped == (long)s.events && s.events == events &&
               s.latest_time == w.latest,
           "%s: pieces of %zu: the tap sees its %ld events first, with the owner's ctx; %ld "
           "reported, %ld skimmed; latest time %llu ns",
           path, pieces[i], t.tapped, t.reported, t.skipped, (unsigned long long)s.latest_time);
        es_stream_destroy(&s);
    }
    ok(runs == 4, "%s: skimming went on beside the tap", path);
    free(buf);
}

UNIT_FIXTURE_CASE(stream_recorded, path) {
    check_fixture(path);
}

UNIT_FIXTURE_CASE(stream_tap, path) {
    check_tap(path);
}

UNIT_CASE(stream_not_an_eventlog) {
    struct es_stream s;
    struct es_stream_callbacks none = {0};
    es_stream_init(&s);
    ok(es_stream_feed(&s, "HTTP/1.1 200 OK\r\n", 17, &none) == -EINVAL &&
           strstr(s.error, "not an eventlog") != NULL,
       "a peer that is not an eventlog server is refused at once");
    es_stream_destroy(&s);

    es_stream_init(&s);
    ok(es_stream_finish(&s) == -EPIPE && strcmp(s.error, "the stream is empty") == 0,
       "an empty stream is reported as empty");
    es_stream_destroy(&s);
}

/* Random bytes never crash the reader and are never a complete stream. */
UNIT_CASE(stream_random_bytes) {
    struct es_stream s;
    struct es_stream_callbacks none = {0};
    unsigned seed = 12345, completes = 0;
    uint8_t junk[4096];
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (uint8_t)((seed = seed * 1103515245u + 12345u) >> 16);
        if (round % 2)
            memcpy(junk, "hdrbhetb", 8);
        es_stream_init(&s);
        es_stream_feed(&s, junk, (size_t)(round * 37 % 4096) + 1, &none);
        completes += es_stream_finish(&s) == 0;
        es_stream_destroy(&s);
    }
    ok(completes == 0, "2000 random inputs: none taken for a complete eventlog");
}
