/* SPDX-License-Identifier: BSD-3-Clause */
/* Cost notices (EVENTLOG_SOCKET_CMD_COST_NOTICES): their text, and a real
 * server where one client asks for them and another does not. The one
 * that asked gets notices in its stream, and nothing else differs; the
 * other's stream is exactly what was submitted. Runs under ASan. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "format/es_events.h"
#include "delivery/es_notice.h"
#include "delivery/es_pool.h"
#include "server/es_server.h"
#include "server_util.h"
#include "../unit.h"

#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define COST_PREFIX "eventlog-socket: streaming cost "

static char sock_path[4096];

static void on_command(uint8_t cmd, void *ctx) {
    (void)cmd;
    (void)ctx;
}

/* Read until EOF, at most `cap` bytes kept; a 10 s poll timeout keeps a
 * bug from hanging the test. */
static size_t read_all(int fd, unsigned char *buf, size_t cap) {
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            break;
        ssize_t r = read(fd, buf + n, cap - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == cap)
            break;
    }
    return n;
}

/* Whether `b` (at least a block marker long) is a cost notice: a block of
 * exactly one USER_MSG starting with the notice's words. */
static bool is_cost_notice(const unsigned char *b, size_t avail, size_t *len) {
    if (avail < ES_BLOCK_MARKER_LEN + 12 || es_be16(b) != ES_EVENT_BLOCK_MARKER)
        return false;
    size_t blen = es_be32(b + 10);
    const unsigned char *e = b + ES_BLOCK_MARKER_LEN;
    size_t mlen = es_be16(e + 10);
    if (blen > avail || blen != ES_BLOCK_MARKER_LEN + 12 + mlen ||
        es_be16(e) != ES_EVENT_USER_MSG || mlen < sizeof COST_PREFIX - 1 ||
        memcmp(e + 12, COST_PREFIX, sizeof COST_PREFIX - 1) != 0)
        return false;
    *len = blen;
    return true;
}

/* A client reading its whole stream on a thread of its own, so that the
 * server's exit sees both clients reading (a client that never reads is
 * not waited for at exit). */
struct reader {
    int fd;
    unsigned char *buf;
    size_t cap, n;
    pthread_t thread;
};

static void *read_thread(void *arg) {
    struct reader *r = arg;
    r->n = read_all(r->fd, r->buf, r->cap);
    return NULL;
}

/* The recorded eventlog and its header (malloc'd). */
static unsigned char *recorded(size_t *len, struct es_header **h) {
    unsigned char *log = unit_read_fixture("ghc-9.0.2.eventlog", len);
    *h = malloc(sizeof **h);
    if (es_header_parse(log, *len, *h) != 0)
        unit_bail("the recorded eventlog's header does not parse");
    return log;
}

/* The text, as protocol.md gives it. */
UNIT_CASE(cost_notice_text) {
    size_t len;
    struct es_header *h;
    unsigned char *log = recorded(&len, &h);
    struct es_cost d = {
        .writer_ns = 3100000, .walker_ns = 2000000, .loop_ns = 7200000, .bytes_sent = 45u << 20};
    struct es_chunk *n = es_notice_cost(h, 77, &d, 1000);
    static const char want[] = "eventlog-socket: streaming cost 12.3 ms of CPU in the last 1.0 s "
                               "(RTS threads 3.1, walker 2.0, loop 7.2), 45.0 MiB sent";
    size_t nl = 0;
    ok(n != NULL && is_cost_notice(n->data, n->len, &nl) && nl == n->len &&
           n->len == ES_BLOCK_MARKER_LEN + 12 + sizeof want - 1 &&
           memcmp(n->data + ES_BLOCK_MARKER_LEN + 12, want, sizeof want - 1) == 0 &&
           es_be64(n->data + ES_BLOCK_MARKER_LEN + 2) == 77 && es_be64(n->data + 2) == 77,
       "the notice's text and time stamp");
    es_pool_chunk_free(n);
    free(h);
    free(log);
}

/* Where a stream first differs from the expected one, and its printable
 * bytes from there (a notice's text shows), for a failure's diagnosis. */
static void show_difference(const unsigned char *got, size_t n, const unsigned char *want,
                            size_t wn) {
    size_t i = 0;
    while (i < n && i < wn && got[i] == want[i])
        i++;
    char text[161];
    size_t k = 0;
    for (size_t j = i; j < n && k < sizeof text - 1; j++)
        text[k++] = got[j] >= 0x20 && got[j] < 0x7f ? (char)got[j] : '.';
    text[k] = '\0';
    printf("# first difference at byte %zu of %zu (%zu expected); from there: %s\n", i, n, wn,
           text);
}

