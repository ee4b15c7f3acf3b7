#include "es_events.h"

#include <errno.h>
#include <string.h>

void es_event_iter_init(struct es_event_iter *it, const struct es_header *hdr, const uint8_t *buf,
                        size_t len) {
    it->hdr = hdr;
    it->buf = buf;
    it->len = len;
    it->pos = 0;
}

int es_event_next(struct es_event_iter *it, struct es_event *ev) {
    size_t left = it->len - it->pos;
    if (left == 0)
        return ES_WALK_DONE;
    if (left < 2)
        return -EINVAL;
    const uint8_t *p = it->buf + it->pos;
    uint16_t type = es_be16(p);
    if (type == ES_EVENT_END_MARKER) {
        it->pos += 2;
        return ES_WALK_END;
    }
    size_t head, size;
    if (es_event_extent(it->hdr, p, left, &head, &size) != 0)
        return -EINVAL;
    ev->type = type;
    ev->time = es_be64(p + 2);
    ev->offset = it->pos;
    ev->len = head + size;
    ev->payload = p + head;
    ev->payload_len = size;
    it->pos += ev->len;
    return ES_WALK_EVENT;
}

int es_chunk_inspect(const struct es_header *hdr, const uint8_t *buf, size_t len,
                     struct es_chunk_info *info, const bool *want, es_event_fn fn, void *ctx) {
    memset(info, 0, sizeof *info);
    size_t pos = 0;
    while (pos < len) {
        size_t left = len - pos;
        if (left < 2)
            return -EINVAL;
        const uint8_t *p = buf + pos;
        uint16_t type = es_be16(p);
        if (type == ES_EVENT_END_MARKER) {
            info->has_end = true;
            /* Nothing may follow the end-of-data marker. */
            return left == 2 ? 0 : -EINVAL;
        }
        size_t head, size;
        if (es_event_extent(hdr, p, left, &head, &size) != 0)
            return -EINVAL;
        if (info->events == 0 && type == ES_EVENT_BLOCK_MARKER) {
            info->is_block = true;
            info->block_len = es_be32(p + 10);
            info->cap = es_be16(p + 22);
        }
        if (want != NULL && want[type]) {
            struct es_event ev = {.type = type,
                                  .time = es_be64(p + 2),
                                  .offset = pos,
                                  .len = head + size,
                                  .payload = p + head,
                                  .payload_len = size};
            fn(&ev, ctx);
        }
        info->events++;
        pos += head + size;
    }
    return 0;
}
