/* SPDX-License-Identifier: BSD-3-Clause */
/* The parsing half of the eventlog-socket command (client/source/conn.c) and the
 * whole-block writer behind `record` (client/source/blocks.c), on the recorded
 * fixtures: a recording of a whole stream is the stream byte for byte,
 * whatever pieces it arrives in; a recording cut anywhere is a prefix of
 * the stream ending between blocks, plus an end marker, and parses to
 * the end; the program's name and pid come out of the stream. A cut one
 * ends with the cut notice; a failed write (a file size limit here, as a
 * full disk) leaves the file cut back to its last whole block. */
#include "source/blocks.h"
#include "source/conn.h"
#include "../unit.h"

#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>

struct rec {
    struct es_blocks blocks;
};

static bool skip_cost; /* record() leaves cost notices out */

static void on_header(struct es_conn *c, void *ctx) {
    struct rec *r = ctx;
    es_blocks_header(&r->blocks, c->stream.header.len);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    struct rec *r = ctx;
    es_blocks_event(&r->blocks, ev, offset);
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    struct rec *r = ctx;
    if (c->stream.state == ES_STREAM_END)
        es_blocks_end_marker(&r->blocks, c->stream.offset);
    es_blocks_append(&r->blocks, data, n);
}

/* Record `len` bytes of `data`, fed in pieces of `piece` bytes (0: varied),
 * into a temporary file; returns its contents (malloc'd) and length. */
static const char *cut_why;   /* record() ends with es_blocks_finish_cut(why) when set */
static struct es_blocks last; /* record()'s writer as it ended (its buffer freed) */

static uint8_t *record(const uint8_t *data, size_t len, size_t piece, size_t *out_len,
                       struct es_conn_info *info) {
    struct rec r;
    struct es_conn c;
    struct es_conn_callbacks cb = {
        .on_header = on_header, .on_event = on_event, .on_bytes = on_bytes, .ctx = &r};
    es_blocks_init(&r.blocks);
    r.blocks.skip_cost_notices = skip_cost;
    es_conn_init_parser(&c, &cb);
    FILE *f = tmpfile();
    es_blocks_set_fd(&r.blocks, fileno(f));
    size_t pos = 0, k = 1;
    while (pos < len) {
        size_t n = piece ? piece : (k = k * 7 % 5003 + 1);
        if (n > len - pos)
            n = len - pos;
        if (es_conn_feed(&c, data + pos, n) != 0)
            break;
        pos += n;
    }
    if (cut_why)
        es_blocks_finish_cut(&r.blocks, &c.stream.header, cut_why);
    else
        es_blocks_finish(&r.blocks);
    last = r.blocks;
    if (info)
        *info = c.info;
    es_conn_destroy_parser(&c);
    es_blocks_destroy(&r.blocks);
    fflush(f);
    long size = ftell(f);
    uint8_t *out = malloc((size_t)size + 1);
    rewind(f);
    *out_len = fread(out, 1, (size_t)size, f);
    fclose(f);
    return out;
}

/* Whether `buf` parses with the library's reader to its end marker. */
static bool parses(const uint8_t *buf, size_t len) {
    struct es_stream s;
    es_stream_init(&s);
    int r = es_stream_feed(&s, buf, len, NULL);
    bool good = r == 0 && es_stream_finish(&s) == 0;
    es_stream_destroy(&s);
    return good;
}

