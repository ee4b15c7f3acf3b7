/* SPDX-License-Identifier: BSD-3-Clause */
/* Spans from START/STOP markers (client/spans/spans.c): matched within
 * their thread, nested, interleaved threads with one label, a thread that
 * moves between capabilities, STOPs without a START, FAIL marking the
 * innermost span of its label, a finished thread's open spans, the bound
 * on open spans, and the threads' table emptied and reused; spans of C
 * code paired in their OS thread. */
#include "format/es_event_types.h"
#include "format/es_notice_text.h"
#include "spans/spans.h"
#include "../unit.h"

#include <stdio.h>
#include <string.h>

struct seen {
    struct es_span s[64];
    char label[64][ES_SPANS_LABEL_MAX + 1], parent[64][ES_SPANS_LABEL_MAX + 1];
    size_t n;
};

static void done(const struct es_span *s, void *ctx) {
    struct seen *w = ctx;
    if (w->n < 64) {
        w->s[w->n] = *s;
        snprintf(w->label[w->n], sizeof w->label[0], "%s", s->label);
        snprintf(w->parent[w->n], sizeof w->parent[0], "%s", s->parent);
    }
    w->n++;
}

static void msg(struct es_spans *sp, int cap, uint64_t t, const char *text) {
    struct es_event ev = {.type = ES_EVENT_USER_MSG,
                          .time = t,
                          .payload = (const uint8_t *)text,
                          .payload_len = strlen(text)};
    es_spans_event(sp, &ev, cap);
}

static void sched(struct es_spans *sp, int cap, uint64_t t, uint16_t type, uint32_t thread,
                  uint16_t status) {
    uint8_t b[10] = {(uint8_t)(thread >> 24), (uint8_t)(thread >> 16), (uint8_t)(thread >> 8),
                     (uint8_t)thread,         (uint8_t)(status >> 8),  (uint8_t)status};
    struct es_event ev = {.type = type,
                          .time = t,
                          .payload = b,
                          .payload_len = type == ES_EVENT_STOP_THREAD ? 10 : 4};
    es_spans_event(sp, &ev, cap);
}

UNIT_CASE(client_spans_nested_and_interleaved) {
    struct seen w = {0};
    struct es_spans sp;
    es_spans_init(&sp, done, &w);
    sched(&sp, 0, 1, ES_EVENT_RUN_THREAD, 7, 0);
    msg(&sp, 0, 10, "START req");
    msg(&sp, 0, 20, "START db");
    sched(&sp, 0, 25, ES_EVENT_STOP_THREAD, 7, 3);
    sched(&sp, 0, 26, ES_EVENT_RUN_THREAD, 8, 0);
    msg(&sp, 0, 30, "START req"); /* thread 8, same label */
    sched(&sp, 0, 35, ES_EVENT_STOP_THREAD, 8, 3);
    sched(&sp, 1, 36, ES_EVENT_RUN_THREAD, 7, 0); /* 7 moved to capability 1 */
    msg(&sp, 1, 40, "STOP db");
    msg(&sp, 1, 50, "STOP req");
    sched(&sp, 1, 55, ES_EVENT_STOP_THREAD, 7, 3);
    sched(&sp, 0, 56, ES_EVENT_RUN_THREAD, 8, 0);
    msg(&sp, 0, 90, "STOP req");
    ok(w.n == 3, "three spans: %zu", w.n);
    ok(strcmp(w.label[0], "db") == 0 && strcmp(w.parent[0], "req") == 0 && w.s[0].thread == 7 &&
           w.s[0].start == 20 && w.s[0].end == 40 && w.s[0].cap == 0 && w.s[0].depth == 1,
       "db in req, thread 7, 20..40 from capability 0");
    ok(strcmp(w.label[1], "req") == 0 && w.s[1].thread == 7 && w.s[1].start == 10 &&
           w.s[1].end == 50 && w.parent[1][0] == '\0',
       "thread 7's req: 10..50 (%llu..%llu)", (unsigned long long)w.s[1].start,
       (unsigned long long)w.s[1].end);
    ok(strcmp(w.label[2], "req") == 0 && w.s[2].thread == 8 && w.s[2].start == 30 &&
           w.s[2].end == 90,
       "thread 8's req: 30..90, never paired with thread 7's");
    ok(sp.unmatched == 0 && sp.used == 0, "nothing unmatched, no thread left open");
    es_spans_destroy(&sp);
}

