#include "es_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void es_stream_init(struct es_stream *s) {
    memset(s, 0, sizeof *s);
    s->state = ES_STREAM_HEADER;
}

void es_stream_destroy(struct es_stream *s) {
    free(s->pending);
    s->pending = NULL;
    s->len = s->cap = 0;
}

static int fail(struct es_stream *s, const char *why, uint64_t offset) {
    s->state = ES_STREAM_ERROR;
    s->error = why;
    s->error_offset = offset;
    return -EINVAL;
}

/* GHC's postIPE (rts/eventlog/EventLog.c, GHC 9.4 and later, seen on 9.6)
 * declares an IPE event one byte longer than it writes: it counts a ':'
 * between the source file and span plus a NUL after the file, and writes
 * only the ':'. Such an event's six strings end one byte before its
 * declared end, which is the first byte of the next event: take that byte
 * back. A correct event's last string ends at its declared end. */
static size_t ipe_size(const uint8_t *payload, size_t size) {
    size_t pos = 8;
    for (int n = 0; n < 6; n++) {
        const uint8_t *z = pos < size ? memchr(payload + pos, 0, size - pos) : NULL;
        if (z == NULL)
            return size;
        pos = (size_t)(z - payload) + 1;
    }
    return pos + 1 == size ? pos : size;
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
        s->state = ES_STREAM_EVENTS;
        if (cb && cb->on_header)
            cb->on_header(&s->header, cb->ctx);
    }
    while (s->state == ES_STREAM_EVENTS && pos < len) {
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
        int r = es_event_extent(&s->header, p, left, &head, &size);
        if (r == -EAGAIN)
            break;
        if (r != 0)
            return fail(s, "an event of a type the header does not declare", offset + pos);
        if (es_be16(p) == ES_EVENT_IPE && head == 12)
            size = ipe_size(p + head, size);
        if (cb && cb->on_event) {
            struct es_event ev = {.type = es_be16(p),
                                  .time = es_be64(p + 2),
                                  .offset = pos,
                                  .len = head + size,
                                  .payload = p + head,
                                  .payload_len = size};
            cb->on_event(&ev, buf, cb->ctx);
        }
        s->events++;
        pos += head + size;
    }
    if (s->state == ES_STREAM_END && pos < len)
        return fail(s, "bytes after the end-of-data marker", offset + pos);
    return (long)pos;
}

static int keep(struct es_stream *s, const uint8_t *data, size_t n) {
    if (n == 0)
        return 0;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n)
            cap *= 2;
        uint8_t *p = realloc(s->pending, cap);
        if (p == NULL)
            return -ENOMEM;
        s->pending = p;
        s->cap = cap;
    }
    memcpy(s->pending + s->len, data, n);
    s->len += n;
    return 0;
}

int es_stream_feed(struct es_stream *s, const void *data, size_t n,
                   const struct es_stream_callbacks *cb) {
    if (s->state == ES_STREAM_ERROR)
        return -EINVAL;
    if (n == 0)
        return 0;
    const uint8_t *in = data;
    /* A partial header or event waits: complete it from the new bytes. An
     * event is at most 64 KiB, so a partial one costs a small copy; the
     * header is copied whole, once. Each round either completes an event
     * or uses up the input. */
    while (s->len > 0 && n > 0) {
        size_t take = n;
        if (s->state == ES_STREAM_EVENTS) {
            size_t longest = 12 + 65535;
            take = longest > s->len ? longest - s->len : 1;
            if (take > n)
                take = n;
        }
        if (keep(s, in, take) != 0)
            return -ENOMEM;
        in += take;
        n -= take;
        long used = consume(s, s->pending, s->len, s->offset, cb);
        if (used < 0)
            return (int)used;
        s->offset += (uint64_t)used;
        s->len -= (size_t)used;
        if (s->len > 0)
            memmove(s->pending, s->pending + used, s->len);
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
        s->error =
            s->offset + s->len == 0 ? "the stream is empty" : "the stream ends inside the header";
        break;
    case ES_STREAM_EVENTS:
        s->error = s->len > 0 ? "the stream ends inside an event"
                              : "the stream ends without the end-of-data marker";
        break;
    }
    s->error_offset = s->offset + s->len;
    return -EPIPE;
}
