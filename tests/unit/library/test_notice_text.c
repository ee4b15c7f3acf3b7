/* SPDX-License-Identifier: BSD-3-Clause */
/* The notices' text (cbits/format/es_notice_text.[ch]) both ways: what the
 * library writes (es_notice_drop, es_notice_wait, es_notice_cost, which
 * the server sends) reads back, figure for figure, as the command reads
 * it; the cut notice `record` writes; the program's own messages and
 * malformed or cut notices are not counted; the event classes notices. Runs
 * under ASan. */
#include "format/es_events.h"
#include "delivery/es_notice.h"
#include "format/es_classes.h"
#include "format/es_notice_text.h"
#include "delivery/es_pool.h"
#include "../unit.h"

#include <math.h>
#include <string.h>

static struct es_notice_read parse_str(const char *s) {
    struct es_notice_read n;
    es_notice_text_parse((const uint8_t *)s, strlen(s), &n);
    return n;
}

/* The one USER_MSG of a notice block, as a client reads it. */
static struct es_notice_read parse_chunk(struct es_chunk *c) {
    struct es_notice_read n = {.kind = ES_NOTICE_NOT};
    if (c == NULL)
        return n;
    const uint8_t *p = c->data + ES_BLOCK_MARKER_LEN;
    if (es_be16(p) == ES_EVENT_USER_MSG &&
        ES_BLOCK_MARKER_LEN + 12 + (size_t)es_be16(p + 10) == c->len)
        es_notice_text_parse(p + 12, es_be16(p + 10), &n);
    es_pool_chunk_free(c);
    return n;
}

/* The window notice and its refusal; the notice appended to a block of
 * definitions keeps the block's events and covers both times. */
static void window_notices(const struct es_header *hdr) {
    char text[300];
    es_notice_text_window(text, sizeof text, 12, 7340032, 1500000000, 301250000000ull);
    struct es_notice_read n = parse_str(text);
    ok(n.kind == ES_NOTICE_WINDOW && n.chunks == 12 && n.bytes == 7340032 &&
           fabs(n.from_s - 1.5) < 1e-9 && fabs(n.to_s - 301.25) < 1e-9,
       "window notice reads back: %s", text);
    ok(strstr(text, "live stream") == NULL,
       "the window notice promises no live stream (a snapshot's file holds it too)");
    n = parse_str("eventlog-socket: window of 3 blocks (99 bytes) from 0.500 s to 2.250 s, kept "
                  "before this connection; the live stream follows");
    ok(n.kind == ES_NOTICE_WINDOW && n.chunks == 3 && n.bytes == 99 && fabs(n.to_s - 2.25) < 1e-9,
       "the notice of an earlier build, with its tail, still reads");
    es_notice_text_window_refused(text, sizeof text, "this program keeps no window");
    n = parse_str(text);
    ok(n.kind == ES_NOTICE_WINDOW_REFUSED && strcmp(n.why, "this program keeps no window") == 0,
       "window refusal reads back, why without the tail: '%s'", n.why);
    ok(parse_str("eventlog-socket: window of many blocks").kind == ES_NOTICE_OTHER,
       "a malformed window notice is not one");
    ok(parse_str("eventlog-socket: the RTS reported an error: boom").kind == ES_NOTICE_ERROR,
       "the error notice");
    struct es_chunk *defs = es_notice_message(hdr, 100, "a definition stand-in");
    struct es_chunk *both = es_notice_append(hdr, defs, 50,
                                             "eventlog-socket: window of 1 blocks "
                                             "(9 bytes) from 0.000 s to 0.000 s");
    const uint8_t *p = both->data;
    size_t first = 12 + strlen("a definition stand-in");
    ok(both->len == defs->len + 12 +
                        strlen("eventlog-socket: window of 1 blocks (9 bytes) from "
                               "0.000 s to 0.000 s") &&
           es_be32(p + 10) == both->len && es_block_time(p) == 50 && es_block_end_time(p) == 100 &&
           memcmp(p + ES_BLOCK_MARKER_LEN, defs->data + ES_BLOCK_MARKER_LEN, first) == 0 &&
           es_be16(p + ES_BLOCK_MARKER_LEN + first) == ES_EVENT_USER_MSG,
       "appended to a block: its events, then the notice; the marker covers both");
    struct es_chunk *alone = es_notice_append(hdr, NULL, 7, "x");
    ok(alone->len == ES_BLOCK_MARKER_LEN + 13 && es_block_time(alone->data) == 7,
       "without a block, a block of the notice alone");
    es_pool_chunk_free(defs);
    es_pool_chunk_free(both);
    es_pool_chunk_free(alone);
}

