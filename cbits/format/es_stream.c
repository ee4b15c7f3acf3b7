/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_stream.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void es_stream_init(struct es_stream *s) {
    memset(s, 0, sizeof *s);
    s->state = ES_STREAM_HEADER;
}

void es_stream_skim(struct es_stream *s, const bool *want, const uint64_t *window,
                    es_stream_skip_fn on_skip) {
    s->want = on_skip ? want : NULL;
    s->window = window;
    s->on_skip = on_skip;
}

void es_stream_window(struct es_stream *s, const uint64_t *window) {
    s->window = window;
}

void es_stream_tap(struct es_stream *s, const bool *tap, es_stream_fn on_tap) {
    s->tap = on_tap ? tap : NULL;
    s->on_tap = on_tap;
}

void es_stream_destroy(struct es_stream *s) {
    es_bytes_free(&s->pending);
}

static int fail(struct es_stream *s, const char *why, uint64_t offset) {
    s->state = ES_STREAM_ERROR;
    s->error = why;
    s->error_offset = offset;
    return -EINVAL;
}

/* The run of skipped events being summed (consume's). */
struct run {
    struct es_stream_skip r;
    size_t from; /* buffer position of its first event */
};

static void run_flush(struct es_stream *s, struct run *run, uint64_t offset,
                      const struct es_stream_callbacks *cb) {
    if (run->r.events == 0)
        return;
    s->events += run->r.events;
    if (run->r.max_time > s->latest_time)
        s->latest_time = run->r.max_time;
    run->r.offset = offset + run->from;
    s->on_skip(&run->r, cb ? cb->ctx : NULL);
    run->r.events = 0;
    run->r.min_time = UINT64_MAX;
    run->r.max_time = 0;
}

/* The callbacks an event is reported to, in locals (the compiler cannot
 * know that the callbacks leave them). */
struct sinks {
    es_stream_fn on_event, on_tap;
    void *ctx, *owner_ctx;
};

static struct sinks sinks_of(const struct es_stream *s, const struct es_stream_callbacks *cb) {
    struct sinks k = {cb ? cb->on_event : NULL, s->on_tap, cb ? cb->ctx : NULL,
                      cb ? cb->ctx : NULL};
    if (cb && cb->owner_ctx)
        k.owner_ctx = cb->owner_ctx;
    return k;
}

/* One event to the owner's tap when `tapped`, then to the consumer. */
static inline __attribute__((always_inline)) void report(const struct sinks *k, bool tapped,
                                                         const uint8_t *buf, size_t pos,
                                                         size_t head, size_t size) {
    if (k->on_event == NULL && !tapped)
        return;
    const uint8_t *p = buf + pos;
    struct es_event ev = {.type = es_be16(p),
                          .time = es_be64(p + 2),
                          .offset = pos,
                          .len = head + size,
                          .payload = p + head,
                          .payload_len = size};
    if (tapped)
        k->on_tap(&ev, buf, k->owner_ctx);
    if (k->on_event != NULL)
        k->on_event(&ev, buf, k->ctx);
}

/* The latest of `latest` and an event's time, block markers aside. */
static inline uint64_t later(uint64_t latest, unsigned type, uint64_t time) {
    return time > latest && type != ES_EVENT_BLOCK_MARKER ? time : latest;
}

/* consume_fast's view of a type, one word each (es_stream.kind): the
 * event's length, or for a variable size the length of its head, and how
 * to treat it. */
#define K_LEN      0x1ffffu   /* head + size (head alone when K_VARIABLE) */
#define K_VARIABLE (1u << 17) /* the size follows the time */
#define K_CAREFUL  (1u << 18) /* undeclared, or IPE (es_events_extent's care) */
#define K_SKIM     (1u << 19) /* not in `want`: may be summed into a run */
#define K_TAP      (1u << 20) /* in `tap`: to the owner first, never skimmed */

