/* SPDX-License-Identifier: BSD-3-Clause */
/* A source's stream half (client/source/conn.c) in its two ways of handing events
 * on, on the recorded fixtures: the
 * reader calling the consumer itself (es_conn_callbacks.on_stream_event,
 * the source seeing the types it notes through the reader's tap) and the
 * hop through the source (on_event) leave the same struct es_conn_info
 * (program, arguments, pid, GHC, heap profile, samples, notices, events,
 * latest time) and give the consumer the same events in the same order,
 * in pieces of any size, skimming or not. Argument: the fixture directory. */
#include "format/es_notice_text.h"
#include "format/es_utf8.h"
#include "source/conn.h"
#include "../unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
    uint64_t events, skipped, sum; /* sum: of type and time, in order */
    bool header;
};

static void mix(struct seen *s, const struct es_event *ev) {
    s->events++;
    s->sum = s->sum * 1000003u + ev->type * 31u + ev->time;
}

static void on_header(struct es_conn *c, void *ctx) {
    (void)c;
    ((struct seen *)ctx)->header = true;
}

static void hop_event(struct es_conn *c, const struct es_event *ev, uint64_t off, void *ctx) {
    (void)c;
    (void)off;
    mix(ctx, ev);
}

static void hop_skip(struct es_conn *c, const struct es_stream_skip *run, void *ctx) {
    (void)c;
    ((struct seen *)ctx)->skipped += run->events;
}

static void direct_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    mix(ctx, ev);
}

static void direct_skip(const struct es_stream_skip *run, void *ctx) {
    ((struct seen *)ctx)->skipped += run->events;
}

/* The types a skimming consumer wants: the GC's, nothing the source notes. */
static bool gc_only[ES_MAX_EVENT_TYPES] = {[ES_EVENT_GC_START] = true, [ES_EVENT_GC_END] = true};
static const uint64_t everywhere[2] = {0, UINT64_MAX};

static void run(const uint8_t *buf, size_t len, size_t piece, bool direct, bool skim,
                struct es_conn_info *info, struct seen *seen) {
    struct es_conn_callbacks cb = {.on_header = on_header, .ctx = seen};
    if (direct) {
        cb.on_stream_event = direct_event;
        cb.on_stream_skip = skim ? direct_skip : NULL;
    } else {
        cb.on_event = hop_event;
        cb.on_skip = skim ? hop_skip : NULL;
    }
    if (skim) {
        cb.want = gc_only;
        cb.window = everywhere;
    }
    struct es_conn *c = malloc(sizeof *c);
    es_conn_init_parser(c, &cb);
    for (size_t pos = 0; pos < len; pos += piece)
        if (es_conn_feed(c, buf + pos, len - pos < piece ? len - pos : piece) != 0)
            break;
    *info = c->info;
    es_conn_destroy_parser(c);
    free(c);
}

static bool same_info(const struct es_conn_info *a, const struct es_conn_info *b) {
    return strcmp(a->program, b->program) == 0 && strcmp(a->args, b->args) == 0 &&
           a->have_args == b->have_args && a->pid == b->pid && a->have_pid == b->have_pid &&
           strcmp(a->rts_ident, b->rts_ident) == 0 && a->heap_prof == b->heap_prof &&
           a->heap_period_ns == b->heap_period_ns && a->heap_breakdown == b->heap_breakdown &&
           a->heap_samples == b->heap_samples && a->last_sample_time == b->last_sample_time &&
           a->drop_notices == b->drop_notices && a->dropped_chunks == b->dropped_chunks &&
           strcmp(a->lossless_notice, b->lossless_notice) == 0 &&
           a->lossless_notices == b->lossless_notices && a->bytes == b->bytes &&
           a->events == b->events && a->latest_time == b->latest_time;
}

