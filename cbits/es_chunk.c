#include "es_chunk.h"

#include "es_pool.h"

#include <stdlib.h>
#include <string.h>

struct es_chunk *es_chunk_new(const void *data, size_t len) {
    struct es_chunk *c = es_pool_get(len);
    if (c == NULL)
        return NULL;
    c->next = c->prev = NULL;
    c->refs = 1;
    c->flags = 0;
    c->end_offset = 0;
    c->defs = NULL;
    c->ndefs = c->defs_cap = 0;
    c->arrived = 0;
    c->gap_chunks = c->gap_bytes = c->gap_time = 0;
    c->len = len;
    if (data != NULL && len > 0)
        memcpy(c->data, data, len);
    return c;
}

void es_chunk_free(struct es_chunk *c) {
    if (c == NULL)
        return;
    free(c->defs);
    c->defs = NULL;
    es_pool_put(c);
}