static void check_fixture(const char *path) {
    size_t len;
    uint8_t *data = unit_read_file(path, &len);
    const char *name = strrchr(path, '/') + 1;
    size_t pieces[] = {len, 1, 4096, 0};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        size_t out_len;
        struct es_conn_info info;
        uint8_t *out = record(data, len, pieces[i], &out_len, &info);
        ok(out_len == len && memcmp(out, data, len) == 0,
           "%s: a whole stream fed in pieces of %zu bytes (0: varied) is recorded byte for byte",
           name, pieces[i]);
        if (i == 0) {
            ok(info.have_args && info.program[0] != '\0' && info.have_pid && info.pid > 0,
               "%s: the program's name (%s) and pid (%u) come from the stream", name, info.program,
               info.pid);
            ok(info.drop_notices == 0, "%s: no drop notices", name);
        }
        free(out);
    }
    /* Cut at every byte offset:
     * the longest prefix of the stream that ends between blocks, and an end
     * marker. */
    size_t bad = 0, cuts = 0, longest = 0;
    struct es_header hdr;
    es_header_parse(data, len, &hdr);
    for (size_t cut = 0; cut < len; cut++) {
        /* The longest prefix of whole blocks (by their markers' sizes). */
        size_t whole = hdr.len;
        for (size_t p = hdr.len; p + 24 <= len && es_be16(data + p) == ES_EVENT_BLOCK_MARKER;) {
            size_t size = es_be32(data + p + 10);
            if (size < 24 || p + size > cut)
                break;
            whole = p += size;
        }
        size_t out_len;
        uint8_t *out = record(data, cut, 0, &out_len, NULL);
        cuts++;
        bool good;
        if (cut < hdr.len)
            good = out_len == 0;
        else
            good = out_len == whole + 2 && memcmp(out, data, out_len - 2) == 0 &&
                   out[out_len - 2] == 0xff && out[out_len - 1] == 0xff && parses(out, out_len);
        if (good && out_len > longest)
            longest = out_len;
        bad += !good;
        free(out);
    }
    ok(bad == 0,
       "%s: %zu recordings cut short: each the longest prefix of whole blocks "
       "and an end marker, and parses (%zu not)",
       name, cuts, bad);
    free(data);
}

UNIT_FIXTURE_CASE(client_blocks_whole_and_cut, path) {
    check_fixture(path);
}

/* A drop notice as the library writes it (cbits/delivery/es_notice.c) is counted. */
UNIT_CASE(client_blocks_drop_notice) {
    size_t len;
    uint8_t *data = unit_read_fixture("ghc-9.6.6.eventlog", &len);
    struct es_header hdr;
    es_header_parse(data, len, &hdr);
    static const char msg[] = "eventlog-socket: dropped 7 chunks (3.5 MiB)";
    size_t n = sizeof msg - 1, blen = ES_BLOCK_MARKER_LEN + 12 + n;
    uint8_t *s = malloc(hdr.len + blen + 2);
    memcpy(s, data, hdr.len);
    uint8_t *b = s + hdr.len;
    es_put_block_marker(b, 5, (uint32_t)blen, 5, ES_GLOBAL_CAP);
    es_put_be(b + 24, ES_EVENT_USER_MSG, 2);
    es_put_be(b + 26, 5, 8);
    es_put_be(b + 34, n, 2);
    memcpy(b + 36, msg, n);
    s[hdr.len + blen] = s[hdr.len + blen + 1] = 0xff;
    size_t out_len;
    struct es_conn_info info;
    uint8_t *out = record(s, hdr.len + blen + 2, 0, &out_len, &info);
    ok(info.drop_notices == 1 && info.dropped_chunks == 7,
       "a drop notice is counted, with its chunks (%llu, %llu)",
       (unsigned long long)info.drop_notices, (unsigned long long)info.dropped_chunks);
    ok(out_len == hdr.len + blen + 2 && memcmp(out, s, out_len) == 0, "and recorded as it came");
    free(out);
    free(s);
    free(data);
}

/* A notice block as the library writes it: `msg` in the global buffer,
 * at `at`; returns its length. */
static size_t put_notice(uint8_t *at, const char *msg, uint64_t time) {
    size_t n = strlen(msg), blen = ES_BLOCK_MARKER_LEN + 12 + n;
    es_put_block_marker(at, time, (uint32_t)blen, time, ES_GLOBAL_CAP);
    es_put_be(at + 24, ES_EVENT_USER_MSG, 2);
    es_put_be(at + 26, time, 8);
    es_put_be(at + 34, n, 2);
    memcpy(at + 36, msg, n);
    return blen;
}

/* `serve` asks for cost notices but records the program's own stream:
 * with skip_cost_notices the recording is the stream without them,
 * whatever pieces it arrives in; a message that only looks like one, or
 * a cost notice in a block with other events, is kept. */