static void compare(const char *name, const uint8_t *buf, size_t len) {
    static const size_t pieces[] = {1, 13, 4096, (size_t)1 << 30};
    int good = 0, skimmed = 0;
    struct es_conn_info ref;
    struct seen ref_seen = {0};
    run(buf, len, len, false, false, &ref, &ref_seen);
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
        for (int skim = 0; skim < 2; skim++) {
            struct es_conn_info hop, direct;
            struct seen hs = {0}, ds = {0};
            run(buf, len, pieces[i], false, skim, &hop, &hs);
            run(buf, len, pieces[i], true, skim, &direct, &ds);
            bool ok_info = same_info(&hop, &direct) && same_info(&ref, &direct);
            bool ok_events = hs.events == ds.events && hs.sum == ds.sum &&
                             hs.skipped == ds.skipped && hs.header && ds.header &&
                             ds.events + ds.skipped == ref_seen.events;
            if (!ok_info || !ok_events)
                printf("# %s: pieces of %zu, %s: info %s, events %llu/%llu skipped %llu/%llu\n",
                       name, pieces[i], skim ? "skimming" : "every event",
                       ok_info ? "same" : "differs", (unsigned long long)hs.events,
                       (unsigned long long)ds.events, (unsigned long long)hs.skipped,
                       (unsigned long long)ds.skipped);
            good += ok_info && ok_events;
            skimmed += skim && ds.skipped > 0;
        }
    ok(good == 8 && skimmed == 4 && ref.events > 0 && ref.have_args,
       "%s: the reader calling the consumer itself and the hop through the source: the same "
       "info (%s, %llu events, latest %llu ns) and events, in pieces of 1 to all, skimming or not",
       name, ref.program, (unsigned long long)ref.events, (unsigned long long)ref.latest_time);
}

static void check_fixture(const char *path) {
    size_t len;
    uint8_t *buf = unit_read_file(path, &len);
    if (buf != NULL)
        compare(path, buf, len);
    free(buf);
}

UNIT_FIXTURE_CASE(client_conn_hop_or_direct, path) {
    check_fixture(path);
}

/* ---- A hand-made stream: text by the command's one rule, drop notices. */

struct hand {
    uint8_t b[4096];
    size_t n;
};

static void be(struct hand *h, uint64_t v, int n) {
    es_put_be(h->b + h->n, v, n);
    h->n += (size_t)n;
}

static void bytes(struct hand *h, const void *p, size_t n) {
    memcpy(h->b + h->n, p, n);
    h->n += n;
}

/* The header, declaring the block marker (which every header does),
 * PROGRAM_ARGS and USER_MSG (both of variable size), as the RTS writes
 * it; then the data's beginning. */
static void hand_header(struct hand *h) {
    static const uint16_t types[] = {ES_EVENT_BLOCK_MARKER, ES_EVENT_PROGRAM_ARGS,
                                     ES_EVENT_USER_MSG};
    be(h, 0x68647262, 4); /* hdrb */
    be(h, 0x68657462, 4); /* hetb */
    for (unsigned i = 0; i < 3; i++) {
        be(h, 0x65746200, 4); /* etb */
        be(h, types[i], 2);
        be(h, i == 0 ? ES_BLOCK_MARKER_LEN - 10 : 0xffff, 2); /* 0xffff: variable size */
        be(h, 4, 4);
        bytes(h, "text", 4);
        be(h, 0, 4);
        be(h, 0x65746500, 4); /* ete */
    }
    be(h, 0x68657465, 4); /* hete */
    be(h, 0x68647265, 4); /* hdre */
    be(h, 0x64617462, 4); /* datb */
}

static void hand_event(struct hand *h, uint16_t type, uint64_t t, const void *p, size_t n) {
    be(h, type, 2);
    be(h, t, 8);
    be(h, n, 2);
    bytes(h, p, n);
}

static void hand_drop(struct hand *h, uint64_t t, uint64_t chunks, uint64_t bytes_lost) {
    char text[200];
    int n = es_notice_text_drop(text, sizeof text, chunks, bytes_lost);
    hand_event(h, ES_EVENT_USER_MSG, t, text, (size_t)n);
}

static struct es_conn_info hand_info(const struct hand *h) {
    struct es_conn_info info;
    struct seen seen = {0};
    run(h->b, h->n, 7, false, false, &info, &seen);
    return info;
}

/* argv[0] with a byte that starts no UTF-8 character (0xfe) in a
 * directory that is not valid UTF-8 either, an argument with a lone
 * continuation byte, then one that is cut inside a three-byte character
 * (the euro sign) where the line is full, and a short one that would fit
 * after it: each shown by the rule (format/es_utf8.h), U+FFFD for the bad
 * bytes, the cut between characters, and nothing after the cut argument
 * (it would read as whole). */
