/* SPDX-License-Identifier: BSD-3-Clause */
/* When the RTS's buffers need flushing (GHC >= 9.2).
 *
 * A flush stops every capability and has the flushing thread copy each of
 * their partly filled buffers to the writer, one after another, while the
 * program waits: 0.3-3 ms each in a program that writes 90 MB/s of events,
 * and 4 ms at the median when another process kept a core busy (GHC 9.6.6,
 * BENCHMARKS.md, section 1). It exists so that no event waits longer than
 * the flush interval. A capability whose buffer filled and was handed over
 * recently holds nothing older than that hand-over, though; when every
 * capability did so within the interval, a flush would stop the program
 * only to deliver what is about to arrive anyway.
 *
 * So flushes are paced by the age of the oldest data that may still sit in
 * a capability's buffer: the next one is due one interval after the least
 * recent hand-over (a flush counts as a hand-over by every capability).
 * An idle capability keeps the flushes at one per interval, as before.
 * The RTS's global buffer (task and capset events, heap profile samples)
 * fills rarely and is not tracked: its events wait for a flush, so there
 * is one at least every ES_PACE_MAX_INTERVALS intervals, and the server
 * does not pace at all when the program samples its heap (es_server.h). */
#ifndef ES_PACE_H
#define ES_PACE_H

#include <stdbool.h>
#include <stdint.h>

/* Capabilities tracked; a program with more is flushed every interval. */
#define ES_PACE_CAPS 256
/* At most this many intervals between two flushes, for the global buffer. */
#define ES_PACE_MAX_INTERVALS 10

struct es_pace {
    /* When each capability last handed a block over (ns, any monotonic
     * clock), 0 for one never seen; capabilities 0 .. ncaps-1 have been. */
    uint64_t handed_over[ES_PACE_CAPS];
    unsigned ncaps;
    bool untracked; /* a capability numbered ES_PACE_CAPS or above */
};

void es_pace_init(struct es_pace *p);

/* A block from capability `cap` (ES_GLOBAL_CAP for the global buffer,
 * which is ignored) arrived at `when`. */
void es_pace_note_block(struct es_pace *p, uint16_t cap, uint64_t when);

/* When the next flush is due, given the start of the last one (or of the
 * pacing) and the interval. Never later than ES_PACE_MAX_INTERVALS
 * intervals after the last flush, never earlier than one interval after it. */
uint64_t es_pace_next_flush(const struct es_pace *p, uint64_t last_flush, uint64_t interval);

#endif