UNIT_CASE(client_blocks_cost_notices) {
    size_t len;
    uint8_t *data = unit_read_fixture("ghc-9.6.6.eventlog", &len);
    struct es_header hdr;
    es_header_parse(data, len, &hdr);
    static const char cost[] = "eventlog-socket: streaming cost 1.2 ms of CPU in the last 1.0 s "
                               "(RTS threads 0.4, walker 0.4, loop 0.4), 3.0 MiB sent";
    size_t b1 = es_be32(data + hdr.len + 10); /* the first block */
    /* header, notice, first block, look-alike, notice, notice, the rest */
    uint8_t *s = malloc(len + 4096), *want = malloc(len + 4096);
    size_t n = 0, w = 0, l;
    memcpy(s, data, hdr.len + 0);
    n = hdr.len;
    n += put_notice(s + n, cost, 1);
    memcpy(s + n, data + hdr.len, b1);
    n += b1;
    l = put_notice(s + n, "eventlog-socket: streaming costs", 2);
    memcpy(want, data, hdr.len + b1);
    memcpy(want + hdr.len + b1, s + n, l);
    w = hdr.len + b1 + l;
    n += l;
    n += put_notice(s + n, cost, 3);
    n += put_notice(s + n, cost, 4);
    memcpy(s + n, data + hdr.len + b1, len - hdr.len - b1);
    n += len - hdr.len - b1;
    memcpy(want + w, data + hdr.len + b1, len - hdr.len - b1);
    w += len - hdr.len - b1;
    size_t pieces[] = {0, 1, 7, 100000, n};
    unsigned good = 0;
    skip_cost = true;
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        size_t out_len;
        uint8_t *out = record(s, n, pieces[i], &out_len, NULL);
        good += out_len == w && memcmp(out, want, w) == 0;
        free(out);
    }
    ok(good == 5, "cost notices left out of the recording, in any pieces (%u of 5)", good);
    skip_cost = false;
    size_t out_len;
    uint8_t *out = record(s, n, 0, &out_len, NULL);
    ok(out_len == n && memcmp(out, s, n) == 0, "and kept when not asked to leave them out");
    free(out);
    free(s);
    free(want);
    free(data);
}

/* Garbage instead of a header: no file content, a one-line reason. */
UNIT_CASE(client_blocks_not_an_eventlog) {
    struct es_conn c;
    es_conn_init_parser(&c, NULL);
    int r = es_conn_feed(&c, (const uint8_t *)"HTTP/1.1 200 OK\r\n", 17);
    ok(r != 0 && strstr(c.error, "not an eventlog-socket server") != NULL &&
           strchr(c.error, '\n') == NULL,
       "an HTTP reply is not an eventlog-socket server (%s)", c.error);
    es_conn_destroy_parser(&c);
}

/* A cut recording ends with the cut notice, then an end marker, and
 * parses; a whole one has none. */
UNIT_CASE(client_blocks_cut_notice) {
    size_t len, out_len;
    uint8_t *data = unit_read_fixture("ghc-9.6.6.eventlog", &len);
    cut_why = "killed (test)";
    uint8_t *out = record(data, len * 2 / 3, 0, &out_len, NULL);
    static const char text[] = "eventlog-socket: recording cut: killed (test)";
    bool found = false;
    for (size_t i = 0; i + sizeof text - 1 <= out_len && !found; i++)
        found = memcmp(out + i, text, sizeof text - 1) == 0;
    ok(found && out_len > 2 && out[out_len - 2] == 0xff && out[out_len - 1] == 0xff &&
           parses(out, out_len),
       "a cut recording ends with the cut notice and an end marker, and parses (%zu bytes)",
       out_len);
    free(out);
    out = record(data, len, 0, &out_len, NULL);
    ok(out_len == len && memcmp(out, data, len) == 0, "a whole one is the stream, no notice");
    free(out);
    cut_why = NULL;
    free(data);
}

/* A write that fails (here a file size limit, as a full disk): the file is
 * cut back to its last whole block and ends with an end marker. */
UNIT_CASE(client_blocks_write_fails) {
    size_t len, out_len;
    uint8_t *data = unit_read_fixture("ghc-9.6.6.eventlog", &len);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    size_t bad = 0, tries = 0;
    /* From inside the header (nothing whole: an empty file) to the last block. */
    for (size_t limit = len / 7; limit < len; limit += len / 7, tries++) {
        lim = old;
        lim.rlim_cur = limit;
        setrlimit(RLIMIT_FSIZE, &lim);
        uint8_t *out = record(data, len, 4096, &out_len, NULL);
        setrlimit(RLIMIT_FSIZE, &old);
        bool empty = out_len == 0 && last.salvaged == 0;
        bool cut = out_len > 2 && last.salvaged == (int64_t)out_len && out_len <= limit &&
                   memcmp(out, data, out_len - 2) == 0 && out[out_len - 2] == 0xff &&
                   out[out_len - 1] == 0xff && parses(out, out_len);
        bad += !(last.error == EFBIG && (empty || cut));
        free(out);
    }
    signal(SIGXFSZ, SIG_DFL);
    ok(bad == 0,
       "%zu recordings under a file size limit: each cut back to whole blocks and an end "
       "marker, and parses (%zu not)",
       tries, bad);
    free(data);
}

