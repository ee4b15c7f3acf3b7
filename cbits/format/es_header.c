/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_header.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

static int has_magic(const uint8_t *buf, size_t len, size_t at, const char *magic) {
    return at + 4 <= len && memcmp(buf + at, magic, 4) == 0;
}

int es_header_detect(const uint8_t *buf, size_t len) {
    if (has_magic(buf, len, 0, "hdrb"))
        return 1;
    /* GHC 9.0's restart leaves a block marker in front of the header. */
    return len >= 2 && es_be16(buf) == ES_EVENT_BLOCK_MARKER &&
           has_magic(buf, len, ES_BLOCK_MARKER_LEN, "hdrb");
}

/* 1 when the four bytes at `at` are `magic`, 0 when they differ, -1 when
 * the buffer ends before them. */
static int magic_at(const uint8_t *buf, size_t len, size_t at, const char *magic) {
    if (at + 4 > len)
        return -1;
    return memcmp(buf + at, magic, 4) == 0;
}

/* Each check below fails with -EAGAIN when the bytes end too early and
 * -EINVAL when they are wrong, so that a reader of a socket can tell "read
 * more" from "this is not an eventlog". */
#define EXPECT(magic_result)                                                                       \
    do {                                                                                           \
        int m_ = (magic_result);                                                                   \
        if (m_ < 0)                                                                                \
            return -EAGAIN;                                                                        \
        if (m_ == 0)                                                                               \
            return -EINVAL;                                                                        \
    } while (0)

int es_header_scan(const uint8_t *buf, size_t len, struct es_header *out) {
    out->skip = 0;
    out->len = 0;
    out->ntypes = 0;
    for (unsigned i = 0; i < ES_MAX_EVENT_TYPES; i++)
        out->size[i] = ES_SIZE_UNDECLARED;

    size_t pos = 0;
    int m = magic_at(buf, len, 0, "hdrb");
    if (m < 0)
        return -EAGAIN;
    if (m == 0) {
        /* GHC 9.0's restart leaves a block marker in front of the header. */
        if (es_be16(buf) != ES_EVENT_BLOCK_MARKER)
            return -EINVAL;
        pos = ES_BLOCK_MARKER_LEN;
    }
    size_t start = pos;
    EXPECT(magic_at(buf, len, pos, "hdrb"));
    EXPECT(magic_at(buf, len, pos + 4, "hetb"));
    pos += 8;

    for (;;) {
        m = magic_at(buf, len, pos, "etb\0");
        if (m < 0)
            return -EAGAIN;
        if (m == 0)
            break;
        pos += 4;
        /* u16 type, u16 size, u32 description length */
        if (len - pos < 8)
            return -EAGAIN;
        uint16_t type = es_be16(buf + pos);
        uint16_t size = es_be16(buf + pos + 2);
        uint32_t desc_len = es_be32(buf + pos + 4);
        pos += 8;
        if (len - pos < (size_t)desc_len + 4)
            return -EAGAIN;
        pos += desc_len;
        uint32_t extra_len = es_be32(buf + pos);
        pos += 4;
        if (len - pos < (size_t)extra_len)
            return -EAGAIN;
        pos += extra_len;
        EXPECT(magic_at(buf, len, pos, "ete\0"));
        pos += 4;
        if (type < ES_MAX_EVENT_TYPES)
            out->size[type] = size;
        out->ntypes++;
    }
    EXPECT(magic_at(buf, len, pos, "hete"));
    EXPECT(magic_at(buf, len, pos + 4, "hdre"));
    EXPECT(magic_at(buf, len, pos + 8, "datb"));
    pos += 12;
    /* Every well-formed GHC header declares the block marker; the walker
     * relies on it, so a header without it is rejected. */
    if (out->size[ES_EVENT_BLOCK_MARKER] != ES_BLOCK_MARKER_LEN - 10)
        return -EINVAL;
    out->skip = start;
    out->len = pos - start;
    /* The header lies within the bytes it was read from ("datb" was). */
    assert(pos <= len && start <= pos);
    return 0;
}

int es_header_parse(const uint8_t *buf, size_t len, struct es_header *out) {
    int r = es_header_scan(buf, len, out);
    if (r != 0) {
        out->skip = out->len = 0;
        return -EINVAL;
    }
    return 0;
}
