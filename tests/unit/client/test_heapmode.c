/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a program has a heap profiling mode, as `control`, `heap` and
 * `top` read it (client/source/heapmode.c): -h options among the RTS options of
 * the arguments and in GHCRTS, and the verdict from a stream's events. */
#include "format/es_event_types.h"
#include "source/heapmode.h"
#include "../unit.h"

#include <string.h>

/* NUL-separated strings from a literal with '|' between them. */
static size_t nul_sep(const char *text, char *out) {
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++)
        out[i] = text[i] == '|' ? '\0' : text[i];
    return n;
}

static bool argv_mode(const char *text) {
    char buf[256];
    return es_heapmode_in_args(buf, nul_sep(text, buf));
}

static bool env_mode(const char *text) {
    char buf[256];
    return es_heapmode_in_env(buf, nul_sep(text, buf));
}

static void feed(struct es_heapmode *hm, uint16_t type, const char *strs) {
    uint8_t payload[260] = {0, 0, 0, 0};
    size_t n = strs ? nul_sep(strs, (char *)payload + 4) : 0;
    struct es_event ev = {.type = type, .payload = payload, .payload_len = 4 + n};
    es_heapmode_event(hm, &ev);
}

UNIT_CASE(client_heapmode_options) {
    ok(argv_mode("./app|x|+RTS|-hT|-i0.5|-RTS"), "+RTS -hT -RTS");
    ok(argv_mode("./app|+RTS|-l|-h"), "+RTS -h up to the end");
    ok(argv_mode("./app|+RTS|-hc|-RTS|+RTS|-s"), "the first +RTS group");
    ok(!argv_mode("./app|-hT"), "-hT outside +RTS is the program's");
    ok(!argv_mode("./app|+RTS|-H64m|-RTS"), "-H is no heap profiling mode");
    ok(!argv_mode("./app|--RTS|+RTS|-hT"), "after --RTS everything is the program's");
    ok(!argv_mode("-hT|x"), "argv[0] is not an option");
    ok(env_mode("HOME=/root|GHCRTS=-N2 -hT|PATH=/bin"), "GHCRTS with -hT");
    ok(!env_mode("HOME=/root|GHCRTS=-N2 -H1g"), "GHCRTS without a -h option");
    ok(!env_mode("XGHCRTS=-hT"), "only GHCRTS itself");
    ok(es_heapmode_of_pid(0) == -1, "no pid: cannot tell");
}

/* A header of GHC 9.2+ (IPE declared) or of 9.0. */
static void header(struct es_header *hdr, bool ipe) {
    memset(hdr, 0, sizeof *hdr);
    for (unsigned i = 0; i < ES_MAX_EVENT_TYPES; i++)
        hdr->size[i] = ES_SIZE_UNDECLARED;
    if (ipe)
        hdr->size[ES_EVENT_IPE] = ES_SIZE_VARIABLE;
}

UNIT_CASE(client_heapmode_events_9_2) {
    struct es_header hdr;
    header(&hdr, true);
    struct es_heapmode hm;
    es_heapmode_header(&hm, &hdr, 0);
    ok(es_heapmode_verdict(&hm) == ES_HEAPMODE_UNKNOWN, "9.2+: nothing yet, unknown");
    feed(&hm, ES_EVENT_PROGRAM_ARGS, "./app|+RTS|-l|-RTS");
    ok(es_heapmode_verdict(&hm) == ES_HEAPMODE_UNKNOWN,
       "9.2+: arguments without HEAP_INFO_GHC: the definitions may not be all in");
    feed(&hm, ES_EVENT_HEAP_INFO_GHC, NULL);
    ok(es_heapmode_verdict(&hm) == ES_HEAPMODE_UNKNOWN,
       "9.2+: no capability sets: a restarted eventlog (started from Haskell), which never "
       "re-posts HEAP_PROF_BEGIN: unknown");
    feed(&hm, ES_EVENT_CAP_CREATE, NULL);
    ok(es_heapmode_verdict(&hm) == ES_HEAPMODE_OFF, "9.2+: the definitions without one: off");
    feed(&hm, ES_EVENT_HEAP_PROF_SAMPLE_BEGIN, NULL);
    ok(es_heapmode_verdict(&hm) == ES_HEAPMODE_ON, "a heap sample: on");
}

UNIT_CASE(client_heapmode_ghcrts_event) {
    struct es_header hdr;
    header(&hdr, true);
    struct es_heapmode hm;
    es_heapmode_header(&hm, &hdr, 0);
    feed(&hm, ES_EVENT_PROGRAM_ENV, "GHCRTS=-hT");
    ok(es_heapmode_verdict(&hm) == ES_HEAPMODE_ON, "GHCRTS in PROGRAM_ENV: on");
}

UNIT_CASE(client_heapmode_events_9_0) {
    struct es_header hdr;
    header(&hdr, false);
    struct es_heapmode hm;
    es_heapmode_header(&hm, &hdr, 0);
    ok(hm.no_flush && es_heapmode_verdict(&hm) == ES_HEAPMODE_UNKNOWN,
       "9.0 without a server pid: unknown");
    feed(&hm, ES_EVENT_HEAP_PROF_BEGIN, NULL);
    ok(es_heapmode_verdict(&hm) == ES_HEAPMODE_ON, "HEAP_PROF_BEGIN: on");
}
