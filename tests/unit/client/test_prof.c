/* SPDX-License-Identifier: BSD-3-Clause */
/* The time profile `profile` builds (client/profile/prof.c): cost centres
 * named as GHC prints them, stacks interned once and turned root first,
 * runs per capability, the time filter, --since's trim, and events cut
 * short or hostile counted and left out; and the web page's tree of it
 * (client/profile/write.c). */
#include "format/es_event_types.h"
#include "profile/prof.h"
#include "profile/write.h"
#include "../unit.h"

#include <stdlib.h>
#include <string.h>

static size_t put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return 4;
}

static size_t put64(uint8_t *p, uint64_t v) {
    put32(p, (uint32_t)(v >> 32));
    return 4 + put32(p + 4, (uint32_t)v);
}

static void feed(struct es_prof *p, uint16_t type, uint64_t t, const uint8_t *payload, size_t n) {
    struct es_event ev = {.type = type, .time = t, .payload = payload, .payload_len = n};
    es_prof_event(p, &ev);
}

static void cost_centre(struct es_prof *p, uint32_t id, const char *label, const char *module,
                        const char *srcloc) {
    uint8_t b[512];
    size_t n = put32(b, id);
    for (const char *s[] = {label, module, srcloc}, **q = s; q < s + 3; q++) {
        memcpy(b + n, *q, strlen(*q) + 1);
        n += strlen(*q) + 1;
    }
    b[n++] = 0;
    feed(p, ES_EVENT_HEAP_PROF_COST_CENTRE, 1, b, n);
}

/* A sample on `cap` at `t` of the stack `ids` (innermost first, as the RTS
 * posts it), `depth` of them. */
static void sample(struct es_prof *p, uint32_t cap, uint64_t t, const uint32_t *ids,
                   unsigned depth) {
    uint8_t b[13 + 4 * 256];
    size_t n = put32(b, cap);
    n += put64(b + n, 7);
    b[n++] = (uint8_t)depth;
    for (unsigned i = 0; i < depth; i++)
        n += put32(b + n, ids[i]);
    feed(p, ES_EVENT_PROF_SAMPLE_COST_CENTRE, t, b, n);
}

static void begin(struct es_prof *p, uint64_t tick) {
    uint8_t b[8];
    put64(b, tick);
    feed(p, ES_EVENT_PROF_BEGIN, 0, b, 8);
}

