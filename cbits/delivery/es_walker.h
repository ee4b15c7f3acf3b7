/* SPDX-License-Identifier: BSD-3-Clause */
/* The walker thread, between the RTS threads and the loop thread.
 *
 * Every chunk the RTS writes is walked once, event by event, before the loop
 * thread stores and sends it: to learn whether it ends the stream (such a
 * chunk is never skipped for a slow client) and where its definition events
 * are (the loop keeps those for late joiners, es_defs.h). The walk reads
 * every byte. On the loop thread it delayed every write to clients; on a
 * thread of its own it runs while the loop writes: one client went from 0.64
 * to 0.90 of raw Unix-socket throughput, side by side on two free cores
 * (BENCHMARKS.md, section 2).
 *
 * Between chunks, when none waits, the walker also faults in buffers for
 * the RTS's next chunks (es_pool_reserve), so that writeEventLog only
 * copies: with a stalled client at 400 MB/s, 33 of 256 calls took page
 * faults (p99 1.4-1.6 ms) before, one after (p99 0.3-0.4 ms).
 *
 * It also notes when each capability's block arrived, which paces the RTS
 * flushes on GHC >= 9.2 (es_pace.h).
 *
 * Chunks leave in the order they arrived. The walker is where the header is
 * parsed (chunks are walked with the sizes it declares): it marks header
 * chunks ES_CHUNK_HEADER and hands the loop thread a copy of the parse with
 * the chunk (es_chunk.header, kept by es_fanout_ingest), which keeps the two
 * threads' state apart when a later header replaces it. */
#ifndef ES_WALKER_H
#define ES_WALKER_H

#include "es_chunk.h"
#include "format/es_events.h"
#include "format/es_header.h"
#include "es_inbox.h"
#include "es_pace.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <uv.h>

typedef void (*es_walker_wake_fn)(void *ctx);

struct es_walker {
    struct es_inbox *in;    /* where chunks come from */
    const bool *want;       /* definition event types, ES_MAX_EVENT_TYPES flags */
    es_walker_wake_fn wake; /* tells the loop thread that chunks are ready */
    void *wake_ctx;
    uv_thread_t thread;
    struct es_header header; /* the newest parsed; walker thread only */
    /* For header and want, made with the first header (128 KiB); walker
     * thread only. NULL: none, or no memory for one. */
    struct es_walk_plan *plan;
    bool have_header; /* a header parsed and a plan made: chunks can be walked */
    bool bad_chunk_logged;
    uv_mutex_t lock;        /* guards walked and pace */
    struct es_queue walked; /* walked, not yet taken; oldest first (es_chunk.link) */
    struct es_pace pace;    /* when each capability last handed a block over */
    bool finished;          /* the thread has handed everything over (lock) */
    /* uv_hrtime less program time, as the blocks' hand-over times and end
     * times tell it (the smallest difference seen; 0: none yet). */
    atomic_uint_fast64_t clock_offset;
    bool joined;
    uv_cond_t done; /* signalled when it has */
};

int es_walker_init(struct es_walker *w, struct es_inbox *in, const bool *want,
                   es_walker_wake_fn wake, void *ctx);
/* Free chunks that were walked but never taken. */
void es_walker_destroy(struct es_walker *w);

/* Start the thread. It runs until the inbox is closed and drained. */
int es_walker_start(struct es_walker *w);

/* The thread's id, once started. */
static inline uv_thread_t es_walker_thread(const struct es_walker *w) {
    return w->thread;
}

/* Wait for the thread to end (once; later calls return at once); call
 * after es_inbox_close. Every chunk pushed before the close has then been
 * handed over (and `wake` called). */
void es_walker_join(struct es_walker *w);

/* Wait until the thread has handed everything over, but not past
 * `deadline` (uv_hrtime). Returns 0, or UV_ETIMEDOUT; then the thread is
 * still running, and es_walker_join waits for it. */
int es_walker_wait(struct es_walker *w, uint64_t deadline);

/* The program's time now (ns since its RTS started, as its events are
 * stamped), from the blocks walked so far: at most a block's hand-over
 * late; 0 before any block. Any thread. */
uint64_t es_walker_program_time(struct es_walker *w);

/* Move the walked chunks to the end of `out`, oldest first; false when
 * there were none. Loop thread. */
bool es_walker_take(struct es_walker *w, struct es_queue *out);

/* When the RTS's buffers next need a flush, by the blocks walked so far
 * (es_pace_next_flush; times from uv_hrtime). Any thread. */
uint64_t es_walker_next_flush(struct es_walker *w, uint64_t last_flush, uint64_t interval);

#endif
