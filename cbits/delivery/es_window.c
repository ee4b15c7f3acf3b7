/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_window.h"

#include "format/es_header.h"

#include <assert.h>
#include <string.h>

void es_window_init(struct es_window *w, size_t limit, uint64_t max_age_ns) {
    memset(w, 0, sizeof *w);
    w->limit = limit;
    w->max_age_ns = limit > 0 ? max_age_ns : 0;
}

/* When a chunk ended in program time: its block's end, or for the end
 * marker alone (GHC 9.0's last chunk) the newest time. */
static uint64_t end_time(const struct es_window *w, const struct es_chunk *c) {
    return es_is_block(c->data, c->len) ? es_block_end_time(c->data) : w->newest_time;
}

/* Whether the oldest chunk is past the window's size or age: the newer
 * ones hold the size without it (so the window holds at least its size
 * once the stream has, and at most one chunk more: a chunk is a whole RTS
 * buffer, and GHC 9.0's last one is the end marker alone), or it ended
 * longer ago than the age. The newest always stays. */
static bool too_old(const struct es_window *w) {
    if (w->first == w->last)
        return false;
    if (w->bytes - w->first->len >= w->limit)
        return true;
    return w->max_age_ns > 0 && end_time(w, w->first) + w->max_age_ns < w->newest_time;
}

static void drop_oldest(struct es_window *w, struct es_store *st) {
    struct es_chunk *c = w->first;
    /* The next one is the window's too, so it stays linked when c goes. */
    w->first = c == w->last ? NULL : es_store_next(st, c);
    if (w->first == NULL)
        w->last = NULL;
    assert(w->bytes >= c->len && w->chunks > 0);
    w->bytes -= c->len;
    w->chunks--;
    es_store_release(st, c);
}

void es_window_add(struct es_window *w, struct es_store *st, struct es_chunk *c) {
    assert(es_window_on(w) && c->refs > 0 && es_store_holds(st, c));
    assert(w->last == NULL || es_store_next(st, w->last) == c);
    if (w->first == NULL)
        w->first = c;
    w->last = c;
    w->bytes += c->len;
    w->chunks++;
    uint64_t t = end_time(w, c);
    if (t > w->newest_time)
        w->newest_time = t;
    while (too_old(w))
        drop_oldest(w, st);
}

void es_window_span(const struct es_window *w, const struct es_store *st, uint64_t *from,
                    uint64_t *to) {
    *from = *to = 0;
    bool any = false;
    for (const struct es_chunk *c = w->first; c != NULL; c = es_store_next(st, c)) {
        if (es_is_block(c->data, c->len)) {
            uint64_t a = es_block_time(c->data), b = es_block_end_time(c->data);
            if (!any || a < *from)
                *from = a;
            if (!any || b > *to)
                *to = b;
            any = true;
        }
        if (c == w->last)
            break;
    }
}

void es_window_clear(struct es_window *w, struct es_store *st) {
    while (w->first != NULL)
        drop_oldest(w, st);
}
