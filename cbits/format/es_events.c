/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_events.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void es_events_iter_init(struct es_event_iter *it, const struct es_header *hdr, const uint8_t *buf,
                         size_t len) {
    it->hdr = hdr;
    it->buf = buf;
    it->len = len;
    it->pos = 0;
}

int es_events_next(struct es_event_iter *it, struct es_event *ev) {
    size_t left = it->len - it->pos;
    if (left == 0)
        return ES_WALK_DONE;
    if (left < 2)
        return -EINVAL;
    const uint8_t *p = it->buf + it->pos;
    uint16_t type = es_be16(p);
    if (type == ES_EVENT_END_MARKER) {
        it->pos += 2;
        return ES_WALK_END;
    }
    size_t head, size;
    if (es_events_extent(it->hdr, p, left, &head, &size) != 0)
        return -EINVAL;
    ev->type = type;
    ev->time = es_be64(p + 2);
    ev->offset = it->pos;
    ev->len = head + size;
    ev->payload = p + head;
    ev->payload_len = size;
    it->pos += ev->len;
    return ES_WALK_EVENT;
}

void es_events_plan_init(struct es_walk_plan *plan, const struct es_header *hdr, const bool *want,
                         bool count) {
    plan->hdr = hdr;
    plan->want = want;
    plan->count = count;
    /* The rows past the header's types are zero already (es_events.h);
     * looked at here only at their two ends. */
    assert(plan->step[ES_MAX_EVENT_TYPES] == 0 && plan->step[UINT16_MAX] == 0);
    for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++) {
        unsigned size = hdr->size[t];
        /* IPE: the careful path, which knows GHC's short ones (es_events_ipe_len). */
        if ((want != NULL && want[t]) || size == ES_SIZE_UNDECLARED || t == ES_EVENT_IPE)
            plan->step[t] = 0;
        else if (size == ES_SIZE_VARIABLE)
            plan->step[t] = ES_STEP_VARIABLE;
        else if (10 + size < ES_STEP_VARIABLE)
            plan->step[t] = (uint16_t)(10 + size);
        else
            plan->step[t] = 0;
    }
}

int es_events_inspect(const struct es_header *hdr, const uint8_t *buf, size_t len,
                      struct es_chunk_info *info, const bool *want, es_event_fn fn, void *ctx) {
    struct es_walk_plan *plan = calloc(1, sizeof *plan); /* too large for a stack */
    if (plan == NULL) {
        memset(info, 0, sizeof *info);
        return -ENOMEM;
    }
    es_events_plan_init(plan, hdr, want, true);
    int r = es_events_walk(plan, buf, len, info, fn, ctx);
    free(plan);
    return r;
}

/* How far ahead of the event being stepped over the walk asks for memory.
 * The chunk was just copied by an RTS thread on another core, and every
 * event's position depends on the length of the one before, so without
 * this the walker waits for each cache line in turn: `perf annotate` put
 * 81% of the walk's samples on the load of each event's type. Asking 2 KiB
 * ahead cut the walker's CPU time per GiB by a fifth to a third in
 * bench/throughput (BENCHMARKS.md, section 2), for one instruction per
 * event. */
#define ES_WALK_AHEAD 2048

/* The skim's parts are inlined where their flags are constants. */
#define ES_WALK_INLINE __attribute__((always_inline))

/* Step over events from `pos` while each starts at or before `stop` and
 * its type is one the plan steps over; counts them in `*n` when `counting`
 * and returns where it stopped: at or before `stop` at an event it cannot
 * step over, otherwise past it. With `ahead`, every event's position plus
 * ES_WALK_AHEAD must lie inside the chunk. Inlined for each combination of
 * the two, so that no loop tests for them.
 *
 * Each event's position depends on the length of the one before, read
 * from memory: a chain of two loads an event, which bounded the walk on
 * real streams, whose events are 20 to 30 bytes. Most events have the
 * length of the one before (runs of messages, of samples, of one kind of
 * event), so the walk steps by that length when the event's own agrees:
 * the compare is a branch the processor predicts, and the next position
 * no longer waits for this event's loads (the empty asm keeps the compiler
 * from adding the length just read instead). On a recording of the trace
 * workload the walk went from 7.5 to 13.4 GB/s (×1.78, medians of 7 runs),
 * on one of the gc workload's heap samples from 4.6 to 5.6 (×1.21), and
 * one of the threads workload, whose lengths alternate, is walked as fast
 * as before, each in no more instructions (bench/walk, BENCHMARKS.md
 * section 6). */
