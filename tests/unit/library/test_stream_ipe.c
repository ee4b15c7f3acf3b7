/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream reader and GHC 9.4+'s IPE events, which declare one byte more
 * than they carry (rts/eventlog/EventLog.c, postIPE): after the header of
 * the GHC 9.6.6 fixture, an IPE event as that RTS writes it, a correct
 * one, and a marker; the reader must give all three, with the right
 * payloads, and reach the end marker. The library's own walks (the
 * walker thread's es_events_inspect, and the event iterator) must step over
 * the same bytes cleanly, also when a chunk ends right after a short one.
 * Argument: the fixture directory. */
#include "format/es_events.h"
#include "format/es_stream.h"
#include "../unit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct seen {
    int ipes, markers, other;
    size_t ipe_len[2];
    char marker[32];
};

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct seen *s = ctx;
    if (ev->type == ES_EVENT_IPE) {
        if (s->ipes < 2)
            s->ipe_len[s->ipes] = ev->payload_len;
        s->ipes++;
    } else if (ev->type == ES_EVENT_USER_MARKER) {
        snprintf(s->marker, sizeof s->marker, "%.*s", (int)ev->payload_len, ev->payload);
        s->markers++;
    } else {
        s->other++;
    }
}

/* The same, for the library's walks (es_event_fn). */
static void on_walked(const struct es_event *ev, void *ctx) {
    on_event(ev, NULL, ctx);
}

/* An event: type, time 0, then (variable size) the declared length. */
static size_t put_event(uint8_t *p, uint16_t type, const void *payload, size_t len,
                        size_t declared) {
    memset(p, 0, 12);
    p[0] = (uint8_t)(type >> 8);
    p[1] = (uint8_t)type;
    p[10] = (uint8_t)(declared >> 8);
    p[11] = (uint8_t)declared;
    memcpy(p + 12, payload, len);
    return 12 + len;
}

UNIT_CASE(stream_ipe_one_byte_short) {
    size_t flen;
    uint8_t *fixture = unit_read_fixture("ghc-9.6.6.eventlog", &flen);
    struct es_header h;
    ok(es_header_parse(fixture, flen, &h) == 0 && h.size[ES_EVENT_IPE] == ES_SIZE_VARIABLE &&
           h.size[ES_EVENT_USER_MARKER] == ES_SIZE_VARIABLE,
       "the 9.6.6 fixture declares IPE and USER_MARKER with variable sizes");

    /* Address, table, closure type, type, label, module, "file:span". */
    static const char strs[] = "Circle_info\0"
                               "14\0"
                               "Int# %1 -> Shape\0"
                               "Circle\0"
                               "Shapes\0"
                               "Shapes.hs:5:14-24";
    uint8_t ipe[8 + sizeof strs] = {0, 0, 0, 0, 0, 0x40, 0xb4, 0x08};
    memcpy(ipe + 8, strs, sizeof strs);
    uint8_t buf[65536];
    memcpy(buf, fixture, h.len);
    size_t n = h.len;
    n += put_event(buf + n, ES_EVENT_IPE, ipe, sizeof ipe, sizeof ipe + 1); /* as 9.6 writes it */
    n += put_event(buf + n, ES_EVENT_IPE, ipe, sizeof ipe, sizeof ipe);     /* as it should */
    n += put_event(buf + n, ES_EVENT_USER_MARKER, "after", 5, 5);
    buf[n++] = 0xff;
    buf[n++] = 0xff;

    static const size_t pieces[] = {1, 7, sizeof buf};
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        struct seen seen = {0};
        struct es_stream s;
        struct es_stream_callbacks cb = {.on_event = on_event, .ctx = &seen};
        es_stream_init(&s);
        int r = 0;
        for (size_t pos = 0; pos < n && r == 0; pos += pieces[i])
            r = es_stream_feed(&s, buf + pos, pos + pieces[i] > n ? n - pos : pieces[i], &cb);
        ok(r == 0 && s.state == ES_STREAM_END && es_stream_finish(&s) == 0,
           "pieces of %zu: the stream reads to its end marker (%s)", pieces[i],
           s.error ? s.error : "no error");
        ok(seen.ipes == 2 && seen.ipe_len[0] == sizeof ipe && seen.ipe_len[1] == sizeof ipe,
           "pieces of %zu: both IPE events, each with its %zu bytes (%zu, %zu)", pieces[i],
           sizeof ipe, seen.ipe_len[0], seen.ipe_len[1]);
        ok(seen.markers == 1 && strcmp(seen.marker, "after") == 0 && seen.other == 0,
           "pieces of %zu: the marker after them is whole (%d, %s)", pieces[i], seen.markers,
           seen.marker);
        es_stream_destroy(&s);
    }
    /* The library's chunk walk, as the walker thread does it: every event
     * stepped over (want NULL), and with IPE events wanted. */
    const uint8_t *ev0 = buf + h.len;
    size_t evlen = n - h.len;
    bool want[ES_MAX_EVENT_TYPES] = {false};
    want[ES_EVENT_IPE] = true;
    for (int w = 0; w < 2; w++) {
        struct seen seen = {0};
        struct es_chunk_info info;
        int r = es_events_inspect(&h, ev0, evlen, &info, w ? want : NULL, on_walked, &seen);
        ok(r == 0 && info.events == 3 && info.has_end,
           "chunk walk (%s): walks cleanly to the end marker, 3 events (%d, %zu)",
           w ? "IPE wanted" : "nothing wanted", r, info.events);
        if (w)
            ok(seen.ipes == 2 && seen.ipe_len[0] == sizeof ipe && seen.ipe_len[1] == sizeof ipe,
               "chunk walk: both IPE events with %zu bytes (%zu, %zu)", sizeof ipe, seen.ipe_len[0],
               seen.ipe_len[1]);
    }
    /* A chunk that ends right after a short IPE event (the RTS's buffer
     * ends there): the declared length runs one byte past the chunk. */
    size_t short_len = 12 + sizeof ipe;
    struct es_chunk_info info;
    ok(es_events_inspect(&h, ev0, short_len, &info, NULL, on_walked, NULL) == 0 && info.events == 1,
       "a chunk ending with a short IPE event walks cleanly");
    struct es_event_iter it;
    struct es_event ev;
    es_events_iter_init(&it, &h, ev0, evlen);
    int k = 0, rr;
    size_t lens[3] = {0};
    while ((rr = es_events_next(&it, &ev)) == ES_WALK_EVENT && k < 3)
        lens[k++] = ev.payload_len;
    ok(rr == ES_WALK_END && k == 3 && lens[0] == sizeof ipe && lens[1] == sizeof ipe &&
           lens[2] == 5,
       "the event iterator: the two IPE events and the marker, then the end (%d, %d)", rr, k);
    free(fixture);
}
