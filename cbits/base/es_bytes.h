/* SPDX-License-Identifier: BSD-3-Clause */
/* A growable run of bytes: what a reader keeps of a stream until it can
 * use it (the stream reader's partial event, the flight recorder's bytes
 * that no whole block holds yet, a recording's bytes not yet written).
 * Appending doubles the room when it runs out, so n appends of k bytes
 * copy O(n k); taking bytes from the front moves the rest down.
 *
 * The owner's thread only: no locking. */
#ifndef ES_BYTES_H
#define ES_BYTES_H

#include <stddef.h>
#include <stdint.h>

struct es_bytes {
    uint8_t *data; /* NULL until the first append */
    size_t len;    /* bytes held, from data[0] */
    size_t cap;    /* room at data */
};

/* clang-format 14 and 19+ lay a braced macro body out differently. */
/* clang-format off */
#define ES_BYTES_INIT {NULL, 0, 0}
/* clang-format on */

/* Append n bytes (nothing when n is 0), growing the room to `first` bytes
 * at the least, then doubling it. 0, or -ENOMEM with the bytes as they
 * were. */
int es_bytes_append(struct es_bytes *b, const void *data, size_t n, size_t first);

/* Let go of the first k bytes (k <= len); the rest move to data[0]. */
void es_bytes_consume(struct es_bytes *b, size_t k);

/* Keep only the first n bytes (n <= len). */
void es_bytes_truncate(struct es_bytes *b, size_t n);

/* Free the room; the bytes are empty again. */
void es_bytes_free(struct es_bytes *b);

#endif
