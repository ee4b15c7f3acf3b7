#include "es_header.h"

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

int es_header_parse(const uint8_t *buf, size_t len, struct es_header *out) {
    out->skip = 0;
    out->len = 0;
    out->ntypes = 0;
    for (unsigned i = 0; i < ES_MAX_EVENT_TYPES; i++)
        out->size[i] = ES_SIZE_UNDECLARED;

    size_t pos = 0;
    if (!has_magic(buf, len, 0, "hdrb")) {
        if (!es_header_detect(buf, len))
            return -EINVAL;
        pos = ES_BLOCK_MARKER_LEN;
    }
    size_t start = pos;
    if (!has_magic(buf, len, pos, "hdrb") || !has_magic(buf, len, pos + 4, "hetb"))
        return -EINVAL;
    pos += 8;

    while (has_magic(buf, len, pos, "etb\0")) {
        pos += 4;
        /* u16 type, u16 size, u32 description length */
        if (len - pos < 8)
            return -EINVAL;
        uint16_t type = es_be16(buf + pos);
        uint16_t size = es_be16(buf + pos + 2);
        uint32_t desc_len = es_be32(buf + pos + 4);
        pos += 8;
        if (len - pos < (size_t)desc_len + 4)
            return -EINVAL;
        pos += desc_len;
        uint32_t extra_len = es_be32(buf + pos);
        pos += 4;
        if (len - pos < (size_t)extra_len)
            return -EINVAL;
        pos += extra_len;
        if (!has_magic(buf, len, pos, "ete\0"))
            return -EINVAL;
        pos += 4;
        if (type < ES_MAX_EVENT_TYPES)
            out->size[type] = size;
        out->ntypes++;
    }
    if (!has_magic(buf, len, pos, "hete") || !has_magic(buf, len, pos + 4, "hdre") ||
        !has_magic(buf, len, pos + 8, "datb"))
        return -EINVAL;
    pos += 12;
    /* Every well-formed GHC header declares the block marker; the walker
     * relies on it, so a header without it is rejected. */
    if (out->size[ES_EVENT_BLOCK_MARKER] != ES_BLOCK_MARKER_LEN - 10)
        return -EINVAL;
    out->skip = start;
    out->len = pos - start;
    return 0;
}
