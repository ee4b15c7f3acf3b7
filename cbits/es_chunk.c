#include "es_chunk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct es_chunk *es_chunk_new(const void *data, size_t len) {
    struct es_chunk *c = malloc(sizeof *c + len);
    if (c == NULL)
        return NULL;
    c->next = NULL;
    c->refs = 1;
    c->flags = 0;
    c->end_offset = 0;
    c->len = len;
    if (len > 0)
        memcpy(c->data, data, len);
    return c;
}

void es_chunk_free(struct es_chunk *c) {
    free(c);
}

int es_store_init(struct es_store *s, size_t retain_limit) {
    memset(s, 0, sizeof *s);
    s->tail = es_chunk_new(NULL, 0);
    if (s->tail == NULL)
        return -ENOMEM;
    /* The sentinel is both the tail and the retention point. */
    s->retained = es_store_ref(s->tail);
    s->retain_limit = retain_limit;
    return 0;
}

void es_store_destroy(struct es_store *s) {
    if (s->retained)
        es_store_unref(s, s->retained);
    if (s->header)
        es_store_unref(s, s->header);
    if (s->tail)
        es_store_unref(s, s->tail);
    s->retained = s->header = s->tail = NULL;
}

struct es_chunk *es_store_ref(struct es_chunk *c) {
    c->refs++;
    return c;
}

void es_store_unref(struct es_store *s, struct es_chunk *c) {
    /* Iterative, so a long chain behind the last reference cannot overflow
     * the stack. */
    while (c != NULL && --c->refs == 0) {
        struct es_chunk *next = c->next;
        s->bytes_held -= c->len;
        free(c);
        c = next;
    }
}

static void account(struct es_store *s, const struct es_chunk *c) {
    s->bytes_held += c->len;
    if (s->bytes_held > s->peak_bytes)
        s->peak_bytes = s->bytes_held;
}

void es_store_set_header(struct es_store *s, struct es_chunk *c) {
    account(s, c);
    if (s->header)
        es_store_unref(s, s->header);
    s->header = c;
}

void es_store_append(struct es_store *s, struct es_chunk *c) {
    struct es_chunk *old = s->tail;
    c->end_offset = old->end_offset + c->len;
    account(s, c);
    old->next = c; /* the caller's reference moves to old->next */
    s->tail = es_store_ref(c);
    es_store_unref(s, old);

    if (s->retained == NULL)
        return;
    /* Drop the oldest retained chunks while over the limit, but keep the
     * newest chunk even if it alone exceeds it. The retention point is the
     * chunk before the oldest kept one, so the store holds at most the limit
     * plus that one chunk. */
    while (es_store_behind(s, s->retained) > s->retain_limit && s->retained->next != s->tail) {
        struct es_chunk *prev = s->retained;
        struct es_chunk *gone = prev->next;
        s->retain_dropped_chunks++;
        s->retain_dropped_bytes += gone->len;
        s->retained = es_store_ref(gone);
        es_store_unref(s, prev);
    }
}

struct es_chunk *es_store_join(struct es_store *s) {
    if (s->retained != NULL) {
        struct es_chunk *c = s->retained;
        s->retained = NULL;
        return c;
    }
    return es_store_ref(s->tail);
}
