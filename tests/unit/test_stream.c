/* The incremental stream reader on real recorded streams: fed in pieces of
 * every size it finds exactly the events ghc-events found; cut at every
 * offset it reports a cut stream, never a complete one, and never crashes;
 * garbage is "not an eventlog". Argument: the fixture directory. */
#include "es_stream.h"
#include "tap.h"

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
    struct es_stream_callbacks cb = {on_header, on_event, c};
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
    tap_expect_path(path, expect, sizeof expect);
    size_t len;
    uint8_t *buf = tap_read_file(path, &len);
    static const size_t pieces[] = {1, 2, 3, 13, 4096, 65536, 0, (size_t)1 << 30};
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        struct es_stream s;
        struct counts c = {0};
        es_stream_init(&s);
        int r = feed_all(&s, buf, len, pieces[i], &c);
        int f = es_stream_finish(&s);
        ok(r == 0 && f == 0 && c.header && s.state == ES_STREAM_END,
           "%s: pieces of %zu: complete stream", path, pieces[i]);
        ok(c.events == tap_expect(expect, "events") && c.blocks == tap_expect(expect, "blocks") &&
               c.markers == tap_expect(expect, "UserMarker"),
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
    ok(boundary == 1 + (size_t)tap_expect(expect, "events") + (size_t)tap_expect(expect, "blocks"),
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

int main(int argc, char **argv) {
    tap_each_fixture(argc > 1 ? argv[1] : "tests/fixtures", check_fixture);

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

    /* Random bytes never crash the reader and are never a complete stream. */
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
    return tap_done();
}
