#include "es_inbox.h"

#include <string.h>

int es_inbox_init(struct es_inbox *in) {
    memset(in, 0, sizeof *in);
    in->open = true;
    return uv_mutex_init(&in->lock);
}

void es_inbox_destroy(struct es_inbox *in) {
    struct es_chunk *c = in->head;
    while (c != NULL) {
        struct es_chunk *next = c->next;
        es_chunk_free(c);
        c = next;
    }
    in->head = in->tail = NULL;
    uv_mutex_destroy(&in->lock);
}

bool es_inbox_push(struct es_inbox *in, const void *buf, size_t len, uv_async_t *wake) {
    /* Allocate and copy outside the lock, so concurrent writers only
     * serialise on a pointer append. */
    struct es_chunk *c = es_chunk_new(buf, len);
    uv_mutex_lock(&in->lock);
    if (c == NULL || !in->open) {
        in->lost_chunks++;
        in->lost_bytes += len;
        uv_mutex_unlock(&in->lock);
        es_chunk_free(c);
        return false;
    }
    if (in->tail != NULL)
        in->tail->next = c;
    else
        in->head = c;
    in->tail = c;
    in->chunks_in++;
    in->bytes_in += len;
    /* uv_async_send only sets a flag and writes to an eventfd; it cannot
     * block. Calling it under the lock keeps it ordered with
     * es_inbox_close, after which the loop closes `wake`. */
    uv_async_send(wake);
    uv_mutex_unlock(&in->lock);
    return true;
}

void es_inbox_wake(struct es_inbox *in, uv_async_t *wake) {
    uv_mutex_lock(&in->lock);
    if (in->open)
        uv_async_send(wake);
    uv_mutex_unlock(&in->lock);
}

uint64_t es_inbox_bytes_in(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    uint64_t n = in->bytes_in;
    uv_mutex_unlock(&in->lock);
    return n;
}

struct es_chunk *es_inbox_take(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    struct es_chunk *c = in->head;
    in->head = in->tail = NULL;
    uv_mutex_unlock(&in->lock);
    return c;
}

void es_inbox_close(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    in->open = false;
    uv_mutex_unlock(&in->lock);
}