UNIT_CASE(client_spans_unmatched_and_finished) {
    struct seen w = {0};
    struct es_spans sp;
    es_spans_init(&sp, done, &w);
    sched(&sp, 0, 1, ES_EVENT_RUN_THREAD, 3, 0);
    msg(&sp, 0, 5, "STOP x"); /* no START */
    msg(&sp, 0, 6, "START y");
    sched(&sp, 0, 7, ES_EVENT_STOP_THREAD, 3, 3);
    sched(&sp, 0, 8, ES_EVENT_RUN_THREAD, 4, 0);
    msg(&sp, 0, 9, "STOP y"); /* thread 4 opened no y */
    sched(&sp, 0, 10, ES_EVENT_STOP_THREAD, 4, 3);
    sched(&sp, 0, 11, ES_EVENT_RUN_THREAD, 3, 0);
    sched(&sp, 0, 12, ES_EVENT_STOP_THREAD, 3, 5); /* 3 finished with y open */
    msg(&sp, 0, 13, "not a span");
    msg(&sp, 0, 14, "START ");
    ok(w.n == 0 && sp.unmatched == 2 && sp.abandoned == 1 && sp.pending == 2,
       "no span; 2 STOPs unmatched (and kept), y abandoned at thread 3's end (%llu, %llu)",
       (unsigned long long)sp.unmatched, (unsigned long long)sp.abandoned);
    es_spans_destroy(&sp);
}

/* GHC 9.0's order: thread 6 moves from capability 0 to 1 between START
 * and STOP; capability 1's block (with the STOP) comes first. */
UNIT_CASE(client_spans_stop_before_start) {
    struct seen w = {0};
    struct es_spans sp;
    es_spans_init(&sp, done, &w);
    sched(&sp, 1, 50, ES_EVENT_RUN_THREAD, 6, 0);
    msg(&sp, 1, 60, "STOP req");                   /* its block handed over first */
    msg(&sp, 1, 61, "STOP req");                   /* one with no START at all */
    sched(&sp, 1, 70, ES_EVENT_STOP_THREAD, 6, 5); /* it finished there */
    ok(w.n == 0 && sp.unmatched == 2, "two STOPs wait for their STARTs");
    sched(&sp, 0, 1, ES_EVENT_RUN_THREAD, 6, 0); /* capability 0's block */
    msg(&sp, 0, 5, "START req");
    msg(&sp, 0, 8, "STOP req"); /* in order: ends the span at once */
    msg(&sp, 0, 10, "START req");
    msg(&sp, 0, 20, "START other");
    sched(&sp, 0, 30, ES_EVENT_STOP_THREAD, 6, 1);
    ok(w.n == 1 && w.s[0].start == 5 && w.s[0].end == 8 && sp.unmatched == 2,
       "within the block, nothing paired with the waiting STOPs yet");
    sched(&sp, 2, 31, ES_EVENT_RUN_THREAD, 99, 0); /* the block has ended */
    ok(w.n == 2 && w.s[1].start == 10 && w.s[1].end == 60 && w.s[1].thread == 6 &&
           sp.unmatched == 1,
       "at the block's end the START open before 60 ends there; one STOP still unmatched");
    msg(&sp, 0, 100, "START late"); /* no thread runs on 0: per capability */
    for (int i = 0; i < ES_SPANS_MAX_PENDING + 10; i++) {
        char text[40];
        snprintf(text, sizeof text, "STOP x%d", i);
        sched(&sp, 2, 200, ES_EVENT_RUN_THREAD, (uint32_t)(1000 + i), 0);
        msg(&sp, 2, 201, text);
    }
    ok(sp.pending == ES_SPANS_MAX_PENDING, "pending STOPs bounded: %zu", sp.pending);
    es_spans_destroy(&sp);
}

