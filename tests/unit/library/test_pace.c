/* SPDX-License-Identifier: BSD-3-Clause */
/* Flush pacing: the next flush is due one interval after the least recent
 * hand-over of any capability, never earlier than one interval after the
 * last flush nor later than ES_PACE_MAX_INTERVALS intervals after it, and
 * every interval when the capabilities are not all known. */
#include "format/es_events.h"
#include "delivery/es_pace.h"
#include "../unit.h"

#define MS UINT64_C(1000000)

static const uint64_t interval = 100 * MS, flush = 1000 * MS;

UNIT_CASE(pace_follows_handovers) {
    struct es_pace p;
    es_pace_init(&p);
    ok(es_pace_next_flush(&p, flush, interval) == flush + interval,
       "no capability seen yet: one interval after the last flush");

    es_pace_note_block(&p, 0, flush + 60 * MS);
    es_pace_note_block(&p, 1, flush + 80 * MS);
    ok(es_pace_next_flush(&p, flush, interval) == flush + 160 * MS,
       "both capabilities handed a block over since: one interval after the older hand-over");

    es_pace_note_block(&p, 0, flush + 150 * MS);
    ok(es_pace_next_flush(&p, flush, interval) == flush + 180 * MS,
       "a newer block from the older one moves it to the other's hand-over");
    es_pace_note_block(&p, 0, flush + 20 * MS);
    ok(es_pace_next_flush(&p, flush, interval) == flush + 180 * MS,
       "an out-of-order earlier time is ignored");

    es_pace_note_block(&p, ES_GLOBAL_CAP, flush + 10 * MS);
    ok(es_pace_next_flush(&p, flush, interval) == flush + 180 * MS,
       "the global buffer's blocks do not pace");

    ok(es_pace_next_flush(&p, flush + 120 * MS, interval) == flush + 220 * MS,
       "a capability not heard from since the last flush counts from that flush");
    ok(es_pace_next_flush(&p, flush + 200 * MS, interval) == flush + 300 * MS,
       "a flush after every hand-over: one interval after it");

    /* Capability 1 is idle from here on: the flushes keep to the interval. */
    for (uint64_t t = 200; t < 3000; t += 50)
        es_pace_note_block(&p, 0, flush + t * MS);
    ok(es_pace_next_flush(&p, flush + 2000 * MS, interval) == flush + 2100 * MS,
       "an idle capability keeps one flush per interval");

    /* Both keep handing blocks over: only the global buffer's limit is left. */
    for (uint64_t t = 200; t < 3000; t += 50)
        es_pace_note_block(&p, 1, flush + t * MS);
    ok(es_pace_next_flush(&p, flush, interval) == flush + ES_PACE_MAX_INTERVALS * interval,
       "busy capabilities: at most %d intervals between flushes", ES_PACE_MAX_INTERVALS);
}

/* Capability 3 seen, 2 never: 2 may hold anything since the last flush. */
UNIT_CASE(pace_capability_gap) {
    struct es_pace p;
    es_pace_init(&p);
    es_pace_note_block(&p, 0, flush + 50 * MS);
    es_pace_note_block(&p, 3, flush + 50 * MS);
    ok(es_pace_next_flush(&p, flush, interval) == flush + interval,
       "a gap in the capability numbers counts as a capability with old data");
}

UNIT_CASE(pace_beyond_tracked) {
    struct es_pace p;
    es_pace_init(&p);
    es_pace_note_block(&p, 0, flush + 50 * MS);
    es_pace_note_block(&p, ES_PACE_CAPS, flush + 50 * MS);
    ok(es_pace_next_flush(&p, flush, interval) == flush + interval,
       "a capability beyond the tracked ones: every interval");
}
