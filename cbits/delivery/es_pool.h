/* SPDX-License-Identifier: BSD-3-Clause */
/* The pool of chunk buffers: large buffers freed by the loop thread are
 * kept for the RTS threads' next chunks, and a few are kept ready with
 * their pages faulted in. Its loans let it keep more for a while, when a
 * slow client's chunks were skipped and the RTS is about to refill that
 * backlog. One pool per process, guarded by its own lock: safe on any
 * thread. */
#ifndef ES_POOL_H
#define ES_POOL_H

#include "es_chunk.h"

#include <stddef.h>

/* Freed chunk buffers of at least this size are kept for reuse, at most
 * ES_POOL_MAX of them (more for a while after a slow client skipped
 * chunks, see ES_POOL_LENT_MAX), and the walker keeps ES_POOL_SPARE ready
 * before the RTS needs them (es_pool_reserve): a fresh 2 MiB allocation
 * touches new pages, and those page faults (about 1 ms) cost the RTS
 * thread calling writeEventLog far more than the copy itself. Their sizes
 * are multiples of ES_POOL_CLASS, so that blocks of about the same size
 * share buffers. */
#define ES_POOL_MIN   ((size_t)256 << 10)
#define ES_POOL_CLASS ((size_t)128 << 10)
#define ES_POOL_MAX   4
/* Buffers of chunks skipped for a slow client that the pool may keep on
 * top of ES_POOL_MAX, until the RTS has needed as many again: a skip frees
 * up to half the buffer bound at once, which the RTS would otherwise have
 * to fault in afresh as it refills the backlog. Buffers lent plus bytes
 * held stay within the bound, so this moves memory rather than adding
 * any. */
#define ES_POOL_LENT_MAX 64
/* Buffers of a size the walker keeps ready. One was enough for no call to
 * fault at 400 MB/s from two writers; two did no better and added 4-11 MB
 * to the peak RSS with a stalled client. */
#define ES_POOL_SPARE 1

/* A new chunk holding a copy of `data` (or uninitialised bytes when `data`
 * is NULL), with one reference owned by the caller; NULL when out of
 * memory. Safe on any thread. */
struct es_chunk *es_pool_chunk_new(const void *data, size_t len);
/* Make `c`, a chunk of at least `len` bytes' capacity, a fresh chunk
 * holding a copy of `data` (as es_pool_chunk_new makes one); returns it. */
struct es_chunk *es_pool_chunk_fill(struct es_chunk *c, const void *data, size_t len);
/* Free a chunk (or keep its buffer for reuse). Safe on any thread. */
void es_pool_chunk_free(struct es_chunk *c);
/* Make sure the pool holds ES_POOL_SPARE buffers for chunks of `len` bytes,
 * all of their pages faulted in, unless `len` is below ES_POOL_MIN.
 * For the walker thread: a fresh 2 MiB buffer costs about a millisecond of
 * page faults, which then falls on the walker instead of the RTS thread
 * that calls writeEventLog next. Returns 0 or -ENOMEM. Safe on any thread. */
int es_pool_reserve(size_t len);
/* Let the pool keep `n` more freed buffers than ES_POOL_MAX, until the
 * RTS has needed `n` more buffers (at most ES_POOL_LENT_MAX in all). For
 * chunks about to be freed because a slow client skips them. Safe on any
 * thread. */
void es_pool_lend(unsigned n);
/* Lend `n` buffers (es_pool_lend) for a slow client's skipped chunks, and
 * end every loan once the bytes the library holds fall below `held_below`
 * (es_pool_note_held): the client that lagged has caught up or gone. With
 * `n` 0 only moves the threshold of loans already open. */
void es_pool_lend_until(unsigned n, size_t held_below);
/* The bytes the library holds now; ends the loans below their threshold. */
void es_pool_note_held(size_t held);
/* End every loan: the pool gives what it holds beyond ES_POOL_MAX back to
 * the allocator. For when the client that lagged has caught up or gone, so
 * that a program that then goes quiet does not keep the buffers. Safe on
 * any thread. */
void es_pool_recall(void);
/* How many pooled buffers a chunk of `len` bytes could take (tests). */
size_t es_pool_fitting(size_t len);

#endif
