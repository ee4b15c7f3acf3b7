/* The hand-off from RTS threads to the walker thread. writeEventLog copies a
 * chunk, appends it here under a short lock and signals the walker; it
 * never waits for a client or for the walker. The walker takes everything
 * pending at once. */
#ifndef ES_INBOX_H
#define ES_INBOX_H

#include "es_chunk.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_inbox {
    uv_mutex_t lock;
    uv_cond_t ready;                  /* signalled when chunks arrive or the inbox closes */
    struct es_chunk *head, *tail;     /* pending chunks, oldest first, linked by next */
    bool open;                        /* false once the server stops accepting chunks */
    uint64_t chunks_in, bytes_in;     /* accepted from the RTS */
    uint64_t lost_chunks, lost_bytes; /* refused: out of memory, or closed */
};

int es_inbox_init(struct es_inbox *in);
void es_inbox_destroy(struct es_inbox *in);

/* Copy `len` bytes into a new pending chunk. Any thread. Returns false when
 * the chunk was lost (out of memory or the inbox is closed); the loss is
 * counted. */
bool es_inbox_push(struct es_inbox *in, const void *buf, size_t len);

/* Bytes accepted from the RTS so far. Any thread. */
uint64_t es_inbox_bytes_in(struct es_inbox *in);

/* Whether no chunk is waiting to be taken. Any thread. */
bool es_inbox_empty(struct es_inbox *in);

/* Wait for pending chunks and take them all, oldest first, linked by next.
 * Returns NULL once the inbox is closed and empty. One consumer thread. */
struct es_chunk *es_inbox_wait(struct es_inbox *in);

/* Refuse further chunks and wake the consumer, which still gets the chunks
 * pushed before. */
void es_inbox_close(struct es_inbox *in);

#endif
