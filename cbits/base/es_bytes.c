/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_bytes.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int es_bytes_append(struct es_bytes *b, const void *data, size_t n, size_t first) {
    assert(b->len <= b->cap && (b->cap == 0) == (b->data == NULL) && first > 0);
    if (n == 0)
        return 0;
    if (n > SIZE_MAX - b->len)
        return -ENOMEM;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : first;
        while (cap < b->len + n)
            cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
        uint8_t *p = realloc(b->data, cap);
        if (p == NULL)
            return -ENOMEM;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return 0;
}

void es_bytes_consume(struct es_bytes *b, size_t k) {
    assert(k <= b->len);
    if (k == 0)
        return;
    memmove(b->data, b->data + k, b->len - k);
    b->len -= k;
}

void es_bytes_truncate(struct es_bytes *b, size_t n) {
    assert(n <= b->len);
    b->len = n;
}

void es_bytes_free(struct es_bytes *b) {
    free(b->data);
    *b = (struct es_bytes)ES_BYTES_INIT;
}
