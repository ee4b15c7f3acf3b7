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

/* For es_chunk_inspect without a `want` table: no type is wanted. */
static const bool want_none[ES_MAX_EVENT_TYPES];

/* The walker thread runs this over every byte the RTS writes, and it was
 * two thirds of the library's instructions in the bench workload (make
 * bench, section 1c): the common event, of a declared fixed size and not
 * wanted, costs one table lookup and three compares. The block marker is
 * looked at once, before the loop, and the end marker (0xffff, beyond any
 * declared type) only when a type is out of range. */
int es_chunk_inspect(const struct es_header *hdr, const uint8_t *buf, size_t len,
                     struct es_chunk_info *info, const bool *want, es_event_fn fn, void *ctx) {
    memset(info, 0, sizeof *info);
    if (want == NULL)
        want = want_none;
    const uint16_t *sizes = hdr->size;
    /* The marker's payload: block size (4 bytes), end time (8), capability (2). */
    if (len >= 24 && es_be16(buf) == ES_EVENT_BLOCK_MARKER &&
        sizes[ES_EVENT_BLOCK_MARKER] != ES_SIZE_VARIABLE && sizes[ES_EVENT_BLOCK_MARKER] >= 14) {
        info->is_block = true;
        info->block_len = es_be32(buf + 10);
        info->cap = es_be16(buf + 22);
    }
    size_t pos = 0, events = 0;
    while (pos < len) {
        const uint8_t *p = buf + pos;
        size_t left = len - pos;
        if (left < 10) {
            /* Only the end marker is this short; nothing may follow it. */
            if (left == 2 && es_be16(p) == ES_EVENT_END_MARKER)
                break;
            return -EINVAL;
        }
        uint16_t type = es_be16(p);
        if (type >= ES_MAX_EVENT_TYPES) {
            if (type == ES_EVENT_END_MARKER && left == 2)
                break;
            return -EINVAL;
        }
        size_t head = 10, size = sizes[type];
        if (size >= ES_SIZE_UNDECLARED) {
            if (size == ES_SIZE_UNDECLARED || left < 12)
                return -EINVAL;
            size = es_be16(p + 10);
            head = 12;
        }
        size_t ev_len = head + size;
        if (ev_len > left)
            return -EINVAL;
        if (want[type]) {
            struct es_event ev = {.type = type,
                                  .time = es_be64(p + 2),
                                  .offset = pos,
                                  .len = ev_len,
                                  .payload = p + head,
                                  .payload_len = size};
            fn(&ev, ctx);
        }
        events++;
        pos += ev_len;
    }
    info->events = events;
    if (pos < len) /* stopped at the end marker */
        info->has_end = true;
    return 0;
}
