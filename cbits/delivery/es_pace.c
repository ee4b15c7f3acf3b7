/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_pace.h"

#include "format/es_events.h"

#include <string.h>

void es_pace_init(struct es_pace *p) {
    memset(p, 0, sizeof *p);
}

void es_pace_note_block(struct es_pace *p, uint16_t cap, uint64_t when) {
    if (cap == ES_GLOBAL_CAP)
        return;
    if (cap >= ES_PACE_CAPS) {
        p->untracked = true;
        return;
    }
    /* Chunks are walked in the order they arrived, but keep the later time
     * anyway: an earlier one would only bring a flush forward. */
    if (when > p->handed_over[cap])
        p->handed_over[cap] = when;
    if (cap >= p->ncaps)
        p->ncaps = cap + 1u;
}

uint64_t es_pace_next_flush(const struct es_pace *p, uint64_t last_flush, uint64_t interval) {
    uint64_t every = last_flush + interval;
    /* Before the first flush has shown every capability, some may hold
     * data that was never seen to be handed over. */
    if (p->untracked || p->ncaps == 0)
        return every;
    uint64_t due = last_flush + (uint64_t)ES_PACE_MAX_INTERVALS * interval;
    for (unsigned c = 0; c < p->ncaps; c++) {
        /* A capability never seen (numbers need not be dense as seen so
         * far) may hold anything since the last flush. */
        uint64_t emptied = p->handed_over[c] > last_flush ? p->handed_over[c] : last_flush;
        if (emptied + interval < due)
            due = emptied + interval;
    }
    return due;
}
