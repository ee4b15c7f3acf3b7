/* SPDX-License-Identifier: BSD-3-Clause */
/* Parser for the eventlog header, the first chunk the RTS writes after
 * event logging starts: "hdrb" "hetb" (event type descriptions)* "hete"
 * "hdre" "datb". All integers are big-endian. The header tells the size of
 * every event type's payload, which the event walker needs. */
#ifndef ES_HEADER_H
#define ES_HEADER_H

#include "es_event_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Event type ids above this are not used by any GHC; a header that declares
 * one is still accepted, but events of that type cannot be walked. */
#define ES_MAX_EVENT_TYPES 1024
/* Payload size of a variable-size event type (a u16 length follows the time). */
#define ES_SIZE_VARIABLE 0xffffu
/* Payload size of a type the header did not declare. */
#define ES_SIZE_UNDECLARED 0xfffeu

/* A block marker is: u16 type, u64 time, u32 block size, u64 end time, u16 cap. */
#define ES_BLOCK_MARKER_LEN 24

struct es_header {
    /* Bytes before "hdrb" that must be discarded. GHC 9.0 puts a stale
     * 24-byte block marker there when event logging is restarted. */
    size_t skip;
    /* Length of the header proper, from "hdrb" to the end of "datb". */
    size_t len;
    /* Number of event types the header declares. */
    unsigned ntypes;
    /* Payload size of every event type, ES_SIZE_VARIABLE or ES_SIZE_UNDECLARED. */
    uint16_t size[ES_MAX_EVENT_TYPES];
};

/* Whether `hdr` is GHC 9.0's, whose RTS cannot flush: its events come
 * only in full 2 MiB buffers and at exit. It declares no IPE events,
 * which GHC 9.2 added. */
static inline bool es_header_no_flush(const struct es_header *hdr) {
    return hdr->size[ES_EVENT_IPE] == ES_SIZE_UNDECLARED;
}

/* Whether `buf` starts an eventlog header (possibly behind a stale block
 * marker). Cheap: looks at the magic bytes only. */
int es_header_detect(const uint8_t *buf, size_t len);

/* Parse a complete header by its length fields. Returns 0, or
 * -EINVAL when the bytes are not a well-formed header (out->len is then 0). */
int es_header_parse(const uint8_t *buf, size_t len, struct es_header *out);

/* The same, telling a header cut short (-EAGAIN: the bytes so far are the
 * start of a well-formed header) from bytes that cannot be one (-EINVAL).
 * For readers that receive the header in pieces. */
int es_header_scan(const uint8_t *buf, size_t len, struct es_header *out);

/* Big-endian readers shared by the parsers. */
static inline uint16_t es_be16(const uint8_t *p) {
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}
static inline uint32_t es_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t es_be64(const uint8_t *p) {
    return (uint64_t)es_be32(p) << 32 | es_be32(p + 4);
}

/* A block marker's fields, by their offset: its event type (2 bytes),
 * start time (8), size (4), end time (8) and capability (2). */
#define ES_BLOCK_TIME_AT     2
#define ES_BLOCK_SIZE_AT     10
#define ES_BLOCK_END_TIME_AT 14
#define ES_BLOCK_CAP_AT      22

/* Whether the `len` bytes at `p` begin with a block marker. */
static inline bool es_is_block(const uint8_t *p, size_t len) {
    return len >= ES_BLOCK_MARKER_LEN && es_be16(p) == ES_EVENT_BLOCK_MARKER;
}

/* The start and end time of the block whose marker is at `p`. */
static inline uint64_t es_block_time(const uint8_t *p) {
    return es_be64(p + ES_BLOCK_TIME_AT);
}
static inline uint64_t es_block_end_time(const uint8_t *p) {
    return es_be64(p + ES_BLOCK_END_TIME_AT);
}

/* And the writer, for the blocks the library synthesises: the low `n`
 * bytes of `v`, big-endian. */
static inline void es_put_be(uint8_t *p, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* A block marker at `p` (ES_BLOCK_MARKER_LEN bytes): a block of `size`
 * bytes, marker included, of capability `cap` (0xffff: the global buffer),
 * spanning `time` to `end_time`. */
static inline void es_put_block_marker(uint8_t *p, uint64_t time, uint32_t size, uint64_t end_time,
                                       uint16_t cap) {
    es_put_be(p, ES_EVENT_BLOCK_MARKER, 2);
    es_put_be(p + ES_BLOCK_TIME_AT, time, 8);
    es_put_be(p + ES_BLOCK_SIZE_AT, size, 4);
    es_put_be(p + ES_BLOCK_END_TIME_AT, end_time, 8);
    es_put_be(p + ES_BLOCK_CAP_AT, cap, 2);
}

#endif
