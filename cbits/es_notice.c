#include "es_notice.h"

#include "es_pool.h"

#include "es_events.h"

#include <stdio.h>
#include <string.h>

/* A block holding the one message `msg` (`n` bytes). */
static struct es_chunk *notice(const struct es_header *hdr, uint64_t time, const char *msg, int n) {
    if (hdr->size[ES_EVENT_USER_MSG] != ES_SIZE_VARIABLE || n <= 0)
        return NULL;
    size_t len = ES_BLOCK_MARKER_LEN + 12 + (size_t)n;
    struct es_chunk *b = es_chunk_new(NULL, len);
    if (b == NULL)
        return NULL;
    es_put_block_marker(b->data, time, (uint32_t)len, time, ES_GLOBAL_CAP);
    uint8_t *p = b->data + ES_BLOCK_MARKER_LEN;
    es_put_be(p, ES_EVENT_USER_MSG, 2);
    es_put_be(p + 2, time, 8);
    es_put_be(p + 10, (uint64_t)n, 2);
    memcpy(p + 12, msg, (size_t)n);
    return b;
}

struct es_chunk *es_notice_new(const struct es_header *hdr, uint64_t chunks, uint64_t bytes,
                               uint64_t time) {
    char msg[128];
    int n = snprintf(msg, sizeof msg, "eventlog-socket: dropped %llu chunks (%.1f MiB)",
                     (unsigned long long)chunks, (double)bytes / (1 << 20));
    return notice(hdr, time, msg, n);
}

struct es_chunk *es_notice_text(const struct es_header *hdr, uint64_t time, const char *text) {
    size_t n = strlen(text);
    return notice(hdr, time, text, n > 65535 ? 65535 : (int)n);
}

struct es_chunk *es_notice_wait(const struct es_header *hdr, uint64_t time, uint64_t waits,
                                uint64_t wait_ns, uint64_t period_ms) {
    char msg[160];
    int n = snprintf(msg, sizeof msg,
                     "eventlog-socket: the program waited %.1f ms (%llu times) for lossless "
                     "clients in the last %.1f s",
                     (double)wait_ns / 1e6, (unsigned long long)waits, (double)period_ms / 1000);
    return notice(hdr, time, msg, n);
}

struct es_chunk *es_notice_cost(const struct es_header *hdr, uint64_t time, const struct es_cost *d,
                                uint64_t period_ms) {
    char msg[200];
    uint64_t total = d->writer_ns + d->walker_ns + d->loop_ns;
    int n = snprintf(msg, sizeof msg,
                     "eventlog-socket: streaming cost %.1f ms of CPU in the last %.1f s (RTS "
                     "threads %.1f, walker %.1f, loop %.1f), %.1f MiB sent",
                     (double)total / 1e6, (double)period_ms / 1000, (double)d->writer_ns / 1e6,
                     (double)d->walker_ns / 1e6, (double)d->loop_ns / 1e6,
                     (double)d->bytes_sent / (1 << 20));
    return notice(hdr, time, msg, n);
}
