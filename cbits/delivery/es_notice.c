/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_notice.h"

#include "format/es_notice_text.h"

#include "es_pool.h"

#include "format/es_events.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* A block holding the one message `msg` (`n` bytes), and `more` bytes
 * after it for the caller to fill. */
static struct es_chunk *notice_and(const struct es_header *hdr, uint64_t time, const char *msg,
                                   int n, size_t more) {
    if (hdr->size[ES_EVENT_USER_MSG] != ES_SIZE_VARIABLE || n <= 0)
        return NULL;
    assert(n <= 65535); /* a USER_MSG's length field has two bytes */
    size_t len = ES_BLOCK_MARKER_LEN + 12 + (size_t)n;
    struct es_chunk *b = es_pool_chunk_new(NULL, len + more);
    if (b == NULL)
        return NULL;
    b->flags = ES_CHUNK_NOTICE;
    es_put_block_marker(b->data, time, (uint32_t)len, time, ES_GLOBAL_CAP);
    uint8_t *p = b->data + ES_BLOCK_MARKER_LEN;
    es_put_be(p, ES_EVENT_USER_MSG, 2);
    es_put_be(p + 2, time, 8);
    es_put_be(p + 10, (uint64_t)n, 2);
    memcpy(p + 12, msg, (size_t)n);
    return b;
}

static struct es_chunk *notice(const struct es_header *hdr, uint64_t time, const char *msg, int n) {
    return notice_and(hdr, time, msg, n, 0);
}

/* snprintf's count `n` for a buffer of `size` bytes: what it holds. */
static int fit(int n, size_t size) {
    return n < (int)size ? n : (int)size - 1;
}

struct es_chunk *es_notice_drop(const struct es_header *hdr, uint64_t chunks, uint64_t bytes,
                                uint64_t time) {
    char msg[128];
    return notice(hdr, time, msg,
                  fit(es_notice_text_drop(msg, sizeof msg, chunks, bytes), sizeof msg));
}

struct es_chunk *es_notice_message(const struct es_header *hdr, uint64_t time, const char *text) {
    size_t n = strlen(text);
    return notice(hdr, time, text, n > 65535 ? 65535 : (int)n);
}

struct es_chunk *es_notice_append(const struct es_header *hdr, const struct es_chunk *block,
                                  uint64_t time, const char *text) {
    size_t n = strlen(text);
    if (n > 65535)
        n = 65535;
    if (hdr->size[ES_EVENT_USER_MSG] != ES_SIZE_VARIABLE)
        return NULL;
    bool has = block != NULL && es_is_block(block->data, block->len);
    size_t events = has ? block->len - ES_BLOCK_MARKER_LEN : 0;
    size_t len = ES_BLOCK_MARKER_LEN + events + 12 + n;
    struct es_chunk *b = es_pool_chunk_new(NULL, len);
    if (b == NULL)
        return NULL;
    uint64_t start = time, end = time;
    if (has) {
        start = es_block_time(block->data) < time ? es_block_time(block->data) : time;
        end = es_block_end_time(block->data) > time ? es_block_end_time(block->data) : time;
        memcpy(b->data + ES_BLOCK_MARKER_LEN, block->data + ES_BLOCK_MARKER_LEN, events);
    }
    es_put_block_marker(b->data, start, (uint32_t)len, end, ES_GLOBAL_CAP);
    uint8_t *p = b->data + ES_BLOCK_MARKER_LEN + events;
    es_put_be(p, ES_EVENT_USER_MSG, 2);
    es_put_be(p + 2, time, 8);
    es_put_be(p + 10, (uint64_t)n, 2);
    memcpy(p + 12, text, n);
    return b;
}

struct es_chunk *es_notice_empty(uint64_t time) {
    struct es_chunk *b = es_pool_chunk_new(NULL, ES_BLOCK_MARKER_LEN);
    if (b != NULL)
        es_put_block_marker(b->data, time, ES_BLOCK_MARKER_LEN, time, ES_GLOBAL_CAP);
    return b;
}

struct es_chunk *es_notice_wait(const struct es_header *hdr, uint64_t time, uint64_t waits,
                                uint64_t wait_ns, uint64_t period_ms) {
    char msg[160];
    int n = es_notice_text_wait(msg, sizeof msg, wait_ns, waits, period_ms);
    return notice(hdr, time, msg, fit(n, sizeof msg));
}

struct es_chunk *es_notice_cost(const struct es_header *hdr, uint64_t time, const struct es_cost *d,
                                uint64_t period_ms) {
    char msg[200];
    int n = es_notice_text_cost(msg, sizeof msg, d->writer_ns, d->walker_ns, d->loop_ns, period_ms,
                                d->bytes_sent);
    return notice(hdr, time, msg, fit(n, sizeof msg));
}

struct es_chunk *es_notice_cut(const struct es_header *hdr, uint64_t time, const char *why) {
    char msg[320];
    int n = fit(es_notice_text_cut(msg, sizeof msg, why), sizeof msg);
    struct es_chunk *b = notice_and(hdr, time, msg, n, 2);
    if (b != NULL)
        es_put_be(b->data + b->len - 2, ES_EVENT_END_MARKER, 2);
    return b;
}
