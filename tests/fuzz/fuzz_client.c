/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: arbitrary bytes as the stream an `eventlog-socket`
 * command receives, through the command's own stream handling: the
 * connection's parsing half (client/source/conn.c: header check, events with
 * their offsets, program name and pid, drop notices) and record's
 * whole-block writer (client/source/blocks.c) writing to a real file, and
 * `profile`'s time profile (client/profile/prof.c), whose counts must agree,
 * and the web page's tree of it (client/profile/write.c), whose root holds
 * them all; and the spans' matcher (client/spans/spans.c).
 *
 * Input: the stream's bytes, fed in pieces whose sizes follow from the
 * input's length (so one input always splits the same way), then ended as
 * a recording is: whatever arrived, the file must be a prefix of the stream
 * that parses to its end marker (the stream's own, or one added after the
 * last whole block), or empty when no whole header arrived. Build and run
 * with `make fuzz`; `make check` replays the starting inputs. */
#include "profile/prof.h"
#include "profile/write.h"
#include "spans/spans.h"
#include "source/blocks.h"
#include "source/conn.h"
#include "fuzz_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rec {
    struct es_blocks blocks;
    struct es_prof prof;
    struct es_spans spans;
    uint64_t last_offset; /* events come in stream order */
    bool header;
};

static void on_header(struct es_conn *c, void *ctx) {
    struct rec *r = ctx;
    r->header = true;
    es_blocks_header(&r->blocks, c->stream.header.len);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    struct rec *r = ctx;
    CHECK(offset >= r->last_offset && offset >= c->stream.header.len);
    r->last_offset = offset + ev->len;
    es_blocks_event(&r->blocks, ev, offset);
    es_prof_event(&r->prof, ev);
    /* Capabilities from the event's time: a hostile stream's any. */
    es_spans_event(&r->spans, ev, (int)(ev->time % 5) - 1);
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    struct rec *r = ctx;
    if (c->stream.state == ES_STREAM_END)
        es_blocks_end_marker(&r->blocks, c->stream.offset);
    CHECK(es_blocks_append(&r->blocks, data, n) == 0);
}

/* The profile's counts: per stack, per capability's runs and in all alike;
 * every frame an id it keeps. */
static void check_prof(const struct es_prof *p) {
    uint64_t stacks = 0, runs = 0;
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, s, &depth);
        CHECK(depth <= 255);
        for (uint32_t i = 0; i < depth; i++)
            CHECK(ids[i] < ES_PROF_MAX_CC);
        stacks += p->stacks[s].samples;
    }
    for (uint32_t c = 0; c < p->ncaps; c++)
        for (size_t i = 0; i < p->caps[c].n; i++) {
            CHECK(p->caps[c].runs[i].stack < p->nstacks && p->caps[c].runs[i].ticks > 0);
            runs += p->caps[c].runs[i].ticks;
        }
    CHECK(p->oom || (stacks == p->samples && runs + p->runs_dropped == p->samples));
    /* The web page's tree: its root holds every sample. */
    struct es_httpbuf b = {0};
    if (es_profwrite_tree(&b, p, 0) == 0 && !p->oom) {
        char root[80];
        int n = snprintf(root, sizeof root, "{\"name\":\"MAIN\",\"value\":%llu",
                         (unsigned long long)p->samples);
        CHECK(b.p != NULL && strncmp(b.p, root, (size_t)n) == 0);
    }
    es_httpbuf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static FILE *file;
    static uint8_t *out;
    static size_t out_cap;
    if (file == NULL)
        file = tmpfile();
    CHECK(file != NULL);
    int fd = fileno(file);
    CHECK(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);

    struct rec r = {0};
    struct es_conn c;
    struct es_conn_callbacks cb = {
        .on_header = on_header, .on_event = on_event, .on_bytes = on_bytes, .ctx = &r};
    es_blocks_init(&r.blocks);
    es_prof_init(&r.prof);
    r.prof.keep_runs = true;
    es_spans_init(&r.spans, NULL, NULL);
    es_conn_init_parser(&c, &cb);
    CHECK(es_blocks_set_fd(&r.blocks, fd) == 0);
    size_t pos = 0, step = size % 251 + 1;
    bool failed = false;
    while (pos < size && !failed) {
        size_t n = step < size - pos ? step : size - pos;
        /* A copy of exactly the piece, so a read past it is caught. */
        uint8_t *piece = malloc(n);
        memcpy(piece, data + pos, n);
        failed = es_conn_feed(&c, piece, n) != 0;
        free(piece);
        CHECK(!failed || (c.error[0] != '\0' && strchr(c.error, '\n') == NULL));
        pos += n;
        step = step * 5 % 4093 + 1;
    }
    enum es_conn_end how = failed ? ES_CONN_FAILED : es_conn_finish(&c);
    CHECK(how == ES_CONN_COMPLETE || c.error[0] != '\0');
    CHECK(es_blocks_finish(&r.blocks) == 0);
    CHECK((how == ES_CONN_COMPLETE) == (c.stream.state == ES_STREAM_END));

    /* The file: a prefix of the stream that parses to its end marker. */
    off_t len = lseek(fd, 0, SEEK_END);
    CHECK(len >= 0 && (size_t)len <= size + 2);
    if ((size_t)len > out_cap) {
        out_cap = (size_t)len;
        out = realloc(out, out_cap);
    }
    CHECK(pread(fd, out, (size_t)len, 0) == len);
    if (!r.header) {
        CHECK(len == 0);
    } else if (how == ES_CONN_COMPLETE) {
        CHECK((size_t)len == size && memcmp(out, data, size) == 0);
    } else {
        CHECK(len >= 2 && memcmp(out, data, (size_t)len - 2) == 0);
        CHECK(out[len - 2] == 0xff && out[len - 1] == 0xff);
    }
    if (len > 0) {
        struct es_stream s;
        es_stream_init(&s);
        CHECK(es_stream_feed(&s, out, (size_t)len, NULL) == 0 && es_stream_finish(&s) == 0);
        es_stream_destroy(&s);
    }
    check_prof(&r.prof);
    es_prof_destroy(&r.prof);
    CHECK(r.spans.used <= ES_SPANS_MAX_THREADS);
    es_spans_settle(&r.spans); /* the last block's waiting STOPs */
    CHECK(r.spans.pending <= ES_SPANS_MAX_PENDING && r.spans.used <= ES_SPANS_MAX_THREADS);
    es_spans_destroy(&r.spans);
    es_conn_destroy_parser(&c);
    es_blocks_destroy(&r.blocks);
    return 0;
}