static void set_kinds(struct es_stream *s) {
    for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++) {
        uint16_t size = s->header.size[t];
        uint32_t k = size == ES_SIZE_VARIABLE ? 12u | K_VARIABLE : 10u + size;
        if (size == ES_SIZE_UNDECLARED || t == ES_EVENT_IPE)
            k = K_CAREFUL;
        else if (s->tap != NULL && s->tap[t])
            k |= K_TAP;
        else if (s->want != NULL && !s->want[t])
            k |= K_SKIM;
        s->kind[t] = k;
    }
}

/* The common case, events with at least 12 bytes left after their start:
 * each event's extent from the header's table, then either reported or,
 * when skimming (es_stream_skim) and neither its type is wanted nor its
 * time outside the window, summed into `run` at the cost of a few
 * compares. Returns where it stopped: within 12 bytes of the end, or at
 * an event the careful path in consume must look at (the end marker, an
 * undeclared type, one the bytes end inside). */
static size_t consume_fast(struct es_stream *s, const uint8_t *buf, size_t pos, size_t len,
                           uint64_t offset, const struct es_stream_callbacks *cb, struct run *run) {
    const uint32_t *kind = s->kind;
    const uint64_t *w = s->window;
    const struct sinks sinks = sinks_of(s, cb);
    uint64_t reported = 0, latest = s->latest_time;
    uint64_t lo = w ? w[0] : 0, hi = w ? w[1] : UINT64_MAX;
    /* The run is open only between two events reported: it starts empty. */
    assert(run->r.events == 0);
    uint64_t n = 0, min = UINT64_MAX, max = 0;
    while (len - pos >= 12) {
        const uint8_t *p = buf + pos;
        unsigned t = es_be16(p);
        if (t >= ES_MAX_EVENT_TYPES)
            break;
        uint32_t k = kind[t];
        if (k & K_CAREFUL)
            break;
        size_t head = 10, size = (k & K_LEN) - 10;
        if (k & K_VARIABLE) {
            head = 12;
            size = es_be16(p + 10);
        }
        if (head + size > len - pos)
            break;
        uint64_t time = es_be64(p + 2);
        if ((k & K_SKIM) && time >= lo && time < hi) {
            if (n++ == 0)
                run->from = pos;
            min = time < min ? time : min;
            max = time > max ? time : max;
            pos += head + size;
            continue;
        }
        if (n > 0) {
            run->r = (struct es_stream_skip){n, 0, pos - run->from, min, max};
            run_flush(s, run, offset, cb);
            n = 0;
            min = UINT64_MAX;
            max = 0;
        }
        report(&sinks, k & K_TAP, buf, pos, head, size);
        latest = later(latest, t, time);
        reported++;
        pos += head + size;
        if (w != NULL) {
            lo = w[0];
            hi = w[1];
        }
    }
    if (n > 0)
        run->r = (struct es_stream_skip){n, 0, pos - run->from, min, max};
    s->events += reported;
    if (latest > s->latest_time)
        s->latest_time = latest;
    return pos;
}

/* Consume what can be consumed of `buf` (whose first byte is at stream
 * offset `offset`); returns the number of bytes used, or a negative error.
 * What is left is a partial header or event. */