UNIT_CASE(client_spans_failed) {
    struct seen w = {0};
    struct es_spans sp;
    es_spans_init(&sp, done, &w);
    sched(&sp, 0, 1, ES_EVENT_RUN_THREAD, 5, 0);
    msg(&sp, 0, 10, "START req");
    msg(&sp, 0, 11, "START req"); /* nested, same label */
    msg(&sp, 0, 12, "FAIL req");  /* the inner one failed */
    msg(&sp, 0, 13, "STOP req");
    msg(&sp, 0, 14, "FAIL other"); /* no such span open: counted */
    msg(&sp, 0, 20, "STOP req");
    sched(&sp, 0, 21, ES_EVENT_STOP_THREAD, 5, 3);
    sched(&sp, 1, 22, ES_EVENT_RUN_THREAD, 6, 0);
    msg(&sp, 1, 23, "FAIL req"); /* thread 6 has none open: never thread 5's */
    ok(w.n == 2 && w.s[0].failed && w.s[0].start == 11 && w.s[0].end == 13,
       "the inner span failed, ended by its STOP");
    ok(w.n == 2 && !w.s[1].failed && w.s[1].start == 10 && w.s[1].end == 20,
       "the outer one did not");
    ok(sp.unmatched == 2, "FAILs with no span of theirs counted: %llu",
       (unsigned long long)sp.unmatched);
    const uint8_t *label;
    size_t len;
    ok(es_spans_parse((const uint8_t *)"FAIL x", 6, &label, &len) == ES_SPANS_FAIL && len == 1 &&
           es_spans_parse((const uint8_t *)"FAIL ", 5, &label, &len) == ES_SPANS_NONE &&
           es_spans_parse((const uint8_t *)"FAILx", 5, &label, &len) == ES_SPANS_NONE,
       "FAIL's words: a label after one space, never empty");
    es_spans_destroy(&sp);
}

/* opentelemetry-haskell's binary message: "OT" 3 TYPE, serial (u64 LE),
 * then the name (begin) or a tag (key and value lengths, u32 LE). */
/* A span notice of C code, as the library writes it. */
static void c_msg(struct es_spans *sp, uint64_t t, uint32_t os_thread, const char *word,
                  const char *label) {
    char text[300];
    es_notice_text_span(text, sizeof text, os_thread, word, label);
    msg(sp, -1, t, text);
}

/* Spans of C code: the library's notices from the global block, paired
 * in their OS thread (two threads, one label, nested, failed), never with
 * a Haskell thread's spans of the same label; a notice with no thread or
 * a stray word is nobody's span; the text reads back. */
