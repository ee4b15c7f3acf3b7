/* An incremental reader of an eventlog as a client receives it from a
 * socket or a file: the header, then events (block markers included) up to
 * the end-of-data marker, in pieces of any size. It tells "wait for more"
 * from "this is not an eventlog", and at the end whether the stream was
 * complete or cut, and where. Built on the library's own header and event
 * parsers (es_header.h, es_events.h): there is no second parser.
 *
 * One reader per stream, used by one thread at a time; no locking. */
#ifndef ES_STREAM_H
#define ES_STREAM_H

#include "es_events.h"
#include "es_header.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum es_stream_state {
    ES_STREAM_HEADER, /* reading the header */
    ES_STREAM_EVENTS, /* reading events */
    ES_STREAM_END,    /* the end-of-data marker has been read */
    ES_STREAM_ERROR,  /* malformed; `error` says how */
};

/* A header longer than this is taken for garbage (GHC's are 10-30 KB). */
#define ES_STREAM_MAX_HEADER ((size_t)4 << 20)

struct es_stream {
    enum es_stream_state state;
    struct es_header header; /* valid from ES_STREAM_EVENTS on */
    uint8_t *pending;        /* received bytes not yet consumed: a partial */
    size_t len, cap;         /* header or a partial event */
    uint64_t offset;         /* stream offset of pending[0] */
    uint64_t events;         /* complete events read, block markers included */
    const char *error;       /* a static description, once state is ES_STREAM_ERROR */
    uint64_t error_offset;   /* where it was found */
};

/* Called for every complete event; `ev->offset` is relative to `base`, which
 * is valid only during the call. */
typedef void (*es_stream_fn)(const struct es_event *ev, const uint8_t *base, void *ctx);
/* Called once when the header has been read. */
typedef void (*es_stream_header_fn)(const struct es_header *hdr, void *ctx);

struct es_stream_callbacks {
    es_stream_header_fn on_header; /* may be NULL */
    es_stream_fn on_event;         /* may be NULL */
    void *ctx;
};

void es_stream_init(struct es_stream *s);
void es_stream_destroy(struct es_stream *s);

/* Feed the next `n` bytes. Returns 0, -EINVAL when the stream is malformed
 * (from then on every call returns it; `error` says why), or -ENOMEM. */
int es_stream_feed(struct es_stream *s, const void *data, size_t n,
                   const struct es_stream_callbacks *cb);

/* The stream has ended (EOF). Returns 0 when it ended with the end-of-data
 * marker, -EINVAL when it was malformed, or -EPIPE when it was cut: then
 * `error` says where ("inside the header", "inside an event", "before the
 * end-of-data marker"). */
int es_stream_finish(struct es_stream *s);

#endif
