/* SPDX-License-Identifier: BSD-3-Clause */
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

#include "base/es_bytes.h"
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

/* A run of consecutive events that were not reported one by one
 * (es_stream_skim): what a consumer that counts, times and places every
 * event needs of them. */
struct es_stream_skip {
    uint64_t events;             /* how many (at least 1) */
    uint64_t offset;             /* stream offset of the first one's first byte */
    uint64_t bytes;              /* their bytes, from `offset` on without a gap */
    uint64_t min_time, max_time; /* the smallest and largest of their times */
};
typedef void (*es_stream_skip_fn)(const struct es_stream_skip *run, void *ctx);

struct es_stream {
    enum es_stream_state state;
    struct es_header header; /* valid from ES_STREAM_EVENTS on */
    struct es_bytes pending; /* bytes not yet consumed: a partial header or event */
    uint64_t offset;         /* stream offset of pending.data[0] */
    uint64_t events;         /* complete events read, block markers included */
    const char *error;       /* a static description, once state is ES_STREAM_ERROR */
    uint64_t error_offset;   /* where it was found */
    /* The latest time of an event read, block markers aside (they carry
     * their block's start); current after each es_stream_feed. */
    uint64_t latest_time;
    /* Skimming (es_stream_skim): NULL `want` until set. */
    const bool *want;
    const uint64_t *window;
    es_stream_skip_fn on_skip;
    /* The owner's tap (es_stream_tap): NULL `tap` until set. */
    const bool *tap;
    void (*on_tap)(const struct es_event *ev, const uint8_t *base, void *ctx);
    /* Each type's extent and treatment, from the header and `want`, for
     * the reader's loop (es_stream.c). */
    uint32_t kind[ES_MAX_EVENT_TYPES];
};

/* Called for every complete event; `ev->offset` is relative to `base`, which
 * is valid only during the call. */
typedef void (*es_stream_fn)(const struct es_event *ev, const uint8_t *base, void *ctx);
/* Called once when the header has been read. */
typedef void (*es_stream_header_fn)(const struct es_header *hdr, void *ctx);

struct es_stream_callbacks {
    es_stream_header_fn on_header; /* may be NULL */
    es_stream_fn on_event;         /* may be NULL */
    void *ctx;                     /* on_event's and on_skip's */
    /* The reader's owner when it is not the consumer (a source that keeps
     * what the stream tells of the program and hands the events on,
     * client/source/conn.c): on_header's and on_tap's ctx. NULL: ctx. */
    void *owner_ctx;
};

void es_stream_init(struct es_stream *s);
void es_stream_destroy(struct es_stream *s);

/* Report only some events one by one, before the first bytes are fed:
 * the events of the types `want` flags (ES_MAX_EVENT_TYPES flags), those
 * whose time lies outside [window[0], window[1]) when `window` is set
 * (read again after every callback, so that the consumer can move it),
 * and any the reader does not skim (a type with an odd size, the last
 * bytes of a piece) go to on_event; the others are summed into runs for
 * `on_skip` (called with the callbacks' ctx), which comes, in stream
 * order, before the next event reported and before es_stream_feed
 * returns. A consumer whose state the other types change only through
 * counts and times so sees the same stream for a fraction of the cost: the
 * parse of `metrics`, `heap` and `report` (BENCHMARKS.md). `want` is read
 * once, when the header has been read; `window` must outlive the reader. */
void es_stream_skim(struct es_stream *s, const bool *want, const uint64_t *window,
                    es_stream_skip_fn on_skip);

/* Skim within `window` from now on (es_stream_skim's, which it replaces):
 * for a consumer that puts another model in place of the one it skimmed
 * for, in its header callback at the latest for the new stream. */
void es_stream_window(struct es_stream *s, const uint64_t *window);

/* Before the first bytes are fed: the events of the types `tap` flags
 * (ES_MAX_EVENT_TYPES flags, read once, when the header has been read) go
 * to on_tap, with the callbacks' owner_ctx, just before on_event, and are
 * never skimmed. So an owner that needs a few types sees them while the
 * reader calls the consumer directly for every event, without a hop of
 * its own per event (`metrics`, BENCHMARKS.md). `tap` must outlive the
 * reader. */
void es_stream_tap(struct es_stream *s, const bool *tap, es_stream_fn on_tap);

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
