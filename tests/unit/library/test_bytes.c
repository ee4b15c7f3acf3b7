/* SPDX-License-Identifier: BSD-3-Clause */
/* The growable run of bytes (cbits/base/es_bytes.h) that the stream
 * reader, the flight recorder and a recording keep their unfinished bytes
 * in: appends in pieces of every size keep every byte in order, taking
 * from the front keeps the rest, the room grows from the owner's first
 * size by doubling, a failed growth leaves the bytes as they were, and
 * freeing empties it. No GHC; run plain and under ASan/UBSan. */
#include "base/es_bytes.h"
#include "../unit.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* Bytes 0, 1, 2, ... of a known stream, from `from` on. */
static void fill(uint8_t *p, size_t n, size_t from) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((from + i) * 7 + 3);
}

static bool holds(const struct es_bytes *b, size_t from) {
    uint8_t want[1 << 14];
    if (b->len > sizeof want)
        return false;
    fill(want, b->len, from);
    return b->len == 0 || memcmp(b->data, want, b->len) == 0;
}

UNIT_CASE(bytes_append_and_consume) {
    struct es_bytes b = ES_BYTES_INIT;
    uint8_t piece[997];
    size_t appended = 0, consumed = 0;
    bool ok_all = true;
    /* Pieces of every size from 0 to 996 bytes, taking a third from the
     * front after each: the bytes held are always the stream's next ones. */
    for (size_t n = 0; n < sizeof piece && ok_all; n += 13) {
        fill(piece, n, appended);
        ok_all &= es_bytes_append(&b, piece, n, 64) == 0;
        appended += n;
        size_t k = b.len / 3;
        es_bytes_consume(&b, k);
        consumed += k;
        ok_all &= b.len == appended - consumed && holds(&b, consumed) && b.len <= b.cap;
    }
    ok(ok_all, "every byte appended is held in order until it is taken from the front");
    size_t cap = b.cap;
    ok((cap & (cap - 1)) == 0 && cap >= 64, "the room is the first size doubled (%zu)", cap);
    es_bytes_truncate(&b, 5);
    ok(b.len == 5 && holds(&b, consumed) && b.cap == cap, "truncating keeps the first bytes");
    es_bytes_consume(&b, 5);
    ok(b.len == 0 && b.cap == cap, "consuming all keeps the room for the next bytes");
    ok(es_bytes_append(&b, piece, 0, 64) == 0 && b.len == 0, "appending nothing is nothing");
    es_bytes_free(&b);
    ok(b.data == NULL && b.len == 0 && b.cap == 0, "freed, it is empty");
}

UNIT_CASE(bytes_growth_that_cannot_be) {
    struct es_bytes b = ES_BYTES_INIT;
    uint8_t piece[100];
    fill(piece, sizeof piece, 0);
    ok(es_bytes_append(&b, piece, sizeof piece, 16) == 0 && b.cap == 128,
       "100 bytes into a first room of 16: 128");
    /* A length that would overflow the count: refused, nothing changed
     * (the data pointer is never read for it). */
    ok(es_bytes_append(&b, piece, SIZE_MAX - 50, 16) == -ENOMEM && b.len == 100 && holds(&b, 0) &&
           b.cap == 128,
       "more bytes than a size_t counts: -ENOMEM, the bytes as they were");
    es_bytes_free(&b);
}
