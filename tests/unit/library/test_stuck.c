/* SPDX-License-Identifier: BSD-3-Clause */
/* A client cannot keep the loop thread busy either: one writing without
 * pause is read 4 MiB a second at most, and then the kernel makes it wait.
 *
 * When the library's own threads are stuck (the loop thread made to sleep
 * through a test hook, as a blocked write to stderr once made it), the
 * program's side keeps going: the hand-off from RTS threads stays within
 * its bound by dropping whole chunks, every client finds a drop notice
 * where the gap is and still gets a valid stream to the end marker, and
 * stopping the server never waits much longer than the linger time.
 * Real Unix sockets, a recorded header; runs under ASan too. */
#define _GNU_SOURCE
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "control/es_reader.h"
#include "delivery/es_client.h"
#include "policy/es_cut.h"
#include "server/es_server.h"
#include "format/es_stream.h"
#include "server_util.h"
#include "../unit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char sock_path[4096];
static unsigned char *eventlog; /* the recorded eventlog */
static size_t hlen;             /* its header's length */
static struct timespec ms1 = {0, 1000000L};

/* What every case starts from: the socket's path, the recorded header. */
static void start_case(void) {
    snprintf(sock_path, sizeof sock_path, "%s/stuck.sock", unit_tmpdir());
    size_t len;
    eventlog = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    struct es_header h;
    if (es_header_parse(eventlog, len, &h) != 0)
        unit_bail("the recorded eventlog's header does not parse");
    hlen = h.len;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Until the loop thread is stuck (es_server_debug_block), 30 s at most. */
static void wait_blocked(struct es_server *s) {
    for (double t0 = now_s(); !es_server_debug_blocked(s) && now_s() - t0 < 30;)
        nanosleep(&ms1, NULL);
}

/* The client: reads its stream to EOF, parsed as it arrives. */
struct reader {
    int fd;
    struct es_stream stream;
    int result;
    uint64_t notices, noted_chunks;
    pthread_t thread;
};

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct reader *r = ctx;
    unsigned long long n;
    if (ev->type == ES_EVENT_USER_MSG && ev->payload_len > 25 &&
        memcmp(ev->payload, "eventlog-socket: dropped ", 25) == 0) {
        char text[128] = {0};
        memcpy(text, ev->payload, ev->payload_len < 127 ? ev->payload_len : 127);
        if (sscanf(text, "eventlog-socket: dropped %llu chunks", &n) == 1) {
            r->notices++;
            r->noted_chunks += n;
        }
    }
}

static void *read_thread(void *arg) {
    struct reader *r = arg;
    struct es_stream_callbacks cb = {.on_event = on_event, .ctx = r};
    static unsigned char buf[1 << 16];
    for (;;) {
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (poll(&p, 1, 20000) <= 0)
            break;
        ssize_t n = read(r->fd, buf, sizeof buf);
        if (n <= 0)
            break;
        es_stream_feed(&r->stream, buf, (size_t)n, &cb);
    }
    r->result = es_stream_finish(&r->stream);
    return NULL;
}

/* 1. The loop thread sleeps for 1.5 s while 256 MiB are written. */
UNIT_CASE(stuck_loop_handoff_drops) {
    start_case();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.max_buffer = (size_t)16 << 20;
    /* Long enough for the loop to wake (up to 1.45 s after the stop below)
     * and then drain what it holds to the client, even under TSan on a
     * busy machine: with 1000 ms (stop gives up after linger + 500 ms) it
     * had about 150 ms for that, and sometimes gave up. Part 2 tests the
     * give-up. */
    cfg.linger_ms = 10000;
    size_t limit = es_server_handoff_limit(&cfg);
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, sock_path, &cfg, NULL, NULL) == 0, "server started");
    es_server_submit(s, eventlog, hlen);
    struct reader r = {.fd = connect_unix(sock_path)};
    es_stream_init(&r.stream);
    ok(r.fd >= 0 && es_server_wait_client(s) == 0, "a reading client connected");
    pthread_create(&r.thread, NULL, read_thread, &r);

    size_t blen;
    uint64_t t = 1000;
    unsigned char *block = make_block(1000, 1036, t, &blen); /* about 1 MiB */
    /* The loop sleeps until released (60 s at most) from its next wake-up
     * on: wait until it does, so that every chunk below meets it stuck,
     * however slowly this thread or the loop thread gets the CPU. */
    es_server_debug_block(s, 60000);
    wait_blocked(s);
    ok(es_server_debug_blocked(s), "the loop thread is stuck");
    size_t peak = 0;
    unsigned submitted = 0;
    double start = now_s();
    for (; submitted < 256; submitted++) {
        es_put_be(block + 2, t, 8);
        es_put_be(block + 14, t + 1, 8);
        t += 2;
        es_server_submit(s, block, blen);
        size_t flying = es_server_in_flight(s);
        if (flying > peak)
            peak = flying;
    }
    double took = now_s() - start;
    uint64_t dropped, dropped_bytes;
    es_server_handoff_dropped(s, &dropped, &dropped_bytes);
    /* Still stuck: not one hand-over waited for the loop thread (each
     * would have waited out the 60 s otherwise). */
    ok(es_server_debug_blocked(s),
       "256 chunks handed over in %.3f s while the loop was stuck "
       "(never waiting for it)",
       took);
    ok(peak <= limit + blen, "in flight at most %zu bytes, within the hand-off limit %zu + a chunk",
       peak, limit);
    ok(dropped > 0 && dropped < submitted,
       "the hand-off dropped %llu of %u chunks rather than queue them", (unsigned long long)dropped,
       submitted);

    /* After the stall, the stream goes on and ends normally. */
    es_server_debug_release(s);
    es_server_submit(s, "\xff\xff", 2);
    ok(es_server_stop(s) == 0, "the server stopped normally once the loop woke");
    pthread_join(r.thread, NULL);
    ok(r.result == 0, "the client's stream is complete: header to end marker (%s)",
       r.result == 0 ? "ok" : r.stream.error);
    ok(r.notices >= 1 && r.noted_chunks == dropped,
       "its drop notices (%llu) count the %llu chunks dropped", (unsigned long long)r.notices,
       (unsigned long long)dropped);
    ok(atomic_load(&es_server_counters(s)->chunks_dropped) == dropped,
       "the stats count them once for the one client");
    es_stream_destroy(&r.stream);
    close(r.fd);
    es_server_free(s);
    free(block);
    free(eventlog);
}

