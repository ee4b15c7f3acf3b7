#include "es_inbox.h"

#include <string.h>

int es_inbox_init(struct es_inbox *in) {
    memset(in, 0, sizeof *in);
    in->open = true;
    int r = uv_mutex_init(&in->lock);
    if (r == 0 && (r = uv_cond_init(&in->ready)) != 0)
        uv_mutex_destroy(&in->lock);
    return r;
}

void es_inbox_destroy(struct es_inbox *in) {
    struct es_chunk *c = in->head;
    while (c != NULL) {
        struct es_chunk *next = c->next;
        es_chunk_free(c);
        c = next;
    }
    in->head = in->tail = NULL;
    uv_cond_destroy(&in->ready);
    uv_mutex_destroy(&in->lock);
}

bool es_inbox_push(struct es_inbox *in, const void *buf, size_t len) {
    /* Allocate and copy outside the lock, so concurrent writers only
     * serialise on a pointer append. The time is taken before the copy:
     * whatever the RTS posts to the buffer it is emptying is newer. */
    uint64_t now = uv_hrtime();
    struct es_chunk *c = es_chunk_new(buf, len);
    if (c != NULL)
        c->arrived = now;
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
    /* Under the lock: once it is released, the inbox may be closed and
     * destroyed. Without a waiting consumer this costs no system call. */
    uv_cond_signal(&in->ready);
    uv_mutex_unlock(&in->lock);
    return true;
}

uint64_t es_inbox_bytes_in(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    uint64_t n = in->bytes_in;
    uv_mutex_unlock(&in->lock);
    return n;
}

bool es_inbox_empty(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    bool empty = in->head == NULL;
    uv_mutex_unlock(&in->lock);
    return empty;
}

struct es_chunk *es_inbox_wait(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    while (in->head == NULL && in->open)
        uv_cond_wait(&in->ready, &in->lock);
    struct es_chunk *c = in->head;
    in->head = in->tail = NULL;
    uv_mutex_unlock(&in->lock);
    return c;
}

void es_inbox_close(struct es_inbox *in) {
    uv_mutex_lock(&in->lock);
    in->open = false;
    uv_cond_signal(&in->ready);
    uv_mutex_unlock(&in->lock);
}
