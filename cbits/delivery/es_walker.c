/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_walker.h"

#include "format/es_events.h"
#include "base/es_log.h"
#include "es_pool.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int es_walker_init(struct es_walker *w, struct es_inbox *in, const bool *want,
                   es_walker_wake_fn wake, void *ctx) {
    memset(w, 0, sizeof *w);
    es_queue_init(&w->walked);
    atomic_init(&w->clock_offset, 0);
    w->in = in;
    w->want = want;
    w->wake = wake;
    w->wake_ctx = ctx;
    es_pace_init(&w->pace);
    int r = uv_mutex_init(&w->lock);
    if (r == 0 && (r = uv_cond_init(&w->done)) != 0)
        uv_mutex_destroy(&w->lock);
    return r;
}

void es_walker_destroy(struct es_walker *w) {
    struct es_queue_node *n;
    while ((n = es_queue_pop_head(&w->walked)) != NULL)
        es_pool_chunk_free(es_chunk_of(n));
    free(w->plan);
    w->plan = NULL;
    uv_cond_destroy(&w->done);
    uv_mutex_destroy(&w->lock);
}

/* Record where a definition event lies; on failure the chunk says so. */
static void note_definition(const struct es_event *ev, void *ctx) {
    struct es_chunk *c = ctx;
    if (c->ndefs == c->defs_cap) {
        size_t cap = c->defs_cap ? 2 * c->defs_cap : 16;
        struct es_span *d = realloc(c->defs, cap * sizeof *d);
        if (d == NULL) {
            c->flags |= ES_CHUNK_DEFS_LOST;
            return;
        }
        c->defs = d;
        c->defs_cap = cap;
    }
    c->defs[c->ndefs++] = (struct es_span){.offset = ev->offset, .len = ev->len};
}

/* Give the loop thread its own copy of the header just parsed, with the
 * chunk (es_fanout_ingest keeps it): the walker's goes on changing with
 * later headers. Out of memory, the loop passes the header on unparsed. */
static void hand_over_header(struct es_walker *w, struct es_chunk *c) {
    assert(c->header == NULL);
    c->header = malloc(sizeof *c->header);
    if (c->header != NULL)
        *c->header = w->header;
    else
        es_log("out of memory for a copy of the eventlog header");
}

/* Walk one chunk: mark it as the header or as ending the stream, and list
 * its definition events. Returns the capability of a block, or -1. */
static int walk(struct es_walker *w, struct es_chunk *c) {
    if (es_header_detect(c->data, c->len)) {
        c->flags |= ES_CHUNK_HEADER;
        /* A header that does not parse is reported by the loop thread;
         * chunks after it pass on unwalked. */
        bool parsed = es_header_parse(c->data, c->len, &w->header) == 0;
        if (parsed && w->plan == NULL && (w->plan = calloc(1, sizeof *w->plan)) == NULL)
            es_log("out of memory for the plan of the event walk; chunks pass on unwalked");
        w->have_header = parsed && w->plan != NULL;
        if (w->have_header)
            es_events_plan_init(w->plan, &w->header, w->want, false);
        if (parsed)
            hand_over_header(w, c);
        return -1;
    }
    if (!w->have_header)
        return -1;
    struct es_chunk_info info;
    if (es_events_walk(w->plan, c->data, c->len, &info, note_definition, c) != 0) {
        es_log_once(&w->bad_chunk_logged,
                    "a chunk from the RTS does not walk cleanly; passing it on unchanged");
        return -1;
    }
    if (info.has_end)
        c->flags |= ES_CHUNK_END;
    return info.is_block ? info.cap : -1;
}

/* A block handed over at `arrived` ended at its end time: the program's
 * clock is at least that far behind uv_hrtime's. */
static void note_clock(struct es_walker *w, const struct es_chunk *c) {
    uint64_t end = es_block_end_time(c->data);
    if (c->arrived <= end)
        return;
    uint64_t off = c->arrived - end, was = atomic_load(&w->clock_offset);
    if (was == 0 || off < was)
        atomic_store(&w->clock_offset, off);
}

uint64_t es_walker_program_time(struct es_walker *w) {
    uint64_t off = atomic_load(&w->clock_offset), now = uv_hrtime();
    return off != 0 && now > off ? now - off : 0;
}

static void walker_main(void *arg) {
    struct es_walker *w = arg;
    struct es_queue batch; /* taken from the inbox, not yet walked */
    es_queue_init(&batch);
    while (es_inbox_wait(w->in, &batch)) {
        /* Hand each chunk over as soon as it is walked, so the loop can
         * write one chunk while the next is walked. */
        struct es_queue_node *n;
        while ((n = es_queue_pop_head(&batch)) != NULL) {
            struct es_chunk *c = es_chunk_of(n);
            int cap = walk(w, c);
            /* Read before the hand-over: the loop may free the chunk. */
            size_t spare = c->flags & ES_CHUNK_HEADER ? ES_RTS_BUFFER : c->len;
            uv_mutex_lock(&w->lock);
            if (cap >= 0) {
                es_pace_note_block(&w->pace, (uint16_t)cap, c->arrived);
                note_clock(w, c);
            }
            es_queue_insert_tail(&w->walked, &c->link);
            uv_mutex_unlock(&w->lock);
            w->wake(w->wake_ctx);
            /* While the loop sends, have a buffer ready for the RTS's next
             * chunk of this size; after the header, for its first full
             * buffer. Only when no chunk waits: when they come faster
             * than they are walked, freed chunks refill the pool anyway,
             * and faulting in more memory would only take CPU from the
             * RTS (in a flood of chunks, writeEventLog's p50 went from 0.16
             * to 1 ms). Out of memory here only means the RTS thread
             * allocates for itself. */
            if (es_queue_empty(&batch) && es_inbox_empty(w->in)) {
                (void)es_pool_reserve(spare);
                (void)es_inbox_refill(w->in); /* the inbox's reserve, if it was used */
            }
        }
    }
    uv_mutex_lock(&w->lock);
    w->finished = true;
    uv_cond_broadcast(&w->done);
    uv_mutex_unlock(&w->lock);
}

int es_walker_start(struct es_walker *w) {
    return uv_thread_create(&w->thread, walker_main, w);
}

void es_walker_join(struct es_walker *w) {
    if (w->joined)
        return;
    w->joined = true;
    uv_thread_join(&w->thread);
}

int es_walker_wait(struct es_walker *w, uint64_t deadline) {
    uv_mutex_lock(&w->lock);
    int r = 0;
    while (!w->finished) {
        uint64_t now = uv_hrtime();
        if (now >= deadline ||
            uv_cond_timedwait(&w->done, &w->lock, deadline - now) == UV_ETIMEDOUT) {
            r = w->finished ? 0 : UV_ETIMEDOUT;
            break;
        }
    }
    uv_mutex_unlock(&w->lock);
    return r;
}

bool es_walker_take(struct es_walker *w, struct es_queue *out) {
    uv_mutex_lock(&w->lock);
    bool any = !es_queue_empty(&w->walked);
    es_queue_move(out, &w->walked);
    uv_mutex_unlock(&w->lock);
    return any;
}

uint64_t es_walker_next_flush(struct es_walker *w, uint64_t last_flush, uint64_t interval) {
    uv_mutex_lock(&w->lock);
    uint64_t due = es_pace_next_flush(&w->pace, last_flush, interval);
    uv_mutex_unlock(&w->lock);
    return due;
}
