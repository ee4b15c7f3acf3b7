/* SPDX-License-Identifier: BSD-3-Clause */
/* The command's side of the flight recorder without a program: durations
 * as typed, the trigger conditions (parsing, errors, judging
 * synthetic events), and the watcher's ring and files: blocks fed in
 * pieces of every size become whole in order, the oldest are let go by
 * time and by size with their definitions kept, a file written from the
 * ring parses from its header with the definitions first, and a block
 * longer than any a program sends is refused at the bound every reader
 * of blocks keeps (client/source/blocks.h). Runs under
 * ASan/UBSan. Sizes are test_sizes.c's. */
#include "flight/ring.h"
#include "flight/shot.h"
#include "flight/trigger.h"
#include "source/units.h"
#include "format/es_notice_text.h"
#include "format/es_stream.h"
#include "../unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

UNIT_CASE(client_flight_units) {
    uint64_t v;
    ok(es_units_duration("90", &v) && v == 90000000000ull, "90 is seconds");
    ok(es_units_duration("500ms", &v) && v == 500000000ull, "500ms");
    ok(es_units_duration("1.5m", &v) && v == 90000000000ull, "1.5m");
    ok(es_units_duration("2h", &v) && v == 7200000000000ull, "2h");
    ok(!es_units_duration("5 m", &v) && !es_units_duration("-1s", &v) &&
           !es_units_duration("5d", &v) && !es_units_duration("", &v),
       "5 m, -1s, 5d and nothing are not durations");
}

/* Every option that takes a time reads it the same way (--connect-timeout,
 * record --duration, control --timeout, metrics --linger). */
UNIT_CASE(client_units_seconds) {
    double s = -1;
    ok(es_units_seconds("2.5", 10, false, &s) && s == 2.5, "2.5 is seconds");
    ok(es_units_seconds("500ms", 10, false, &s) && s == 0.5, "500ms is half a second");
    ok(es_units_seconds("1m", 86400, false, &s) && s == 60, "1m is 60 s");
    ok(es_units_seconds("0", 10, true, &s) && s == 0, "0 where 0 is allowed (--linger)");
    s = 7;
    ok(!es_units_seconds("0", 10, false, &s) && !es_units_seconds("0ms", 10, false, &s) && s == 7,
       "0 refused where a time must pass, the value untouched");
    ok(!es_units_seconds("11", 10, false, &s) && !es_units_seconds("2d", 86400, false, &s) &&
           !es_units_seconds("", 10, false, &s) && !es_units_seconds(" 1", 10, false, &s) &&
           !es_units_seconds("-1", 10, true, &s) && !es_units_seconds("nan", 10, true, &s) &&
           !es_units_seconds("1e1", 100, true, &s) && !es_units_seconds("0x10", 100, true, &s),
       "over the most, an unknown unit, nothing, a space, a sign, nan, 1e1, 0x10: refused");
    ok(es_units_seconds("10", 10, false, &s) && s == 10, "the most itself is accepted");
}

static struct es_event event(uint16_t type, uint64_t time, const uint8_t *payload, size_t n) {
    return (struct es_event){
        .type = type, .time = time, .payload = payload, .payload_len = n, .len = 10 + n};
}