UNIT_CASE(cost_notice_asked_or_not) {
    size_t len;
    struct es_header *h;
    unsigned char *log = recorded(&len, &h);
    size_t hlen = h->len;
    snprintf(sock_path, sizeof sock_path, "%s/srv.sock", unit_tmpdir());
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.linger_ms = 2000;
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server started");
    es_server_submit(s, log, hlen);
    int a = connect_unix(sock_path);
    int b = connect_unix(sock_path);
    for (int i = 0; i < 500 && atomic_load(&es_server_counters(s)->clients_accepted) < 2; i++)
        sleep_ms(10);
    ok(a >= 0 && b >= 0 && atomic_load(&es_server_counters(s)->clients_accepted) == 2,
       "two clients connected");
    /* A asks in both framings (the second changes nothing). */
    static const char ask[] = "GCTL\x07\xF0\x9E\x97\x8C\x00\x0f"
                              "eventlog-socket\x07";
    ok(write(a, ask, sizeof ask - 1) == (ssize_t)(sizeof ask - 1), "client A asked");

    /* Three rounds of blocks more than a second apart: each second after
     * the request, A's next write carries a notice. The blocks are
     * stamped in order. */
    size_t blen;
    unsigned char *blocks[3];
    for (int r = 0; r < 3; r++) {
        sleep_ms(1100);
        blocks[r] = make_block(100, 100, 1000000u * (r + 1), &blen);
        es_server_submit(s, blocks[r], blen);
    }
    es_server_submit(s, "\xff\xff", 2);
    size_t cap = 4u << 20;
    struct reader ra = {.fd = a, .buf = malloc(cap), .cap = cap};
    struct reader rb = {.fd = b, .buf = malloc(cap), .cap = cap};
    pthread_create(&ra.thread, NULL, read_thread, &ra);
    pthread_create(&rb.thread, NULL, read_thread, &rb);
    es_server_stop(s);
    pthread_join(ra.thread, NULL);
    pthread_join(rb.thread, NULL);

    /* What was submitted, as one stream. */
    size_t want_len = hlen + 3 * blen + 2;
    unsigned char *expect = malloc(want_len);
    memcpy(expect, log, hlen);
    for (int r = 0; r < 3; r++)
        memcpy(expect + hlen + r * blen, blocks[r], blen);
    memcpy(expect + hlen + 3 * blen, "\xff\xff", 2);

    unsigned char *got = rb.buf;
    size_t nb = rb.n;
    if (!ok(nb == want_len && memcmp(got, expect, want_len) == 0,
            "the client that did not ask got exactly the stream (%zu of %zu bytes)", nb, want_len))
        show_difference(got, nb, expect, want_len);

    /* A's stream without its notices is the same; the notices lie between
     * blocks, each a well-formed block, and time stamps do not go back. */
    got = ra.buf;
    size_t na = ra.n;
    unsigned char *stripped = malloc(cap);
    size_t ns = 0, notices = 0, at = 0;
    bool in_order = true;
    uint64_t last_end = 0;
    memcpy(stripped, got, na < hlen ? na : hlen);
    ns = at = na < hlen ? na : hlen;
    while (at < na) {
        size_t l;
        if (is_cost_notice(got + at, na - at, &l)) {
            notices++;
            if (es_be64(got + at + 2) < last_end)
                in_order = false;
        } else {
            l = at + ES_BLOCK_MARKER_LEN <= na && es_be16(got + at) == ES_EVENT_BLOCK_MARKER
                    ? es_be32(got + at + 10)
                    : na - at;
            if (l >= ES_BLOCK_MARKER_LEN && es_be16(got + at) == ES_EVENT_BLOCK_MARKER)
                last_end = es_be64(got + at + 14);
            if (l > na - at)
                l = na - at;
            memcpy(stripped + ns, got + at, l);
            ns += l;
        }
        at += l;
    }
    ok(notices >= 1 && notices <= 3, "the client that asked got cost notices (%zu)", notices);
    ok(ns == want_len && memcmp(stripped, expect, want_len) == 0,
       "and, notices aside, the same stream (%zu of %zu bytes)", ns, want_len);
    ok(in_order, "each notice is stamped no earlier than the block before it");

    close(a);
    close(b);
    es_server_free(s);
    for (int r = 0; r < 3; r++)
        free(blocks[r]);
    free(expect);
    free(ra.buf);
    free(rb.buf);
    free(stripped);
    free(h);
    free(log);
}