/* 2. A loop thread stuck for longer than the exit may wait. */
UNIT_CASE(stuck_stop_gives_up) {
    start_case();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.max_buffer = (size_t)16 << 20;
    cfg.linger_ms = cfg.linger_max_ms = 300;
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, sock_path, &cfg, NULL, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, hlen);
    int fd = connect_unix(sock_path);
    ok(fd >= 0 && es_server_wait_client(s) == 0, "a client connected");
    es_server_debug_block(s, 8000);
    wait_blocked(s);
    es_server_submit(s, "\xff\xff", 2);
    double start = now_s();
    int stop = es_server_stop(s);
    double took = now_s() - start;
    /* The most a stop waits: the longest linger (0.3 s), the ending of the
     * streams cut at its end (ES_CUT_FINISH_MS) and the margin. */
    ok(stop == UV_ETIMEDOUT && took < 7.5,
       "stop gave up on the stuck loop after %.2f s (linger 0.3 s + ending cut streams %.1f s + "
       "margin 0.5 s; stuck for 8 s)",
       took, ES_CUT_FINISH_MS / 1000.0);
    ok(access(sock_path, F_OK) != 0, "and removed the socket file itself");
    es_server_free(s); /* waits for the threads, for the sanitizers' sake */
    close(fd);
    free(eventlog);
}

/* 3. A client writing garbage without pause. */
UNIT_CASE(stuck_flooding_client) {
    start_case();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.max_buffer = (size_t)16 << 20;
    cfg.linger_ms = 1000;
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, sock_path, &cfg, NULL, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, hlen);
    int fd = connect_unix(sock_path);
    ok(fd >= 0 && es_server_wait_client(s) == 0, "a flooding client connected");
    fcntl(fd, F_SETFL, O_NONBLOCK);
    static unsigned char junk[65536];
    memset(junk, 'x', sizeof junk);
    size_t sent = 0;
    double start = now_s();
    /* At least 1.5 s, and until the library has read one budget: a loop
     * thread starved of CPU (TSan, a busy machine) reads less than that in
     * 1.5 s, which says nothing about the limit. */
    double took3;
    while ((took3 = now_s() - start) < 1.5 || (sent < ES_READER_BUDGET && took3 < 30)) {
        ssize_t n = send(fd, junk, sizeof junk, MSG_NOSIGNAL);
        if (n > 0)
            sent += (size_t)n;
        else
            nanosleep(&ms1, NULL);
    }
    /* Unthrottled, a Unix socket takes gigabytes in that time. Each budget
     * window lasts a second at least, so at most ceil(took3) of them began
     * (2 in 1.5 s), each reading a budget and one 64 KiB read more. */
    double windows = (double)(long)took3 + 1;
    ok(sent >= ES_READER_BUDGET &&
           (double)sent < windows * (double)(ES_READER_BUDGET + 65536) + (double)(2 << 20),
       "in %.1f s it could write %.1f MiB: %.0f seconds' budgets (4 MiB each) and the socket's "
       "buffers at most",
       took3, (double)sent / (1 << 20), windows);
    /* Fill the socket until the library has stopped reading it (its
     * budget spent); once the window has ended, reading resumes and there
     * is room again (waited for, up to 30 s: the loop thread may be
     * starved). */
    double again = now_s();
    while (send(fd, junk, sizeof junk, MSG_NOSIGNAL) > 0 && now_s() - again < 30)
        ;
    ssize_t more = -1;
    double full = now_s();
    while ((more = send(fd, junk, sizeof junk, MSG_NOSIGNAL)) <= 0 && now_s() - full < 30)
        nanosleep(&ms1, NULL);
    ok(more > 0 && full - again < 30, "once its socket was full, it was read again %.2f s later",
       now_s() - full);
    es_server_submit(s, "\xff\xff", 2);
    ok(es_server_stop(s) == 0, "and the server stops normally");
    es_server_free(s);
    close(fd);
    free(eventlog);
}