UNIT_CASE(client_flight_triggers) {
    struct es_triggers ts;
    memset(&ts, 0, sizeof ts);
    char err[400];
    ok(es_triggers_add(&ts, "gc-pause>50ms", err, sizeof err) == 0 &&
           es_triggers_add(&ts, "live>1G", err, sizeof err) == 0 &&
           es_triggers_add(&ts, "marker~^deploy [0-9]+$", err, sizeof err) == 0 &&
           es_triggers_add(&ts, "exit-failure", err, sizeof err) == 0,
       "four conditions");
    ok(es_triggers_add(&ts, "gc-pause>soon", err, sizeof err) != 0 && strstr(err, "duration"),
       "a pause without a duration: %s", err);
    ok(es_triggers_add(&ts, "marker~(", err, sizeof err) != 0 && strstr(err, "not a pattern"),
       "a broken pattern: %s", err);
    ok(es_triggers_add(&ts, "cpu>90%", err, sizeof err) != 0 && strstr(err, "exit-failure"),
       "an unknown condition lists the known ones: %s", err);
    bool want[ES_MAX_EVENT_TYPES] = {false};
    es_triggers_want(&ts, want);
    ok(want[ES_EVENT_GC_START] && want[ES_EVENT_GC_END] && want[ES_EVENT_HEAP_LIVE] &&
           want[ES_EVENT_USER_MARKER] && !want[ES_EVENT_HEAP_SIZE] && want[ES_EVENT_USER_MSG],
       "the types they look at");

    struct es_firing f;
    struct es_event e = event(ES_EVENT_GC_START, 1000000, NULL, 0);
    bool fired = es_triggers_event(&ts, &e, 1, &f);
    e = event(ES_EVENT_GC_END, 31000000, NULL, 0); /* capability 0 never started one */
    fired = fired || es_triggers_event(&ts, &e, 0, &f);
    e = event(ES_EVENT_GC_END, 41000000, NULL, 0); /* 40 ms */
    fired = fired || es_triggers_event(&ts, &e, 1, &f);
    ok(!fired, "a 40 ms pause, and an end without a start, do not fire");
    e = event(ES_EVENT_GC_START, 100000000, NULL, 0);
    es_triggers_event(&ts, &e, 1, &f);
    e = event(ES_EVENT_GC_END, 160500000, NULL, 0);
    ok(es_triggers_event(&ts, &e, 1, &f) && f.time == 160500000 &&
           strcmp(f.what, "a GC pause of 60.5 ms") == 0,
       "a 60.5 ms pause fires: %s", f.what);
    uint8_t live[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 1}; /* capset, 1 GiB + 1 */
    e = event(ES_EVENT_HEAP_LIVE, 5, live, sizeof live);
    ok(es_triggers_event(&ts, &e, 0, &f) && f.by->kind == ES_TRIGGER_LIVE, "live bytes over 1G");
    const char *m = "deploy 12", *n = "deploy 12 done";
    e = event(ES_EVENT_USER_MARKER, 7, (const uint8_t *)m, strlen(m));
    ok(es_triggers_event(&ts, &e, 0, &f) && strcmp(f.what, "the marker \"deploy 12\"") == 0,
       "a matching marker: %s", f.what);
    e = event(ES_EVENT_USER_MARKER, 8, (const uint8_t *)n, strlen(n));
    ok(!es_triggers_event(&ts, &e, 0, &f), "the pattern is anchored: no match");
    char text[200];
    snprintf(text, sizeof text, "%s", ES_NOTICE_PREFIX ES_NOTICE_ERROR_WORDS "boom");
    e = event(ES_EVENT_USER_MSG, 9, (const uint8_t *)text, strlen(text));
    ok(es_triggers_event(&ts, &e, 0xffff, &f) && f.by->kind == ES_TRIGGER_EXIT_FAILURE,
       "the error notice fires exit-failure");
    ok(!es_triggers_event(&ts, &e, 0xffff, &f), "a second one does not");
    ok(!es_triggers_end(&ts, true, 10, true, &f), "nor the end, after it fired at the error");
    struct es_triggers t2;
    memset(&t2, 0, sizeof t2);
    es_triggers_add(&t2, "exit-failure", err, sizeof err);
    ok(!es_triggers_end(&t2, false, 10, false, &f) && es_triggers_end(&t2, true, 10, false, &f),
       "a complete end does not fire exit-failure, a cut one does");
    es_triggers_free(&ts);
    es_triggers_free(&t2);
}

static bool msg_fires(struct es_triggers *ts, uint64_t t, const char *text, struct es_firing *f) {
    struct es_event e = event(ES_EVENT_USER_MSG, t, (const uint8_t *)text, strlen(text));
    return es_triggers_event(ts, &e, 0, f);
}