UNIT_CASE(client_prof_names) {
    struct es_prof p;
    es_prof_init(&p);
    cost_centre(&p, 3, "heavy", "Main", "Main.hs:6:1-64");
    cost_centre(&p, 4, "GC", "GC", "<built-in>");
    cost_centre(&p, 5, "main.\\", "Main", "src/Main.hs:(15,16)-(18,24)");
    char buf[128], file[64];
    int64_t line;
    ok(strcmp(es_prof_name(&p, 3, buf, sizeof buf), "Main.heavy") == 0, "MODULE.LABEL: %s", buf);
    ok(strcmp(es_prof_name(&p, 4, buf, sizeof buf), "GC") == 0, "the RTS's own by label: %s", buf);
    ok(es_prof_builtin(&p, 4) && !es_prof_builtin(&p, 3), "GC is the RTS's own, heavy is not");
    ok(strcmp(es_prof_name(&p, 9, buf, sizeof buf), "cost centre 9") == 0, "never defined: %s",
       buf);
    ok(es_prof_file(&p, 3, file, sizeof file, &line) && strcmp(file, "Main.hs") == 0 && line == 6,
       "file and line of Main.hs:6:1-64: %s %lld", file, (long long)line);
    ok(es_prof_file(&p, 5, file, sizeof file, &line) && strcmp(file, "src/Main.hs") == 0 &&
           line == 15,
       "file and line of a span: %s %lld", file, (long long)line);
    ok(es_prof_file(&p, 4, file, sizeof file, &line) == NULL && line == 0, "<built-in>: no file");
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_stacks_and_runs) {
    struct es_prof p;
    es_prof_init(&p);
    p.keep_runs = true;
    begin(&p, 1); /* a tick of 1 ns, as the samples' times below */
    const uint32_t a[] = {3, 2, 1}, b[] = {4, 2, 1};
    sample(&p, 0, 10, a, 3);
    sample(&p, 0, 11, a, 3);
    sample(&p, 1, 11, b, 3);
    sample(&p, 0, 12, b, 3);
    sample(&p, 0, 13, NULL, 0); /* MAIN itself */
    ok(p.samples == 5 && p.nstacks == 3, "5 samples of 3 stacks: %llu, %u",
       (unsigned long long)p.samples, (unsigned)p.nstacks);
    uint32_t depth;
    const uint32_t *ids = es_prof_frames(&p, 0, &depth);
    ok(depth == 3 && ids[0] == 1 && ids[1] == 2 && ids[2] == 3, "root first");
    ok(p.stacks[0].samples == 2 && p.stacks[1].samples == 2, "counted per stack");
    ok(p.ncaps == 2 && p.caps[0].n == 3 && p.caps[0].runs[0].ticks == 2 && p.caps[1].n == 1,
       "capability 0: runs a x2, b, MAIN; capability 1: b");
    ok(p.first == 10 && p.last == 13 && p.tick_ns == 1, "times and the tick");
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_tail_is_exact) {
    struct es_prof p;
    es_prof_init(&p);
    p.keep_runs = true;
    p.tail_ns = 50;
    begin(&p, 10);
    const uint32_t a[] = {1}, b[] = {2};
    /* Unevenly spaced, as ticks on a loaded machine: 0, 13, 26, ... 195. */
    for (uint64_t i = 0; i < 16; i++)
        sample(&p, (uint32_t)(i % 2), i * 13, i < 12 ? a : b, 1);
    es_prof_tail_end(&p);
    /* The last 50 before 195: 145 on, i.e. 156, 169, 182, 195 (i 12..15). */
    ok(p.samples == 4 && p.outside == 12 && p.first == 156 && p.last == 195,
       "the last 50: 4 samples from 156 to 195 (%llu, %llu left out, %llu..%llu)",
       (unsigned long long)p.samples, (unsigned long long)p.outside, (unsigned long long)p.first,
       (unsigned long long)p.last);
    ok(p.stacks[0].samples == 0 && p.stacks[1].samples == 4, "all of stack b, none of a");
    ok(p.caps[0].n == 1 && p.caps[0].runs[0].ticks == 2 && p.caps[1].n == 1 && p.nruns == 2,
       "the runs made from the tail: one per capability");
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_window) {
    struct es_prof p;
    es_prof_init(&p);
    p.from = 100;
    p.to = 200;
    const uint32_t a[] = {1};
    sample(&p, 0, 99, a, 1);
    sample(&p, 0, 100, a, 1);
    sample(&p, 0, 199, a, 1);
    sample(&p, 0, 200, a, 1);
    ok(p.samples == 2 && p.outside == 2, "[from, to): 2 in, 2 out");
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_hostile_events) {
    struct es_prof p;
    es_prof_init(&p);
    uint8_t b[64] = {0};
    feed(&p, ES_EVENT_PROF_SAMPLE_COST_CENTRE, 1, b, 5); /* no tick, no depth */
    size_t n = put32(b, 0);
    n += put64(b + n, 1);
    b[n++] = 9; /* depth 9, one id */
    n += put32(b + n, 1);
    feed(&p, ES_EVENT_PROF_SAMPLE_COST_CENTRE, 1, b, n);
    const uint32_t huge[] = {ES_PROF_MAX_CC};
    sample(&p, 0, 1, huge, 1);
    feed(&p, ES_EVENT_HEAP_PROF_COST_CENTRE, 1, (const uint8_t *)"\0\0\0\1abc", 7); /* no NUL */
    uint8_t cc[16];
    put32(cc, ES_PROF_MAX_CC + 5);
    memcpy(cc + 4, "x\0y\0z\0", 7);
    feed(&p, ES_EVENT_HEAP_PROF_COST_CENTRE, 1, cc, 11);
    feed(&p, ES_EVENT_PROF_BEGIN, 1, b, 3);
    ok(p.bad == 6 && p.samples == 0 && p.ncc == 0 && p.tick_ns == 0,
       "six bad events counted, nothing kept (bad %llu)", (unsigned long long)p.bad);
    const uint32_t a[] = {2};
    p.keep_runs = true;
    sample(&p, 5000, 1, a, 1); /* a capability past the last kept apart */
    ok(p.ncaps == ES_PROF_MAX_CAPS && p.caps[ES_PROF_MAX_CAPS - 1].n == 1,
       "folded into the last capability");
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_interns_many_stacks) {
    struct es_prof p;
    es_prof_init(&p);
    uint32_t ids[3];
    for (uint32_t round = 0; round < 3; round++)
        for (uint32_t i = 0; i < 5000; i++) {
            ids[0] = i;
            ids[1] = i % 7;
            ids[2] = 1;
            sample(&p, i % 4, (uint64_t)round * 5000 + i, ids, 3);
        }
    ok(p.nstacks == 5000 && p.samples == 15000, "5000 stacks once each: %u", (unsigned)p.nstacks);
    bool all3 = true;
    for (uint32_t s = 0; s < p.nstacks; s++)
        all3 = all3 && p.stacks[s].samples == 3;
    ok(all3, "every stack counted three times");
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_runs_only_when_asked) {
    struct es_prof p;
    es_prof_init(&p);
    const uint32_t a[] = {1}, b[] = {2};
    for (uint64_t t = 0; t < 1000; t++)
        sample(&p, (uint32_t)(t % 4), t, t % 8 < 4 ? a : b, 1);
    ok(p.samples == 1000 && p.nstacks == 2 && p.nruns == 0 && p.caps[0].n == 0,
       "without keep_runs: the counts, no runs (%llu runs)", (unsigned long long)p.nruns);
    ok(p.ncaps == 4, "the capabilities still counted");
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_tree) {
    struct es_prof p;
    es_prof_init(&p);
    cost_centre(&p, 1, "main", "Main", "Main.hs:1:1");
    cost_centre(&p, 2, "go", "Main", "Main.hs:2:1");
    cost_centre(&p, 3, "<heavy>", "Main", "Main.hs:3:1");
    cost_centre(&p, 4, "light", "Main", "Main.hs:4:1");
    const uint32_t a[] = {3, 2, 1}, b[] = {4, 2, 1}, c[] = {2, 1};
    for (int i = 0; i < 6; i++)
        sample(&p, 0, (uint64_t)i, a, 3);
    sample(&p, 0, 6, b, 3);
    sample(&p, 0, 7, c, 2);
    sample(&p, 0, 8, NULL, 0); /* MAIN's own */
    struct es_httpbuf out = {0};
    ok(es_profwrite_tree(&out, &p, 0) == 0, "written");
    const char *want = "{\"name\":\"MAIN\",\"value\":9,\"children\":[{\"name\":\"Main.main\","
                       "\"value\":8,\"children\":[{\"name\":\"Main.go\",\"value\":8,\"children\":"
                       "[{\"name\":\"Main.\\u003cheavy\\u003e\",\"value\":6},{\"name\":"
                       "\"Main.light\",\"value\":1}]}]}]}";
    ok(out.p && strcmp(out.p, want) == 0, "the tree, values inclusive, '<' escaped: %s",
       out.p ? out.p : "(none)");
    es_httpbuf_free(&out);
    struct es_httpbuf pruned = {0};
    es_profwrite_tree(&pruned, &p, 2);
    ok(pruned.p && strstr(pruned.p, "light") == NULL && strstr(pruned.p, "heavy") != NULL &&
           strstr(pruned.p, "\"value\":8") != NULL,
       "nodes under 2 samples left out, their time in their caller's: %s",
       pruned.p ? pruned.p : "(none)");
    es_httpbuf_free(&pruned);
    es_prof_destroy(&p);
}

UNIT_CASE(client_prof_tree_grows) {
    struct es_prof p;
    es_prof_init(&p);
    uint32_t ids[2];
    for (uint32_t i = 0; i < 3000; i++) {
        ids[0] = i + 10; /* 3000 callees of one caller: past the first 1024 nodes */
        ids[1] = 1;
        sample(&p, 0, i, ids, 2);
    }
    struct es_httpbuf out = {0};
    ok(es_profwrite_tree(&out, &p, 0) == 0, "written");
    size_t names = 0;
    for (const char *q = out.p; q && (q = strstr(q, "\"name\"")) != NULL; q++)
        names++;
    ok(names == 3002 && strncmp(out.p, "{\"name\":\"MAIN\",\"value\":3000,", 28) == 0,
       "MAIN, its callee and 3000 under it: %zu names", names);
    es_httpbuf_free(&out);
    es_prof_destroy(&p);
}