static long consume(struct es_stream *s, const uint8_t *buf, size_t len, uint64_t offset,
                    const struct es_stream_callbacks *cb) {
    size_t pos = 0;
    if (s->state == ES_STREAM_HEADER) {
        int r = es_header_scan(buf, len, &s->header);
        if (r == -EAGAIN) {
            if (len > ES_STREAM_MAX_HEADER)
                return fail(s, "the header is implausibly long", offset);
            return 0;
        }
        /* A client never sees GHC 9.0's stale marker: the server removes it. */
        if (r != 0 || s->header.skip != 0)
            return fail(s, "not an eventlog: the stream does not start with a GHC eventlog header",
                        offset);
        pos = s->header.len;
        assert(pos <= len); /* a header parsed from these bytes */
        s->state = ES_STREAM_EVENTS;
        set_kinds(s);
        if (cb && cb->on_header)
            cb->on_header(&s->header, cb->owner_ctx ? cb->owner_ctx : cb->ctx);
    }
    struct run run = {.r = {.min_time = UINT64_MAX}};
    while (s->state == ES_STREAM_EVENTS && pos < len) {
        pos = consume_fast(s, buf, pos, len, offset, cb, &run);
        size_t left = len - pos;
        const uint8_t *p = buf + pos;
        if (left < 2)
            break;
        if (es_be16(p) == ES_EVENT_END_MARKER) {
            s->state = ES_STREAM_END;
            pos += 2;
            break;
        }
        size_t head, size;
        int r = es_events_extent(&s->header, p, left, &head, &size);
        if (r == -EAGAIN)
            break;
        run_flush(s, &run, offset, cb);
        if (r != 0)
            return fail(s, "an event of a type the header does not declare", offset + pos);
        assert(head + size <= left); /* es_events_extent: the event is whole */
        const struct sinks sinks = sinks_of(s, cb);
        unsigned t = es_be16(p);
        report(&sinks, s->tap != NULL && t < ES_MAX_EVENT_TYPES && s->tap[t], buf, pos, head, size);
        s->latest_time = later(s->latest_time, t, es_be64(p + 2));
        s->events++;
        pos += head + size;
    }
    run_flush(s, &run, offset, cb);
    if (s->state == ES_STREAM_END && pos < len)
        return fail(s, "bytes after the end-of-data marker", offset + pos);
    assert(pos <= len);
    return (long)pos;
}

static int keep(struct es_stream *s, const uint8_t *data, size_t n) {
    return es_bytes_append(&s->pending, data, n, 4096);
}

/* The bytes the partial event in `pending` lacks before it can be read
 * (or found malformed): at least 1. */
static size_t missing(const struct es_stream *s) {
    const uint8_t *p = s->pending.data;
    size_t len = s->pending.len, need;
    if (len < 2)
        return 2 - len;
    unsigned t = es_be16(p);
    if (t >= ES_MAX_EVENT_TYPES || s->header.size[t] == ES_SIZE_UNDECLARED)
        return 1;
    if (s->header.size[t] == ES_SIZE_VARIABLE)
        need = len < 12 ? 12 : 12 + (size_t)es_be16(p + 10);
    else
        need = 10 + (size_t)s->header.size[t];
    return need > len ? need - len : 1;
}

int es_stream_feed(struct es_stream *s, const void *data, size_t n,
                   const struct es_stream_callbacks *cb) {
    if (s->state == ES_STREAM_ERROR)
        return -EINVAL;
    if (n == 0)
        return 0;
    const uint8_t *in = data;
    /* A partial header or event waits: complete it from the new bytes,
     * taking only the bytes it lacks (the rest is read where it lies); the
     * header is copied whole, once. Each round either completes an event,
     * learns more of its size, or uses up the input. */
    while (s->pending.len > 0 && n > 0) {
        size_t take = n;
        if (s->state == ES_STREAM_EVENTS) {
            take = missing(s);
            if (take > n)
                take = n;
        }
        if (keep(s, in, take) != 0)
            return -ENOMEM;
        in += take;
        n -= take;
        long used = consume(s, s->pending.data, s->pending.len, s->offset, cb);
        if (used < 0)
            return (int)used;
        assert((size_t)used <= s->pending.len);
        s->offset += (uint64_t)used;
        es_bytes_consume(&s->pending, (size_t)used);
    }
    if (n == 0)
        return 0;
    long used = consume(s, in, n, s->offset, cb);
    if (used < 0)
        return (int)used;
    s->offset += (uint64_t)used;
    return keep(s, in + used, n - (size_t)used) == 0 ? 0 : -ENOMEM;
}

int es_stream_finish(struct es_stream *s) {
    switch (s->state) {
    case ES_STREAM_END:
        return 0;
    case ES_STREAM_ERROR:
        return -EINVAL;
    case ES_STREAM_HEADER:
        s->error = s->offset + s->pending.len == 0 ? "the stream is empty"
                                                   : "the stream ends inside the header";
        break;
    case ES_STREAM_EVENTS:
        s->error = s->pending.len > 0 ? "the stream ends inside an event"
                                      : "the stream ends without the end-of-data marker";
        break;
    }
    s->error_offset = s->offset + s->pending.len;
    return -EPIPE;
}