UNIT_CASE(client_flight_trigger_span) {
    struct es_triggers ts;
    memset(&ts, 0, sizeof ts);
    char err[400];
    ok(es_triggers_add(&ts, "span:a>b>100ms", err, sizeof err) == 0 && ts.t[0].label_len == 3 &&
           ts.t[0].threshold == 100000000,
       "a label may hold '>': the last one ends it");
    ok(es_triggers_add(&ts, "span:>1s", err, sizeof err) != 0 && strstr(err, "LABEL"),
       "no label: %s", err);
    ok(es_triggers_add(&ts, "span:req>x", err, sizeof err) != 0 && strstr(err, "duration"),
       "no duration: %s", err);
    ok(es_triggers_add(&ts, "span:req", err, sizeof err) != 0, "no threshold");
    bool want[ES_MAX_EVENT_TYPES] = {false};
    es_triggers_want(&ts, want);
    ok(want[ES_EVENT_USER_MSG] && want[ES_EVENT_USER_MARKER] && want[ES_EVENT_RUN_THREAD] &&
           want[ES_EVENT_STOP_THREAD],
       "a span condition reads messages, markers and the scheduler");
    struct es_firing f;
    bool fired = msg_fires(&ts, 1000, "START a>b", &f);
    fired = fired || msg_fires(&ts, 2000, "START other", &f);
    fired = fired || msg_fires(&ts, 50001000, "STOP a>b", &f); /* 50 ms */
    fired = fired || msg_fires(&ts, 300000000, "STOP other", &f);
    ok(!fired, "a 50 ms span, and another label's long one, do not fire");
    msg_fires(&ts, 400000000, "START a>b", &f);
    ok(es_triggers_keep_from(&ts, 450000000, 1) == 400000000 &&
           es_triggers_keep_from(&ts, 300000000, 1) == 300000000,
       "the watcher keeps from the open span's start, when earlier");
    msg_fires(&ts, 500000000, "FAIL a>b", &f);
    ok(msg_fires(&ts, 612500000, "STOP a>b", &f) && f.time == 612500000 && f.from == 400000000 &&
           strcmp(f.what, "a span \"a>b\" of 212.5 ms (from 0.400 s, failed)") == 0,
       "a 212.5 ms span fires at its end, from its start: %s", f.what);
    ok(es_triggers_keep_from(&ts, 700000000, 1) == 700000000, "nothing open: --before alone");
    es_triggers_free(&ts);
}

/* A header with a few types (from the recorded fixture), and blocks of
 * capability 0: USER_MSG "blk N", plus a THREAD_LABEL definition in some. */
static unsigned char *hdr_bytes;
static size_t hdr_len;
static struct es_header hdr;

static size_t make(uint8_t *out, unsigned n, uint64_t time, bool label) {
    char text[16];
    int k = snprintf(text, sizeof text, "blk %u", n);
    size_t len = ES_BLOCK_MARKER_LEN + 12 + (size_t)k;
    size_t lab = label ? 2 + 8 + 2 + 4 + 3 : 0; /* THREAD_LABEL: u32 thread, "lbl" */
    es_put_block_marker(out, time, (uint32_t)(len + lab), time + 1000, 0);
    uint8_t *e = out + ES_BLOCK_MARKER_LEN;
    es_put_be(e, ES_EVENT_USER_MSG, 2);
    es_put_be(e + 2, time, 8);
    es_put_be(e + 10, (uint64_t)k, 2);
    memcpy(e + 12, text, (size_t)k);
    if (label) {
        e = out + len;
        es_put_be(e, ES_EVENT_THREAD_LABEL, 2);
        es_put_be(e + 2, time, 8);
        es_put_be(e + 10, 7, 2);
        es_put_be(e + 12, n, 4);
        memcpy(e + 16, "lbl", 3);
    }
    return len + lab;
}

/* Feed a stream of the header and 40 blocks in pieces of `piece` bytes,
 * as the reader does: a marker before the bytes that complete it, so a
 * marker split across two pieces comes after the piece with its start. */
static void feed(struct es_ring *r, size_t piece) {
    uint8_t *s = malloc(hdr_len + 40 * 200);
    memcpy(s, hdr_bytes, hdr_len);
    size_t len = hdr_len, offs[41];
    for (unsigned i = 0; i < 40; i++) {
        offs[i] = len;
        len += make(s + len, i, (uint64_t)i * 1000000000, i % 10 == 0);
    }
    offs[40] = len;
    es_ring_header(r, &hdr, hdr_len);
    unsigned next = 0;
    for (size_t at = 0; at < len; at += piece) {
        size_t n = at + piece < len ? piece : len - at;
        for (; next < 40 && offs[next] + ES_BLOCK_MARKER_LEN <= at + n; next++) {
            struct es_event ev;
            struct es_event_iter it;
            es_events_iter_init(&it, &hdr, s + offs[next], offs[next + 1] - offs[next]);
            es_events_next(&it, &ev);
            es_ring_marker(r, &ev, offs[next]);
        }
        es_ring_bytes(r, at, s + at, n, NULL, NULL);
    }
    free(s);
}

/* What a file holds: "blk N" in order, thread labels, whether it parses. */
struct seen {
    unsigned blk[64];
    size_t n, labels;
};