UNIT_CASE(client_conn_text_by_the_rule) {
    struct hand h = {.n = 0};
    hand_header(&h);
    uint8_t args[1400];
    size_t n = 0;
    memset(args, 0, 4); /* capset */
    n += 4;
    static const char arg0[] = "/opt/\xc3/pr\xfeg";
    memcpy(args + n, arg0, sizeof arg0);
    n += sizeof arg0;
    static const char arg1[] = "-x\x80y";
    memcpy(args + n, arg1, sizeof arg1);
    n += sizeof arg1;
    /* The line so far: "/opt/\ufffd/pr\ufffdg -x\ufffdy " (23 bytes); then
     * 'a's up to two bytes before the end of the 1023 the line holds, and
     * the euro sign, whose third byte does not fit; then "zz". */
    size_t line = 23, fill = sizeof((struct es_conn_info *)0)->args - 1 - line - 2;
    memset(args + n, 'a', fill);
    n += fill;
    static const char arg3[] = "\xe2\x82\xactail";
    memcpy(args + n, arg3, sizeof arg3);
    n += sizeof arg3;
    memcpy(args + n, "zz", 3);
    n += 3;
    hand_event(&h, ES_EVENT_PROGRAM_ARGS, 1000, args, n);
    be(&h, 0xffff, 2);
    struct es_conn_info in = hand_info(&h);
    ok(strcmp(in.program, "pr" ES_UTF8_REPLACEMENT "g") == 0,
       "the program's name: a byte that starts no character is U+FFFD (%s)", in.program);
    ok(strncmp(in.args,
               "/opt/" ES_UTF8_REPLACEMENT "/pr" ES_UTF8_REPLACEMENT "g -x" ES_UTF8_REPLACEMENT
               "y aaa",
               line + 3) == 0,
       "the arguments: each bad byte is U+FFFD (%.40s...)", in.args);
    size_t len = strlen(in.args);
    ok(len == sizeof in.args - 3 && len > 0 && in.args[len - 1] == 'a',
       "an argument cut where the line is full is cut between characters and ends the line: "
       "%zu bytes, ending with 'a' (last byte 0x%02x)",
       len, len > 0 ? (unsigned)(uint8_t)in.args[len - 1] : 0u);
    size_t bad = 0;
    for (size_t i = 0; i < len;) {
        size_t k = es_utf8_len((const uint8_t *)in.args + i, len - i);
        bad += k == 0;
        i += k ? k : 1;
    }
    ok(bad == 0, "the arguments' line is valid UTF-8 (%zu bad bytes)", bad);
}

/* Drop notices: counted with their chunks, MiB and times, and said in the
 * words every subcommand ends with. */
UNIT_CASE(client_conn_drop_words) {
    struct hand h = {.n = 0};
    hand_header(&h);
    hand_drop(&h, 1204000000, 30, 30u << 20);
    hand_drop(&h, 3410000000, 7, 7u << 20);
    be(&h, 0xffff, 2);
    struct es_conn_info in = hand_info(&h);
    char text[300];
    es_conn_complete_words(&in, text, sizeof text);
    ok(strcmp(text, "with gaps: 37 chunks (37.0 MiB) missing in 2 drop notices, the first at "
                    "1.204 s, the last at 3.410 s; the program's end marker arrived") == 0,
       "two drop notices: %s", text);
    struct hand one = {.n = 0};
    hand_header(&one);
    hand_drop(&one, 2500000000, 1, 1u << 20);
    be(&one, 0xffff, 2);
    in = hand_info(&one);
    snprintf(text, sizeof text, "cut: interrupted");
    es_conn_add_gaps(&in, text, sizeof text);
    ok(strcmp(text, "cut: interrupted; with gaps: 1 chunk (1.0 MiB) missing in 1 drop notice, "
                    "at 2.500 s") == 0,
       "one drop notice, after a cut: %s", text);
    struct hand none = {.n = 0};
    hand_header(&none);
    be(&none, 0xffff, 2);
    in = hand_info(&none);
    es_conn_complete_words(&in, text, sizeof text);
    ok(strcmp(text, "complete, the program's end marker arrived") == 0, "none: %s", text);
}