UNIT_CASE(client_spans_of_c_code) {
    struct seen w = {0};
    struct es_spans sp;
    es_spans_init(&sp, done, &w);
    sched(&sp, 0, 1, ES_EVENT_RUN_THREAD, 7, 0);
    msg(&sp, 0, 5, "START req"); /* Haskell thread 7 */
    c_msg(&sp, 10, 4242, "START", "req");
    c_msg(&sp, 12, 4243, "START", "req");
    c_msg(&sp, 20, 4242, "START", "db");
    c_msg(&sp, 30, 4243, "FAIL", "req");
    c_msg(&sp, 31, 4243, "STOP", "req");
    c_msg(&sp, 40, 4242, "STOP", "db");
    c_msg(&sp, 50, 4242, "STOP", "req");
    msg(&sp, 0, 60, "STOP req");
    ok(w.n == 4, "four spans: %zu", w.n);
    ok(w.n == 4 && w.s[0].os_thread == 4243 && w.s[0].failed && w.s[0].start == 12 &&
           w.s[0].end == 31 && w.s[0].thread == 0 && w.s[0].cap == -1,
       "OS thread 4243's req: 12..31, failed, no Haskell thread, no capability");
    ok(w.n == 4 && strcmp(w.label[1], "db") == 0 && strcmp(w.parent[1], "req") == 0 &&
           w.s[1].os_thread == 4242 && w.s[2].os_thread == 4242 && w.s[2].start == 10 &&
           w.s[2].end == 50 && !w.s[2].failed,
       "OS thread 4242: db in req, req 10..50");
    ok(w.n == 4 && w.s[3].thread == 7 && w.s[3].os_thread == 0 && w.s[3].start == 5 &&
           w.s[3].end == 60,
       "Haskell thread 7's req: 5..60, apart from the C spans");
    uint32_t tid;
    const uint8_t *words;
    size_t n;
    const char *odd[] = {"eventlog-socket: span in OS thread : START x",
                         "eventlog-socket: span in OS thread 0: START x",
                         "eventlog-socket: span in OS thread 99999999999: START x",
                         "eventlog-socket: span in OS thread 12 START x"};
    int read = 0;
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        read += es_notice_text_span_read((const uint8_t *)odd[i], strlen(odd[i]), &tid, &words, &n);
    ok(read == 0, "a notice with no OS thread, or a bad one, is no span (%d read)", read);
    c_msg(&sp, 70, 9, "BEGIN", "x");
    c_msg(&sp, 71, 9, "STOP", "x");
    ok(w.n == 4 && sp.unmatched == 1 && sp.used == 0,
       "a stray word begins nothing; its STOP is unmatched (%llu), nothing left open",
       (unsigned long long)sp.unmatched);
    es_spans_destroy(&sp);
}

static void ot(struct es_spans *sp, int cap, uint64_t t, uint8_t type, uint64_t serial,
               const char *a, const char *b) {
    uint8_t m[256] = {'O', 'T', 3, type};
    size_t n = 12;
    for (int i = 0; i < 8; i++)
        m[4 + i] = (uint8_t)(serial >> (8 * i));
    if (type == 3) {
        uint32_t k = (uint32_t)strlen(a), v = (uint32_t)strlen(b);
        for (int i = 0; i < 4; i++) {
            m[12 + i] = (uint8_t)(k >> (8 * i));
            m[16 + i] = (uint8_t)(v >> (8 * i));
        }
        memcpy(m + 20, a, k);
        memcpy(m + 20 + k, b, v);
        n = 20 + k + v;
    } else if (a != NULL) {
        memcpy(m + 12, a, strlen(a));
        n += strlen(a);
    }
    struct es_event ev = {
        .type = ES_EVENT_USER_BINARY_MSG, .time = t, .payload = m, .payload_len = n};
    es_spans_event(sp, &ev, cap);
}