static void seen_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct seen *v = ctx;
    if (ev->type == ES_EVENT_THREAD_LABEL)
        v->labels++;
    if (ev->type == ES_EVENT_USER_MSG && ev->payload_len > 4 && v->n < 64 &&
        memcmp(ev->payload, "blk ", 4) == 0)
        v->blk[v->n++] = (unsigned)strtoul((const char *)ev->payload + 4, NULL, 10);
}

UNIT_CASE(client_flight_ring_and_shot) {
    size_t len;
    hdr_bytes = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    es_header_parse(hdr_bytes, len, &hdr);
    hdr_len = hdr.len;
    bool in_order = true, all = true;
    for (size_t piece = 1; piece <= 4096; piece = piece * 3 + 1) {
        struct es_ring r;
        es_ring_init(&r, 1 << 20);
        feed(&r, piece);
        all = all && r.n == 40 && r.header_got == hdr_len;
        for (size_t i = 0; i < r.n; i++)
            in_order = in_order && es_ring_at(&r, i)->start_time == (uint64_t)i * 1000000000;
        es_ring_destroy(&r);
    }
    ok(all && in_order,
       "blocks fed in pieces of 1 to 3280 bytes (markers split across them) are whole, in order");

    struct es_ring r;
    es_ring_init(&r, 1 << 20);
    feed(&r, 777);
    es_ring_trim(&r, 25000000000ull);
    ok(r.n == 15 && es_ring_at(&r, 0)->start_time == 25000000000ull,
       "trimmed to blocks ending from 25 s on: %zu", r.n);
    ok(r.defs_len == 3 * 19, "the labels of the 3 blocks let go that had one are kept (%zu bytes)",
       r.defs_len);

    char path[] = "/tmp/es-test-shot-XXXXXX";
    int fd = mkstemp(path);
    struct es_shot s;
    ok(es_shot_begin(&s, fd, path, &r, 27500000000ull) == 0, "a shot begins");
    uint8_t b[200];
    struct es_ring_block late = {.data = b,
                                 .len = make(b, 40, 27000000000ull, false),
                                 .start_time = 27000000000ull,
                                 .end_time = 27000001000ull};
    ok(es_shot_block(&s, &late) == 0, "a block before its end is written");
    late.start_time = 28000000000ull;
    ok(es_shot_block(&s, &late) == 1, "one after its end ends it");
    ok(es_shot_end(&s, &hdr, false, 0, "the time after the trigger is over") == 0, "it ends");
    struct es_stream st;
    es_stream_init(&st);
    struct seen v = {.n = 0};
    struct es_stream_callbacks cb = {.on_event = seen_event, .ctx = &v};
    uint8_t buf[65536];
    fd = open(path, O_RDONLY);
    ssize_t k = read(fd, buf, sizeof buf);
    close(fd);
    unlink(path);
    int fr = k > 0 ? es_stream_feed(&st, buf, (size_t)k, &cb) : -1;
    ok(fr == 0 && es_stream_finish(&st) == 0 && v.n == 16 && v.blk[0] == 25 && v.blk[15] == 40,
       "the file parses: the labels kept, blocks 25 to 39, the late one, an end marker (%zu)", v.n);
    ok(v.labels == 4, "with the definitions first: the 3 labels let go and the one kept (%zu)",
       v.labels);
    es_stream_destroy(&st);
    es_ring_destroy(&r);

    /* The end marker: after the last block (GHC 9.0), or inside it, as
     * GHC 9.2+ writes its last block: either way the file has one. */
    for (int inside = 0; inside < 2; inside++) {
        es_ring_init(&r, 1 << 20);
        feed(&r, 4096);
        struct es_ring_block *lb = &r.b[(r.first + r.n - 1) % r.cap];
        uint64_t end = lb->offset + lb->len + 2;
        if (inside) {
            uint8_t *grown = realloc(lb->data, lb->len + 2);
            grown[lb->len] = grown[lb->len + 1] = 0xff;
            lb->data = grown;
            lb->len += 2;
            es_put_be(grown + 10, lb->len, 4); /* the marker's size covers it */
        }
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        es_shot_begin(&s, fd, path, &r, UINT64_MAX);
        ok(es_shot_end(&s, &hdr, true, end, "") == 0, "a complete shot ends (%s)",
           inside ? "its last block ends with the end marker" : "the end marker after it");
        fd = open(path, O_RDONLY);
        k = read(fd, buf, sizeof buf);
        close(fd);
        unlink(path);
        es_stream_init(&st);
        memset(&v, 0, sizeof v);
        fr = es_stream_feed(&st, buf, (size_t)k, &cb);
        ok(fr == 0 && es_stream_finish(&st) == 0 && buf[k - 1] == 0xff && buf[k - 2] == 0xff &&
               (k < 4 || buf[k - 3] != 0xff || buf[k - 4] != 0xff),
           "one end marker, last, nothing after it (%d %d %zd %02x%02x%02x%02x)", fr, st.state, k,
           buf[k - 4], buf[k - 3], buf[k - 2], buf[k - 1]);
        es_stream_destroy(&st);
        es_ring_destroy(&r);
    }

    es_ring_init(&r, 500);
    feed(&r, 100);
    ok(r.bytes <= 500 && r.let_go_for_size > 0 &&
           es_ring_at(&r, r.n - 1)->start_time == 39000000000ull,
       "past its size the ring lets the oldest go (%llu of them)",
       (unsigned long long)r.let_go_for_size);
    es_ring_destroy(&r);
    free(hdr_bytes);
}