static inline ES_WALK_INLINE size_t skim_part(const uint16_t *step, const uint8_t *buf, size_t pos,
                                              size_t stop, size_t *n, const bool ahead,
                                              const bool counting) {
    size_t count = 0, last = 0; /* the length stepped by last; 0 before the first */
    while (pos <= stop) {
        const uint8_t *p = buf + pos;
        if (ahead)
            __builtin_prefetch(p + ES_WALK_AHEAD);
        size_t s = step[es_be16(p)];
        if (s == ES_STEP_VARIABLE)
            s = 12 + (size_t)es_be16(p + 10);
        else if (s == 0)
            break;
        if (__builtin_expect(s == last, 1)) {
            __asm__("" : "+r"(last));
            pos += last;
        } else {
            pos += last = s;
        }
        if (counting)
            count++;
    }
    if (counting)
        *n += count;
    return pos;
}

/* Step over events from `pos` while each has at least 12 bytes left
 * before `len` (`len` >= 12) and its type is one the plan steps over; adds
 * them to `*events` when `counting` and returns where it stopped, which
 * may be past `len` when the last event stepped over runs past the end.
 * Loops of their own, so that the compiler keeps everything they need in
 * registers: an event costs one table lookup and three compares (a
 * variable-size one a load more), and a prefetch until the last
 * ES_WALK_AHEAD bytes. */
static inline ES_WALK_INLINE size_t skim(const uint16_t *step, const uint8_t *buf, size_t pos,
                                         size_t len, size_t *events, const bool counting) {
    if (len - 12 > ES_WALK_AHEAD) {
        size_t stop = len - 12 - ES_WALK_AHEAD;
        pos = skim_part(step, buf, pos, stop, events, true, counting);
        if (pos <= stop) /* at an event it cannot step over */
            return pos;
    }
    return skim_part(step, buf, pos, len - 12, events, false, counting);
}

/* The walker thread runs this over every byte the RTS writes; it was two
 * thirds of the library's instructions in the bench workload (make bench,
 * section 1c). Events the plan can step over go through skim, without
 * being checked against the chunk's end one by one: one that runs past it
 * leaves `pos` past the end, which the walk reports after the loop. Every
 * other event (wanted, undeclared, the end marker, the last few bytes)
 * takes the careful path below. The block marker is looked at once, before
 * the loop. */
int es_events_walk(const struct es_walk_plan *plan, const uint8_t *buf, size_t len,
                   struct es_chunk_info *info, es_event_fn fn, void *ctx) {
    memset(info, 0, sizeof *info);
    const uint16_t *sizes = plan->hdr->size;
    /* The marker's payload: block size (4 bytes), end time (8), capability (2). */
    if (len >= 24 && es_be16(buf) == ES_EVENT_BLOCK_MARKER &&
        sizes[ES_EVENT_BLOCK_MARKER] != ES_SIZE_VARIABLE && sizes[ES_EVENT_BLOCK_MARKER] >= 14) {
        info->is_block = true;
        info->block_len = es_be32(buf + 10);
        info->cap = es_be16(buf + 22);
    }
    size_t pos = 0, events = 0;
    while (pos < len) {
        if (len - pos >= 12) {
            pos = plan->count ? skim(plan->step, buf, pos, len, &events, true)
                              : skim(plan->step, buf, pos, len, &events, false);
            if (pos >= len)
                break;
        }
        const uint8_t *p = buf + pos;
        size_t left = len - pos;
        if (left < 10) {
            /* Only the end marker is this short; nothing may follow it. */
            if (left == 2 && es_be16(p) == ES_EVENT_END_MARKER)
                break;
            return -EINVAL;
        }
        uint16_t type = es_be16(p);
        if (type >= ES_MAX_EVENT_TYPES) {
            if (type == ES_EVENT_END_MARKER && left == 2)
                break;
            return -EINVAL;
        }
        size_t head = 10, size = sizes[type];
        if (size >= ES_SIZE_UNDECLARED) {
            if (size == ES_SIZE_UNDECLARED || left < 12)
                return -EINVAL;
            size = es_be16(p + 10);
            head = 12;
        }
        if (type == ES_EVENT_IPE && head == 12 && left - head + 1 >= size)
            size = es_events_ipe_len(p + head, size, left - head < size ? left - head : size);
        size_t ev_len = head + size;
        if (ev_len > left)
            return -EINVAL;
        if (plan->want != NULL && plan->want[type]) {
            struct es_event ev = {.type = type,
                                  .time = es_be64(p + 2),
                                  .offset = pos,
                                  .len = ev_len,
                                  .payload = p + head,
                                  .payload_len = size};
            fn(&ev, ctx);
        }
        events++;
        pos += ev_len;
    }
    if (pos > len) /* the last event stepped over runs past the end */
        return -EINVAL;
    info->events = plan->count ? events : 0;
    if (pos < len) /* stopped at the end marker */
        info->has_end = true;
    return 0;
}
