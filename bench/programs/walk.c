/* SPDX-License-Identifier: BSD-3-Clause */
/* Event-walk throughput: how fast the walker thread's walk (the one that finds
 * end markers and keeps definition events) gets through a real recorded
 * eventlog. Walks every block of FILE with es_events_walk and one plan, as
 * the walker thread does, REPEAT times,
 * and prints one JSON object with MB/s, next to the speed of memchr over the
 * same bytes as a reference (a pass that only reads memory).
 *
 *   walk FILE REPEAT */
#define _GNU_SOURCE
#include "delivery/es_defs.h"
#include "format/es_events.h"
#include "format/es_header.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t kept;
static void count_definitions(const struct es_event *ev, void *ctx) {
    (void)ev;
    (void)ctx;
    kept++;
}

/* Walk the stream from `from` (past its header) block by block, as the
 * RTS hands them over; returns the blocks, adds their events to `*events`
 * (not NULL: the plan counts) and any block that does not walk cleanly to
 * `bad`. */
static size_t bad;
static size_t walk_all(const struct es_walk_plan *plan, const uint8_t *buf, size_t len, size_t from,
                       size_t *events) {
    size_t blocks = 0;
    for (size_t pos = from; pos < len;) {
        size_t n = len - pos;
        if (n > 24 && es_be16(buf + pos) == ES_EVENT_BLOCK_MARKER) {
            n = es_be32(buf + pos + 10);
            if (pos + n + 2 == len)
                n += 2; /* the end marker written with the last block */
        }
        struct es_chunk_info info;
        bad += es_events_walk(plan, buf + pos, n, &info, count_definitions, NULL) != 0;
        if (events != NULL)
            *events += info.events;
        blocks++;
        pos += n;
    }
    return blocks;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: walk FILE REPEAT\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    size_t len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(len);
    if (fread(buf, 1, len, f) != len) {
        perror("read");
        return 1;
    }
    fclose(f);
    static struct es_header h;
    if (es_header_parse(buf, len, &h) != 0) {
        fprintf(stderr, "walk: %s has no eventlog header\n", argv[1]);
        return 1;
    }
    int repeat = atoi(argv[2]);
    static bool want[ES_MAX_EVENT_TYPES];
    for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++)
        want[t] = es_defs_is_definition((uint16_t)t);
    /* Walked as the walker thread walks, without counting; the events
     * are counted in a pass of their own, before the clock starts. */
    static struct es_walk_plan plan, counted;
    es_events_plan_init(&plan, &h, want, false);
    es_events_plan_init(&counted, &h, want, true);
    size_t data = len - h.len, events = 0, blocks = 0;
    (void)walk_all(&counted, buf, len, h.len, &events);
    size_t first = kept;
    double start = now();
    for (int r = 0; r < repeat; r++)
        blocks += walk_all(&plan, buf, len, h.len, NULL);
    double walk = now() - start;
    start = now();
    size_t zeros = 0;
    for (int r = 0; r < repeat; r++)
        for (const uint8_t *p = buf + h.len; (p = memchr(p, 0xfe, (size_t)(buf + len - p))); p++)
            zeros++;
    double scan = now() - start;
    printf("{\"mode\": \"walk\", \"bytes\": %zu, \"events\": %zu, \"blocks\": %zu, "
           "\"bad_blocks\": %zu, \"definitions\": %zu, \"walk_mb_per_s\": %.1f, "
           "\"memchr_mb_per_s\": %.1f, \"ignore\": %zu}\n",
           data, events, blocks / (size_t)repeat, bad, first, (double)data * repeat / 1e6 / walk,
           (double)data * repeat / 1e6 / scan, zeros);
    return bad != 0;
}