/* Feed the ring `n` bytes at stream offset *at (a marker first, when
 * given): what es_ring_bytes returned. */
static int feed_at(struct es_ring *r, uint64_t *at, const uint8_t *p, size_t n, bool marker) {
    if (marker) {
        struct es_event ev;
        struct es_event_iter it;
        es_events_iter_init(&it, &hdr, p, n);
        es_events_next(&it, &ev);
        es_ring_marker(r, &ev, *at);
    }
    int e = es_ring_bytes(r, *at, p, n, NULL, NULL);
    *at += n;
    return e;
}

/* The header and one whole block, then (`claim`) a block marker that
 * claims 4 GiB and messages that keep coming, or (no claim) messages that
 * no marker claims: the ring holds at most the bound of every reader of
 * blocks (es_blocks_past_max) of them, then refuses the stream, lets them
 * go and says why; the block before stays. */
static void refuses_long(bool claim) {
    struct es_ring r;
    es_ring_init(&r, 1 << 20);
    es_ring_header(&r, &hdr, hdr_len);
    uint64_t at = 0, block_at;
    uint8_t b[200], msg[1012];
    feed_at(&r, &at, hdr_bytes, hdr_len, false);
    feed_at(&r, &at, b, make(b, 0, 1000, false), true);
    block_at = at;
    if (claim) {
        es_put_block_marker(b, 2000, 0xfffffff0u, 3000, 0);
        feed_at(&r, &at, b, ES_BLOCK_MARKER_LEN, true);
    }
    es_put_be(msg, ES_EVENT_USER_MSG, 2);
    es_put_be(msg + 2, 2500, 8);
    es_put_be(msg + 10, 1000, 2);
    memset(msg + 12, 'm', 1000);
    size_t staged_max = 0;
    int refused = 0, other = 0;
    while (at - block_at < ES_BLOCKS_MAX_BLOCK + (4u << 20)) {
        int e = feed_at(&r, &at, msg, sizeof msg, false);
        refused += e == -EMSGSIZE;
        other += e != 0 && e != -EMSGSIZE;
        if (r.stage.len > staged_max)
            staged_max = r.stage.len;
    }
    char why[700];
    es_ring_too_long_why(&r, why, sizeof why);
    char at_text[64];
    snprintf(at_text, sizeof at_text, "the block at byte %llu%s", (unsigned long long)block_at,
             claim ? ", whose" : " runs");
    ok(refused > 0 && other == 0 && staged_max <= ES_BLOCKS_MAX_BLOCK + sizeof msg &&
           r.stage.len == 0 && r.n == 1,
       "%s: at most %zu bytes held (%zu), then refused (-EMSGSIZE, %d times) and let go; the "
       "block before kept (%zu)",
       claim ? "a marker that claims 4 GiB" : "messages no marker claims",
       (size_t)ES_BLOCKS_MAX_BLOCK, staged_max, refused, r.n);
    ok(strstr(why, "malformed stream") != NULL && strstr(why, at_text) != NULL &&
           (strstr(why, "claims 4096.0 MiB") != NULL) == claim,
       "and says which block and why: %.100s", why);
    es_ring_destroy(&r);
}

UNIT_CASE(client_flight_ring_block_too_long) {
    size_t len;
    hdr_bytes = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    es_header_parse(hdr_bytes, len, &hdr);
    hdr_len = hdr.len;
    refuses_long(true);
    refuses_long(false);
    free(hdr_bytes);
}
