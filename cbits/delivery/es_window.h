/* SPDX-License-Identifier: BSD-3-Clause */
/* The flight recorder's window: the most recent whole chunks of the
 * stream, kept at all times (while nobody is connected, and after clients
 * leave), so that a client that asks (EVENTLOG_SOCKET_CMD_WINDOW,
 * es_fanout_window) or the dump at a failing exit (es_fanout_write_window)
 * gets the program's last minutes. It holds one reference on every chunk
 * from its oldest to the newest in the chunk store (es_store.h), so those
 * chunks stay in the store's list, in the order they came; past its size
 * (GHC_EVENTLOG_RETAIN: it holds at least that many bytes once the stream
 * has, and less than one chunk more) or its age in program time
 * (GHC_EVENTLOG_RETAIN_SECONDS) it lets the oldest go, never the newest.
 * No memory of its own. Loop thread only (after the loop has ended, the
 * thread that ended it may read it). */
#ifndef ES_WINDOW_H
#define ES_WINDOW_H

#include "es_chunk.h"
#include "es_store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct es_window {
    size_t limit;        /* bytes (and at most one chunk more); 0: no window */
    uint64_t max_age_ns; /* program time at most; 0: no limit */
    struct es_chunk *first, *last;
    size_t bytes;
    uint64_t chunks;
    uint64_t newest_time; /* the latest block end time seen */
};

/* A window of at most `limit` bytes (0: none) and `max_age_ns` of program
 * time (0: no limit). */
void es_window_init(struct es_window *w, size_t limit, uint64_t max_age_ns);

/* Whether a window is kept. */
static inline bool es_window_on(const struct es_window *w) {
    return w->limit > 0;
}

/* The references the window takes on each appended chunk (es_store_append's
 * `holders`): 1 when it is on, else 0. */
static inline unsigned es_window_holders(const struct es_window *w) {
    return w->limit > 0 ? 1 : 0;
}

/* Bytes and chunks in the window now. */
static inline size_t es_window_bytes(const struct es_window *w) {
    return w->bytes;
}
static inline uint64_t es_window_chunks(const struct es_window *w) {
    return w->chunks;
}

/* The oldest chunk in the window, or NULL when it is empty; the newest. */
static inline struct es_chunk *es_window_first(const struct es_window *w) {
    return w->first;
}
static inline struct es_chunk *es_window_last(const struct es_window *w) {
    return w->last;
}

/* `c` was just appended to `st` with a reference counted for the window
 * (es_window_holders): the window takes that reference, then lets the
 * oldest chunks go past its size or age. */
void es_window_add(struct es_window *w, struct es_store *st, struct es_chunk *c);

/* What the window covers: the earliest start and the latest end of its
 * blocks (program time, ns); both 0 when it holds no block. */
void es_window_span(const struct es_window *w, const struct es_store *st, uint64_t *from,
                    uint64_t *to);

/* Let every chunk go (the window stays on, empty). */
void es_window_clear(struct es_window *w, struct es_store *st);

#endif