/* A disk with room for the header and a little more (a file size limit
 * just past it here) and a stream that arrives whole in one piece: the
 * header is written on its own first, so the file keeps it and an end
 * marker after it, and parses (a first write of the header and blocks
 * together failed part-way, leaving an empty file). */
static void room_for_the_header(const char *path) {
    size_t len, out_len;
    uint8_t *data = unit_read_file(path, &len);
    struct es_stream s;
    es_stream_init(&s);
    es_stream_feed(&s, data, len, NULL);
    size_t header = s.header.len;
    es_stream_destroy(&s);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = header + 100;
    setrlimit(RLIMIT_FSIZE, &lim);
    uint8_t *out = record(data, len, len, &out_len, NULL);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    ok(last.error == EFBIG && out_len == header + 2 && memcmp(out, data, header) == 0 &&
           parses(out, out_len),
       "%s: room for the header and 100 bytes, the stream in one piece: the header and an "
       "end marker kept (%zu bytes of %zu)",
       path, out_len, header + 2);
    free(out);
    free(data);
}

UNIT_FIXTURE_CASE(client_blocks_room_for_the_header, path) {
    room_for_the_header(path);
}

static void be_put(uint8_t *p, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* A block marker that claims 4 GiB, then messages that keep coming: the
 * writer holds at most ES_BLOCKS_MAX_BLOCK of the unfinished block, then
 * refuses the stream (-EMSGSIZE) and lets its bytes go; the file ends
 * after the last whole block, with the cut notice and an end marker. */
UNIT_CASE(client_blocks_block_too_long) {
    size_t len;
    uint8_t *data = unit_read_fixture("ghc-9.6.6.eventlog", &len);
    struct rec r;
    struct es_conn c;
    struct es_conn_callbacks cb = {.on_header = on_header, .on_event = on_event, .ctx = &r};
    es_blocks_init(&r.blocks);
    es_conn_init_parser(&c, &cb);
    FILE *f = tmpfile();
    es_blocks_set_fd(&r.blocks, fileno(f));
    /* The fixture up to its end marker, then the long block. */
    size_t body = len - 2;
    es_conn_feed(&c, data, body);
    int first = es_blocks_append(&r.blocks, data, body);
    uint8_t marker[24], msg[1012];
    be_put(marker, ES_EVENT_BLOCK_MARKER, 2);
    be_put(marker + 2, 1, 8);
    be_put(marker + 10, 0xfffffff0u, 4);
    be_put(marker + 14, 2, 8);
    be_put(marker + 22, 0, 2);
    es_conn_feed(&c, marker, sizeof marker);
    int r1 = es_blocks_append(&r.blocks, marker, sizeof marker), refused = 0;
    size_t held_max = 0, sent = sizeof marker;
    be_put(msg, ES_EVENT_USER_MSG, 2);
    be_put(msg + 2, 3, 8);
    be_put(msg + 10, 1000, 2);
    memset(msg + 12, 'm', 1000);
    while (sent < ES_BLOCKS_MAX_BLOCK + (4u << 20)) {
        es_conn_feed(&c, msg, sizeof msg);
        int e = es_blocks_append(&r.blocks, msg, sizeof msg);
        refused += e == -EMSGSIZE;
        if (es_blocks_held(&r.blocks) > held_max)
            held_max = es_blocks_held(&r.blocks);
        sent += sizeof msg;
    }
    ok(first == 0 && r1 == 0 && refused > 0 && held_max <= ES_BLOCKS_MAX_BLOCK + sizeof msg &&
           es_blocks_held(&r.blocks) == 0,
       "a block that claims 4 GiB: at most %zu bytes of it held (%zu), then refused "
       "(-EMSGSIZE, %d times) and let go",
       (size_t)ES_BLOCKS_MAX_BLOCK, held_max, refused);
    es_blocks_finish_cut(&r.blocks, &c.stream.header, "a block too long");
    es_conn_destroy_parser(&c);
    es_blocks_destroy(&r.blocks);
    fflush(f);
    long size = ftell(f);
    uint8_t *out = malloc((size_t)size);
    rewind(f);
    size_t out_len = fread(out, 1, (size_t)size, f);
    fclose(f);
    ok(out_len > body && memcmp(out, data, body) == 0 && parses(out, out_len),
       "the file: the stream before the long block, the cut notice, an end marker (%zu bytes)",
       out_len);
    free(out);
    free(data);
}