UNIT_CASE(notice_text_library_notices) {
    struct es_header hdr;
    memset(&hdr, 0, sizeof hdr);
    hdr.size[ES_EVENT_USER_MSG] = ES_SIZE_VARIABLE;
    static const uint64_t chunks[] = {0, 1, 12, 123456789012ull};
    static const uint64_t bytes[] = {0, 1 << 20, 3 * (1 << 19), 7ull << 40};
    for (int i = 0; i < 4; i++) {
        struct es_notice_read n = parse_chunk(es_notice_drop(&hdr, chunks[i], bytes[i], 5));
        double mib = (double)bytes[i] / (1 << 20);
        ok(n.kind == ES_NOTICE_DROP && n.chunks == chunks[i] && fabs(n.mib - mib) <= 0.05,
           "drop notice of %llu chunks, %.1f MiB reads back (%d: %llu, %.1f)",
           (unsigned long long)chunks[i], mib, n.kind, (unsigned long long)n.chunks, n.mib);
    }
    struct es_notice_read w = parse_chunk(es_notice_wait(&hdr, 7, 3, 12500000, 1000));
    ok(w.kind == ES_NOTICE_WAIT && w.times == 3 && fabs(w.ms - 12.5) < 1e-9,
       "wait notice: 12.5 ms, 3 times reads back (%d: %.1f, %llu)", w.kind, w.ms,
       (unsigned long long)w.times);
    struct es_cost d = {
        .writer_ns = 2000000, .walker_ns = 300000, .loop_ns = 1700000, .bytes_sent = 10u << 20};
    struct es_notice_read c = parse_chunk(es_notice_cost(&hdr, 9, &d, 2000));
    ok(c.kind == ES_NOTICE_COST && fabs(c.ms - 4.0) < 1e-9 && fabs(c.secs - 2.0) < 1e-9 &&
           fabs(c.rts_ms - 2.0) < 1e-9 && fabs(c.walker_ms - 0.3) < 1e-9 &&
           fabs(c.loop_ms - 1.7) < 1e-9 && fabs(c.mib - 10.0) < 1e-9,
       "cost notice reads back: %.1f ms in %.1f s (%.1f, %.1f, %.1f), %.1f MiB", c.ms, c.secs,
       c.rts_ms, c.walker_ms, c.loop_ms, c.mib);
    struct es_notice_read t = parse_chunk(es_notice_message(&hdr, 3,
                                                            "eventlog-socket: lossless "
                                                            "delivery refused: not yours"));
    ok(t.kind == ES_NOTICE_OTHER, "a lossless notice is a notice the model does not count");
    window_notices(&hdr);
    hdr.size[ES_EVENT_USER_MSG] = 8;
    ok(es_notice_drop(&hdr, 1, 1, 1) == NULL, "no notice when USER_MSG is not variable-size");
}

UNIT_CASE(notice_text_other_messages) {
    struct es_notice_read n = parse_str("eventlog-socket: recording cut: the program died");
    ok(n.kind == ES_NOTICE_CUT && strcmp(n.why, "the program died") == 0, "cut notice: why '%s'",
       n.why);
    char cut[80];
    snprintf(cut, sizeof cut, ES_NOTICE_PREFIX ES_NOTICE_CUT_WORDS "%s", "Ctrl-C");
    ok(parse_str(cut).kind == ES_NOTICE_CUT, "the cut notice as record writes it");
    ok(parse_str("fib 30 = 832040").kind == ES_NOTICE_NOT, "the program's message");
    ok(parse_str("eventlog-socket").kind == ES_NOTICE_NOT, "a message shorter than the prefix");
    ok(parse_str("eventlog-socket: dropped lots").kind == ES_NOTICE_OTHER, "a malformed drop");
    ok(parse_str("eventlog-socket: the program waited -1.0 ms (1 times)").kind == ES_NOTICE_OTHER,
       "a negative wait");
    ok(parse_str("eventlog-socket: streaming cost 1.0 ms of CPU in the last 0.0 s (RTS threads "
                 "1.0, walker 0.0, loop 0.0), 1.0 MiB sent")
               .kind == ES_NOTICE_OTHER,
       "a cost over no time");
    /* Every cut of a notice reads as something, never past its end. */
    char full[128];
    int len = es_notice_text_drop(full, sizeof full, 42, 5u << 20);
    int drops = 0, others = 0;
    for (int k = 0; k <= len; k++) {
        struct es_notice_read r;
        es_notice_text_parse((const uint8_t *)full, (size_t)k, &r);
        drops += r.kind == ES_NOTICE_DROP;
        others += r.kind == ES_NOTICE_OTHER;
    }
    ok(drops >= 1 && others >= 1 && drops + others == len + 1 - 17,
       "a drop notice cut at each of %d places: %d read as drops, %d as other notices", len + 1,
       drops, others);
    char small[20];
    int n2 = es_notice_text_cost(small, sizeof small, 1, 2, 3, 4, 5);
    ok(n2 > (int)sizeof small && strlen(small) == sizeof small - 1,
       "a buffer too small holds the start of the notice (%d wanted)", n2);
}