UNIT_CASE(client_spans_opentelemetry) {
    struct seen w = {0};
    struct es_spans sp;
    es_spans_init(&sp, done, &w);
    sched(&sp, 0, 1, ES_EVENT_RUN_THREAD, 4, 0);
    msg(&sp, 0, 5, "START outer");
    ot(&sp, 0, 10, 1, 77, "handler", NULL);
    ot(&sp, 0, 11, 1, 78, "db", NULL);
    ot(&sp, 0, 12, 3, 78, "error", "true");
    msg(&sp, 0, 13, "STOP db"); /* a START/STOP STOP never ends otel's db */
    sched(&sp, 0, 14, ES_EVENT_STOP_THREAD, 4, 3);
    sched(&sp, 1, 15, ES_EVENT_RUN_THREAD, 9, 0);
    ot(&sp, 1, 20, 2, 78, NULL, NULL); /* ended on another thread: by its serial */
    ot(&sp, 1, 21, 2, 99, NULL, NULL); /* no such span */
    msg(&sp, 1, 22, "ot2 begin span 5 text span");
    msg(&sp, 1, 23, "ot2 set tag 5 error true");
    msg(&sp, 1, 30, "ot2 end span 5");
    ot(&sp, 1, 40, 2, 77, NULL, NULL);
    ok(w.n == 3 && strcmp(w.label[0], "db") == 0 && w.s[0].failed && w.s[0].thread == 4 &&
           w.s[0].start == 11 && w.s[0].end == 20 && strcmp(w.parent[0], "handler") == 0,
       "otel's db: thread 4's, ended by its serial elsewhere, failed by its error tag");
    ok(w.n == 3 && strcmp(w.label[1], "text span") == 0 && w.s[1].failed && w.s[1].thread == 9 &&
           w.s[1].end - w.s[1].start == 8,
       "the ot2 text form: begin, error tag, end");
    ok(w.n == 3 && strcmp(w.label[2], "handler") == 0 && !w.s[2].failed &&
           strcmp(w.parent[2], "outer") == 0,
       "handler nested in the START span of its thread");
    ok(sp.unmatched == 2, "STOP db and serial 99 unmatched: %llu",
       (unsigned long long)sp.unmatched);
    sched(&sp, 1, 41, ES_EVENT_RUN_THREAD, 12, 0);
    ot(&sp, 1, 42, 1, 300, "handed over", NULL);
    msg(&sp, 1, 43, "START plain");
    sched(&sp, 1, 44, ES_EVENT_STOP_THREAD, 12, 5); /* finished */
    sched(&sp, 1, 45, ES_EVENT_RUN_THREAD, 13, 0);
    ot(&sp, 1, 46, 2, 300, NULL, NULL);
    ok(w.n == 4 && strcmp(w.label[3], "handed over") == 0 && w.s[3].thread == 12 &&
           sp.abandoned == 1,
       "a finished thread's otel span still ends by its serial; its START span is abandoned");
    msg(&sp, 1, 50, "ot2 begin span x"); /* no serial */
    msg(&sp, 1, 51, "ot2 end span 5 extra");
    ok(w.n == 4 && sp.unmatched == 2, "garbled ot2 text ignored");
    es_spans_destroy(&sp);
}

UNIT_CASE(client_spans_bounded) {
    struct seen w = {0};
    struct es_spans sp;
    es_spans_init(&sp, done, &w);
    char text[300];
    for (int i = 0; i < ES_SPANS_MAX_OPEN + 10; i++) {
        snprintf(text, sizeof text, "START s%d", i);
        msg(&sp, -1, (uint64_t)i, text); /* no thread known: per capability */
    }
    ok(sp.dropped == 10, "past %d open spans, STARTs dropped: %llu", ES_SPANS_MAX_OPEN,
       (unsigned long long)sp.dropped);
    /* Many threads, each one span: the table grows, empties, is reused. */
    for (uint32_t th = 1; th <= 5000; th++) {
        sched(&sp, 1, th, ES_EVENT_RUN_THREAD, th, 0);
        msg(&sp, 1, th, "START t");
        sched(&sp, 1, th, ES_EVENT_STOP_THREAD, th, 3);
    }
    for (uint32_t th = 5000; th >= 1; th--) {
        sched(&sp, 1, 10000 + th, ES_EVENT_RUN_THREAD, th, 0);
        msg(&sp, 1, 10000 + th, "STOP t");
        sched(&sp, 1, 10000 + th, ES_EVENT_STOP_THREAD, th, 3);
    }
    ok(sp.spans == 5000 && sp.unmatched == 0 && sp.used == 1,
       "5000 threads' spans matched; only the capability-less opens left (%llu, %zu)",
       (unsigned long long)sp.spans, sp.used);
    memset(text, 'a', sizeof text);
    memcpy(text, "START ", 6);
    text[sizeof text - 1] = '\0';
    memset(&w, 0, sizeof w);
    sched(&sp, 2, 1, ES_EVENT_RUN_THREAD, 9, 0);
    msg(&sp, 2, 1, text);
    msg(&sp, 2, 2, text + 1); /* "TART aaa...": no span */
    memcpy(text + 1, "STOP ", 5);
    msg(&sp, 2, 3, text + 1); /* "STOP aaa...", as long */
    ok(w.n == 1 && strlen(w.label[0]) == ES_SPANS_LABEL_MAX, "a long label cut at %d bytes",
       ES_SPANS_LABEL_MAX);
    es_spans_destroy(&sp);
}
