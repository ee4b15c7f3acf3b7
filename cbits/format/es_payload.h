/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading an event's payload (struct es_event, es_events.h): the one
 * reader for every part that decodes what GHC put in an event, the
 * command's model (client/model/), `table` (client/tables/rows.c), the
 * connection's notes (client/source/) and what else looks inside one.
 *
 * GHC writes a payload as fixed-width big-endian integers and strings
 * (rts/eventlog/EventLog.c): a string is either NUL-terminated (cost
 * centres, census labels, IPE fields, program arguments) or runs to the
 * end of the payload without a NUL (RTS_IDENTIFIER, THREAD_LABEL, messages
 * and markers). The reader checks every field against what is left: a
 * payload cut short or garbled is never read past its end. Once a read
 * wants more than is left the reader is `bad`: that read and every later
 * one gives 0 or an empty string, and the caller asks es_payload_ok once,
 * after its last field, whether they were all there.
 *
 * The fixed-width reads are inline: the model's parse runs them for every
 * event it reads (BENCHMARKS.md, section 11), and each call names its
 * width, so a field costs a compare and a byte-swapped load.
 *
 * Pure functions on a caller's struct; any thread. */
#ifndef ES_PAYLOAD_H
#define ES_PAYLOAD_H

#include "es_events.h"
#include "es_utf8.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct es_payload {
    const uint8_t *p; /* the next field */
    size_t left;      /* bytes from `p` to the payload's end; 0 once bad */
    bool bad;         /* a read wanted more than was left */
};
/* Once bad, nothing is left: so a read checks the length alone, and every
 * read after a bad one is bad too. */

/* A reader of the `len` bytes at `p` (a valid pointer, even when `len` is
 * 0: an event's payload always is). */
static inline struct es_payload es_payload_init(const uint8_t *p, size_t len) {
    return (struct es_payload){p, len, false};
}

/* The payload of event `ev`, not yet read. */
static inline struct es_payload es_payload_of(const struct es_event *ev) {
    return es_payload_init(ev->payload, ev->payload_len);
}

/* Whether every read so far found its field whole. */
static inline bool es_payload_ok(const struct es_payload *r) {
    assert(!r->bad || r->left == 0); /* once bad, nothing is left */
    return !r->bad;
}

/* The bytes not yet read (0 once bad). */
static inline size_t es_payload_left(const struct es_payload *r) {
    return r->left;
}

/* A read of more than is left: the reader is bad from now on. */
static inline void es_payload_fail(struct es_payload *r) {
    r->bad = true;
    r->left = 0;
}

/* The next `n` bytes (NULL, and bad, when fewer are left), consumed: for
 * fields read in place, such as several integers after one check. */
static inline const uint8_t *es_payload_bytes(struct es_payload *r, size_t n) {
    if (r->left < n) {
        es_payload_fail(r);
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    r->left -= n;
    return at;
}

/* A big-endian unsigned field of `n` bytes, 1 to 8 (0 and bad when fewer
 * are left). Called with a constant `n`, the switch folds away to a
 * compare and a byte-swapped load (a loop over the bytes was a tenth of the
 * model's parse, BENCHMARKS.md). */
static inline uint64_t es_payload_uint(struct es_payload *r, int n) {
    assert(n >= 1 && n <= 8);
    if (r->left < (size_t)n) {
        es_payload_fail(r);
        return 0;
    }
    uint64_t v;
    switch (n) {
    case 8:
        v = es_be64(r->p);
        break;
    case 4:
        v = es_be32(r->p);
        break;
    case 2:
        v = es_be16(r->p);
        break;
    case 1:
        v = r->p[0];
        break;
    default:
        v = 0;
        for (int i = 0; i < n; i++)
            v = v << 8 | r->p[i];
        break;
    }
    r->p += n;
    r->left -= (size_t)n;
    return v;
}

static inline uint8_t es_payload_u8(struct es_payload *r) {
    return (uint8_t)es_payload_uint(r, 1);
}
static inline uint16_t es_payload_u16(struct es_payload *r) {
    return (uint16_t)es_payload_uint(r, 2);
}
static inline uint32_t es_payload_u32(struct es_payload *r) {
    return (uint32_t)es_payload_uint(r, 4);
}
static inline uint64_t es_payload_u64(struct es_payload *r) {
    return es_payload_uint(r, 8);
}

/* Skip a field of `n` bytes the caller does not need (a capset, a profile
 * id), checked like any other. */
static inline void es_payload_skip(struct es_payload *r, size_t n) {
    (void)es_payload_bytes(r, n);
}

/* The rest of the payload without consuming it (`*len` bytes; none once
 * bad): to compare a string in place before copying it. */
static inline const uint8_t *es_payload_peek(const struct es_payload *r, size_t *len) {
    *len = r->left;
    return r->p;
}

/* The rest of the payload, consumed: a string GHC writes without a NUL as
 * the last field (a label, a message, a marker). `*len` bytes, none once
 * bad. */
static inline const uint8_t *es_payload_rest(struct es_payload *r, size_t *len) {
    const uint8_t *at = es_payload_peek(r, len);
    r->p += *len;
    r->left -= *len;
    return at;
}

/* A NUL-terminated string, consumed with its NUL: `*len` bytes before the
 * NUL, or the rest of the payload when it has none (GHC ends some strings
 * with the payload instead). Empty once bad; an empty payload gives an
 * empty string, not a bad read, since GHC writes empty strings. */
static inline const uint8_t *es_payload_str(struct es_payload *r, size_t *len) {
    const uint8_t *at = r->p, *nul = memchr(at, 0, r->left);
    *len = nul ? (size_t)(nul - at) : r->left;
    size_t used = nul ? *len + 1 : *len;
    r->p += used;
    r->left -= used;
    return at;
}

/* Where the last path component of the `n` bytes at `p` begins (argv[0]
 * to the program's name): after the last '/', which is never part of a
 * multi-byte UTF-8 character, so the raw bytes are searched. */
static inline const uint8_t *es_payload_basename(const uint8_t *p, size_t n) {
    const uint8_t *base = p;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '/')
            base = p + i + 1;
    return base;
}

/* es_payload_str copied into `out` (`size` >= 1 bytes, NUL-terminated) as
 * valid UTF-8, cut between two characters to fit (es_utf8.h: the one rule
 * for every text the command keeps). Returns the length written. */
static inline size_t es_payload_text(struct es_payload *r, char *out, size_t size) {
    size_t len;
    const uint8_t *s = es_payload_str(r, &len);
    return es_utf8_copy(out, size, s, len);
}

/* A block marker's payload (the marker is an event: es_events.h): the
 * block's size in bytes, its own marker included, its end time, and its
 * capability (ES_GLOBAL_CAP: the RTS's global buffer). */
struct es_block_fields {
    uint32_t size;
    uint64_t end_time;
    uint16_t cap;
};

/* The fields of block marker `ev`. Returns false, with `*b` zero but its
 * cap ES_GLOBAL_CAP, when the payload is too short to hold them. Inline:
 * the model reads every block's. */
static inline bool es_payload_block(const struct es_event *ev, struct es_block_fields *b) {
    struct es_payload r = es_payload_of(ev);
    b->size = es_payload_u32(&r);
    b->end_time = es_payload_u64(&r);
    b->cap = es_payload_u16(&r);
    if (es_payload_ok(&r))
        return true;
    *b = (struct es_block_fields){.cap = ES_GLOBAL_CAP};
    return false;
}

#endif
