/* The hand-off from RTS threads to the loop thread. writeEventLog copies a
 * chunk, appends it here under a short lock and wakes the loop; it never
 * waits for a client. The loop thread takes everything pending at once
 * (wake-ups coalesce, so one wake-up may cover many chunks). */
#ifndef ES_INBOX_H
#define ES_INBOX_H

#include "es_chunk.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_inbox {
    uv_mutex_t lock;
    struct es_chunk *head, *tail;     /* pending chunks, oldest first, linked by next */
    bool open;                        /* false once the server stops accepting chunks */
    uint64_t chunks_in, bytes_in;     /* accepted from the RTS */
    uint64_t lost_chunks, lost_bytes; /* refused: out of memory, or closed */
};

int es_inbox_init(struct es_inbox *in);
void es_inbox_destroy(struct es_inbox *in);

/* Copy `len` bytes into a new pending chunk and wake the loop through
 * `wake`. Any thread. Returns false when the chunk was lost (out of memory
 * or the inbox is closed); the loss is counted. */
bool es_inbox_push(struct es_inbox *in, const void *buf, size_t len, uv_async_t *wake);

/* Wake the loop through `wake` unless the inbox is closed (the loop may
 * then have closed `wake`). Any thread. */
void es_inbox_wake(struct es_inbox *in, uv_async_t *wake);

/* Bytes accepted from the RTS so far. Any thread. */
uint64_t es_inbox_bytes_in(struct es_inbox *in);

/* Take all pending chunks, oldest first, linked by next. Loop thread. */
struct es_chunk *es_inbox_take(struct es_inbox *in);

/* Refuse further chunks. After it returns no thread touches `wake` through
 * this inbox again, so the loop may close it. */
void es_inbox_close(struct es_inbox *in);

#endif