/* The event classes: words read as classes (names, letters, "all"; a word
 * that is none is named back), written back in the classes' order, and
 * both notices read back class for class; cut or altered ones do not. */
UNIT_CASE(notice_text_event_classes) {
    unsigned m = 0;
    char bad[32];
    ok(es_classes_parse("scheduler,gc", &m, bad, sizeof bad) == 0 && m == 0x03, "scheduler,gc: %#x",
       m);
    ok(es_classes_parse("sgu", &m, bad, sizeof bad) == 0 && m == 0x23, "sgu: %#x", m);
    ok(es_classes_parse("all", &m, bad, sizeof bad) == 0 && m == ES_CLASSES_ALL, "all: %#x", m);
    ok(es_classes_parse("nonmoving-gc,f", &m, bad, sizeof bad) == 0 && m == 0x14,
       "nonmoving-gc,f: %#x", m);
    ok(es_classes_parse("gc,bogus", &m, bad, sizeof bad) == -1 && strcmp(bad, "bogus") == 0,
       "gc,bogus: the word that is no class (%s)", bad);
    ok(es_classes_parse("gc,", &m, bad, sizeof bad) == -1 && bad[0] == '\0',
       "an empty word is no class");
    char w[128];
    es_classes_words(w, sizeof w, 0x2b);
    ok(strcmp(w, "scheduler, gc, sparks-sampled, user") == 0, "0x2b: %s", w);
    es_classes_words(w, sizeof w, 0);
    ok(strcmp(w, "none") == 0, "no class: %s", w);

    /* Switches held back and composed act as they would one by one. */
    int differ = 0;
    for (unsigned seed = 1; seed <= 4096; seed++) {
        uint8_t on = 0, off = 0;
        unsigned r = seed, start = seed % 64, direct = start;
        for (int i = 0; i < 4; i++, r = r * 1103515245u + 12345u) {
            bool up = (r >> 16) & 1;
            uint8_t classes = (uint8_t)((r >> 20) & ES_CLASSES_ALL);
            es_classes_compose(&on, &off, up, classes);
            direct = up ? direct | classes : direct & ~(unsigned)classes;
        }
        differ += ((start | on) & ~(unsigned)off) != direct || (on & off) != 0;
    }
    ok(differ == 0, "4096 runs of four switches composed act as one by one (%d differ)", differ);

    char text[512];
    struct es_classes_notice n;
    size_t k = sizeof ES_NOTICE_PREFIX - 1;
    for (unsigned was = 0; was <= ES_CLASSES_ALL; was += 7) {
        for (unsigned now = 0; now <= ES_CLASSES_ALL; now += 5) {
            int len = es_notice_text_classes_switched(text, sizeof text, was, now, "a client");
            bool read = es_classes_read(text + k, (size_t)len - k, &n);
            if (!read || !n.switched || n.on != now || n.switched_on != (now & ~was) ||
                n.switched_off != (was & ~now)) {
                ok(false, "switched %#x -> %#x: %s", was, now, text);
                return;
            }
        }
    }
    ok(true, "switch notices read back, every 7th state to every 5th");
    int len = es_notice_text_classes_report(text, sizeof text, 0x2b, 0x14, "the reason (a, b)");
    ok(es_classes_read(text + k, (size_t)len - k, &n) && !n.switched && n.on == 0x2b &&
           n.fixed == 0x14,
       "a report reads back: %s", text);
    len = es_notice_text_classes_report(text, sizeof text, 0x21, 0, NULL);
    ok(es_classes_read(text + k, (size_t)len - k, &n) && n.on == 0x21 && n.fixed == 0 &&
           strstr(text, "cannot be switched here: none") != NULL,
       "a report with every class switchable: %s", text);
    int cut = 0;
    for (int i = 0; i < len - (int)k; i++)
        cut += es_classes_read(text + k, (size_t)i, &n);
    ok(cut == 0, "a report cut short reads as none (%d did)", cut);
    const char *odd = "event classes now on: scheduler, bogus; now off: gc; cannot be switched "
                      "here: none";
    ok(!es_classes_read(odd, strlen(odd), &n), "a report with a word that is no class");
}
