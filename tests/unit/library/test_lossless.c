/* SPDX-License-Identifier: BSD-3-Clause */
/* es_lossless through a real server (Unix sockets, a recorded header): a
 * lossless client that reads nothing holds a writing thread up until the
 * stall time is over, then is demoted, and finds a notice and a drop
 * notice in its stream; a refused request (lossless_clients = none) is
 * told in the stream, also one refused before the program's header (once
 * the header has come) or at its connection in a program that keeps a
 * window; under the `wait` policy a client is lossless from the start; a
 * SIGINT (counted as the chained handler does) releases a wait for a
 * client that stopped reading at once, and ends a wait for the first
 * client. With them, the notices for one client that carry the refusals:
 * none replaces another, and what waits for a client that reads nothing
 * is bounded. Threaded: runs under TSan too. */
#define _GNU_SOURCE
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "server/es_server.h"
#include "base/es_signal.h"
#include "delivery/es_client.h"
#include "format/es_classes.h"
#include "format/es_notice_text.h"
#include "format/es_payload.h"
#include "format/es_stream.h"
#include "server_util.h"
#include "../unit.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>

static unsigned char *header;
static size_t header_len;

/* What every case starts from: the recorded header, to submit first. */
static void start(void) {
    size_t len;
    unsigned char *log = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    struct es_header h;
    ok(es_header_parse(log, len, &h) == 0, "a recorded header");
    header = log;
    header_len = h.len;
}

/* A client that reads its stream to EOF when told, keeping the library's
 * notices. */
struct reader {
    int fd;
    struct es_stream stream;
    atomic_bool go;
    char lossless[512];     /* the first lossless notice */
    atomic_int noticed;     /* set once it is there */
    atomic_int have_header; /* the stream's header has arrived */
    atomic_uint drops;
    atomic_uint waited;   /* wait notices ("the program waited ...") */
    atomic_uint classes;  /* event classes reports (command 0x09) */
    atomic_uint messages; /* the program's own messages ("mmm...") */
    atomic_uint largest;  /* the largest block's size */
    pthread_t thread;
};

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct reader *r = ctx;
    struct es_block_fields b;
    if (ev->type == ES_EVENT_BLOCK_MARKER && es_payload_block(ev, &b) &&
        b.size > atomic_load(&r->largest))
        atomic_store(&r->largest, b.size);
    if (ev->type != ES_EVENT_USER_MSG)
        return;
    if (ev->payload_len > 0 && ev->payload[0] == 'm')
        atomic_fetch_add(&r->messages, 1);
    static const char lossless[] = "eventlog-socket: lossless delivery ";
    size_t n = ev->payload_len < 511 ? ev->payload_len : 511;
    if (n > sizeof lossless && memcmp(ev->payload, lossless, sizeof lossless - 1) == 0 &&
        !atomic_load(&r->noticed)) {
        memcpy(r->lossless, ev->payload, n);
        atomic_store(&r->noticed, 1);
    }
    if (n > 25 && memcmp(ev->payload, "eventlog-socket: dropped ", 25) == 0)
        atomic_fetch_add(&r->drops, 1);
    static const char classes[] = ES_NOTICE_PREFIX ES_CLASSES_REPORT_WORDS;
    if (n > sizeof classes && memcmp(ev->payload, classes, sizeof classes - 1) == 0)
        atomic_fetch_add(&r->classes, 1);
    static const char waited[] = "eventlog-socket: the program waited ";
    if (n > sizeof waited && memcmp(ev->payload, waited, sizeof waited - 1) == 0)
        atomic_fetch_add(&r->waited, 1);
}

static void on_header(const struct es_header *hdr, void *ctx) {
    (void)hdr;
    atomic_store(&((struct reader *)ctx)->have_header, 1);
}

static void *read_thread(void *arg) {
    struct reader *r = arg;
    while (!atomic_load(&r->go))
        sleep_ms(5);
    struct es_stream_callbacks cb = {.on_header = on_header, .on_event = on_event, .ctx = r};
    static _Thread_local unsigned char buf[1 << 16];
    for (;;) {
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (poll(&p, 1, 20000) <= 0)
            break;
        ssize_t n = read(r->fd, buf, sizeof buf);
        if (n <= 0)
            break;
        es_stream_feed(&r->stream, buf, (size_t)n, &cb);
    }
    return NULL;
}

static void reader_start(struct reader *r, const char *path, bool go) {
    memset(r, 0, sizeof *r);
    r->fd = connect_unix(path);
    es_stream_init(&r->stream);
    atomic_init(&r->go, go);
    atomic_init(&r->noticed, 0);
    atomic_init(&r->have_header, 0);
    atomic_init(&r->drops, 0);
    atomic_init(&r->waited, 0);
    atomic_init(&r->classes, 0);
    atomic_init(&r->messages, 0);
    atomic_init(&r->largest, 0);
    pthread_create(&r->thread, NULL, read_thread, r);
}

static void reader_end(struct reader *r) {
    atomic_store(&r->go, true);
    pthread_join(r->thread, NULL);
    es_stream_destroy(&r->stream);
    close(r->fd);
}

/* A program thread writing `n` blocks of 256 KiB. */
struct writer {
    struct es_server *s;
    int n;
    atomic_int done;
    pthread_t thread;
};

static void *write_thread(void *arg) {
    struct writer *w = arg;
    size_t len;
    for (int i = 0; i < w->n; i++) {
        unsigned char *b = make_block(256, 1012, 1000 + (uint64_t)i * 10, &len);
        es_server_submit(w->s, b, len);
        free(b);
    }
    atomic_store(&w->done, 1);
    return NULL;
}

static void writer_start(struct writer *w, struct es_server *s, int n) {
    w->s = s;
    w->n = n;
    atomic_init(&w->done, 0);
    pthread_create(&w->thread, NULL, write_thread, w);
}

/* Wait (at most 10 s) until `cond` holds. */
#define WAIT_FOR(cond)                                                                             \
    do {                                                                                           \
        for (int i_ = 0; i_ < 1000 && !(cond); i_++)                                               \
            sleep_ms(10);                                                                          \
    } while (0)

static uint64_t lossless_now(struct es_server *s) {
    return atomic_load(&es_server_counters(s)->clients_lossless);
}

static struct es_server *serve(const char *name, struct es_config *cfg, char *path, size_t n) {
    snprintf(path, n, "%s/%s.sock", unit_tmpdir(), name);
    struct es_server *s = NULL;
    if (es_server_start_unix(&s, path, cfg, NULL, NULL) != 0)
        return NULL;
    es_server_submit(s, header, header_len);
    return s;
}

static void stop(struct es_server *s) {
    es_server_exiting(s);
    es_server_stop(s);
    es_server_free(s);
}

static uint64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* 1. A stalled lossless client is demoted once it has read nothing for the
 * stall time, not before: the time counts from its last read (here its
 * connection: it never reads), not from the start of the program's wait,
 * which a busy machine may begin much later. */
UNIT_CASE(lossless_stall) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.client_limit = (size_t)1 << 20;
    cfg.lossless_stall_ms = 3000; /* a loaded machine may take seconds to get the writer waiting */
    char path[256];
    struct es_server *s = serve("stall", &cfg, path, sizeof path);
    struct reader r;
    uint64_t connected = mono_ms();
    reader_start(&r, path, false);
    ok(s != NULL && es_server_wait_client(s) == 0, "stall: a client connected");
    ok(write(r.fd, "GCTL\x06", 5) == 5, "stall: it asks for lossless delivery");
    WAIT_FOR(lossless_now(s) == 1);
    ok(lossless_now(s) == 1, "stall: and is lossless (the owner, over a Unix socket)");
    struct writer w;
    writer_start(&w, s, 64); /* 16 MiB against a 1 MiB limit */
    WAIT_FOR(es_server_debug_waiting(s) || atomic_load(&w.done));
    ok(es_server_debug_waiting(s), "stall: a program thread waits for it");
    /* Watch for the demotion: one seen before the stall time had passed
     * since the connection (less 50 ms for the loop's cached clock) came
     * too early. A look that a busy machine delays only sees it later. */
    bool early = false;
    uint64_t seen = 0;
    for (int i = 0; i < 2000 && !atomic_load(&w.done); i++) {
        bool still = lossless_now(s) == 1;
        seen = mono_ms() - connected;
        if (!still) {
            early = seen + 50 < cfg.lossless_stall_ms;
            break;
        }
        sleep_ms(5);
    }
    WAIT_FOR(atomic_load(&w.done));
    ok(atomic_load(&w.done) && lossless_now(s) == 0,
       "stall: after the stall time it is demoted, and the program goes on");
    ok(!early,
       "stall: not before it had read nothing for the stall time (seen demoted %llu ms "
       "after it connected)",
       (unsigned long long)seen);
    pthread_join(w.thread, NULL);
    uint64_t waits, ns, max_ns;
    es_server_wait_stats(s, &waits, &ns, &max_ns);
    ok(waits >= 1, "stall: the program waited for it (%llu times, at most %.0f ms)",
       (unsigned long long)waits, (double)max_ns / 1e6);
    /* It reads again: the notice and then a drop notice (more chunks come). */
    atomic_store(&r.go, true);
    WAIT_FOR(atomic_load(&r.noticed));
    writer_start(&w, s, 8);
    pthread_join(w.thread, NULL);
    WAIT_FOR(atomic_load(&r.drops) > 0);
    stop(s);
    reader_end(&r);
    ok(strstr(r.lossless, "lossless delivery ended: it read nothing for") != NULL,
       "stall: its stream says so: \"%s\"", r.lossless);
    ok(atomic_load(&r.drops) >= 1, "stall: and chunks were skipped for it, with a drop notice");
}

/* Blocks of the program until `r` has its lossless notice (a notice goes
 * out with the client's next write; without blocks it would come at the
 * stop), at most 10 s. */
static void submit_until_noticed(struct es_server *s, struct reader *r) {
    for (int i = 0; i < 1000 && !atomic_load(&r->noticed); i++) {
        size_t blen;
        unsigned char *b = make_block(1, 16, 1000 + (uint64_t)i * 10, &blen);
        es_server_submit(s, b, blen);
        free(b);
        sleep_ms(10);
    }
}

/* 2. A request refused by the setting. */
UNIT_CASE(lossless_refused) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.lossless_clients = EVENTLOG_SOCKET_LOSSLESS_NONE;
    char path[256];
    struct es_server *s = serve("none", &cfg, path, sizeof path);
    struct reader r;
    reader_start(&r, path, true);
    ok(s != NULL && es_server_wait_client(s) == 0, "none: a client connected");
    WAIT_FOR(atomic_load(&r.have_header));
    /* With the event classes report twice first, in one write: notices for
     * this client made while its first is still being written, none
     * replacing another. */
    ok(write(r.fd, "GCTL\x09GCTL\x09GCTL\x06", 15) == 15,
       "none: it asks for the event classes twice and lossless delivery");
    submit_until_noticed(s, &r);
    ok(lossless_now(s) == 0, "none: it is not lossless");
    stop(s);
    reader_end(&r);
    ok(strstr(r.lossless, "lossless delivery refused: lossless delivery is off") != NULL,
       "none: its stream says why: \"%s\"", r.lossless);
    ok(atomic_load(&r.classes) == 2, "none: and has both event classes reports (%u)",
       atomic_load(&r.classes));
}

/* What the library logs from now on, from a pipe read without waiting
 * (es_log writes from its own thread); the saved stderr. */
static int log_to_pipe(int p[2]) {
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    if (saved < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0 || dup2(p[1], STDERR_FILENO) < 0)
        unit_bail("cannot read the library's log");
    return saved;
}

/* Whether the log says `what` within 10 s; what it said is in `seen`. */
static bool log_says(int fd, const char *what, char *seen, size_t size) {
    size_t n = strlen(seen);
    for (int i = 0; i < 1000 && strstr(seen, what) == NULL; i++) {
        ssize_t got = read(fd, seen + n, size - 1 - n);
        if (got > 0)
            seen[n += (size_t)got] = '\0';
        else
            sleep_ms(10);
    }
    return strstr(seen, what) != NULL;
}

/* 3. A client refused before the program's header has come, asking
 * (`ask`, with the event classes report asked for twice first) or at its
 * connection under the `wait` policy: no notice can be made then (it
 * needs the header's event types); each is told once the header has
 * come, after it. */
static void refused_before_header(const char *name, bool ask) {
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.lossless_clients = EVENTLOG_SOCKET_LOSSLESS_NONE;
    if (!ask)
        cfg.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_WAIT;
    char path[256];
    snprintf(path, sizeof path, "%s/early-%s.sock", unit_tmpdir(), name);
    int p[2];
    int saved = log_to_pipe(p);
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, path, &cfg, NULL, NULL) == 0, "%s: the server started", name);
    struct reader r;
    reader_start(&r, path, true);
    ok(es_server_wait_client(s) == 0, "%s: a client connected before the header", name);
    if (ask)
        ok(write(r.fd, "GCTL\x09GCTL\x09GCTL\x06", 15) == 15,
           "%s: it asks for the event classes twice and lossless delivery", name);
    static char seen[1 << 16];
    seen[0] = '\0';
    bool refused = log_says(p[0], "asked for lossless delivery; refused", seen, sizeof seen);
    es_log_drain(1000);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(p[0]);
    close(p[1]);
    char shown[1024];
    ok(refused, "%s: the program logs the refusal (it logged \"%s\")", name,
       unit_shown(seen, shown, sizeof shown));
    ok(!atomic_load(&r.have_header), "%s: while its stream has no header yet", name);
    es_server_submit(s, header, header_len);
    submit_until_noticed(s, &r);
    ok(lossless_now(s) == 0, "%s: it is not lossless", name);
    stop(s);
    reader_end(&r);
    ok(strstr(r.lossless, "lossless delivery refused: lossless delivery is off") != NULL,
       "%s: once the header has come, its stream says why: \"%s\"", name, r.lossless);
    if (ask)
        ok(atomic_load(&r.classes) == 2, "%s: and has both event classes reports (%u)", name,
           atomic_load(&r.classes));
}

/* 4. What a client is owed before the header is bounded: 100 reports
 * asked for then (each some 200 bytes of text) keep at most
 * ES_CLIENT_OWED_MAX bytes, said once in the log; the first are told. */
UNIT_CASE(lossless_owed_before_header_bounded) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.lossless_clients = EVENTLOG_SOCKET_LOSSLESS_NONE;
    char path[256];
    snprintf(path, sizeof path, "%s/owed.sock", unit_tmpdir());
    int p[2];
    int saved = log_to_pipe(p);
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, path, &cfg, NULL, NULL) == 0, "the server started");
    struct reader r;
    reader_start(&r, path, true);
    ok(es_server_wait_client(s) == 0, "a client connected before the header");
    char asks[101 * 5];
    for (int i = 0; i < 100; i++)
        memcpy(asks + 5 * i, "GCTL\x09", 5);
    memcpy(asks + 500, "GCTL\x06", 5); /* refused: logged once all were read */
    ok(write(r.fd, asks, sizeof asks) == (ssize_t)sizeof asks,
       "it asks for the event classes 100 times, then for lossless delivery");
    static char seen[1 << 16];
    seen[0] = '\0';
    bool refused = log_says(p[0], "asked for lossless delivery; refused", seen, sizeof seen);
    es_log_drain(1000);
    (void)log_says(p[0], "the rest are not told", seen, sizeof seen);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(p[0]);
    close(p[1]);
    ok(refused, "the program read them all");
    ok(strstr(seen, "notices from before the eventlog header exceed 4096 bytes") != NULL,
       "and logs that it keeps no more than 4096 bytes of them");
    es_server_submit(s, header, header_len);
    WAIT_FOR(atomic_load(&r.classes) > 0);
    stop(s); /* the client gets the rest, then the end */
    reader_end(&r);
    unsigned n = atomic_load(&r.classes);
    ok(n >= 10 && n <= ES_CLIENT_OWED_MAX / 100,
       "once the header came, the reports that fit were told (%u)", n);
}

/* 5. A client that asks for report after report and reads nothing: what
 * waits for it is bounded (ES_CLIENT_NOTICE_MAX; the loop copies no more
 * than that a report), and another client is served meanwhile. */
UNIT_CASE(lossless_notices_unread_bounded) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    char path[256];
    struct es_server *s = serve("flood", &cfg, path, sizeof path);
    struct reader r;
    reader_start(&r, path, false);
    ok(s != NULL && es_server_wait_client(s) == 0, "a client connected");
    static char asks[20000 * 5];
    for (int i = 0; i < 20000; i++)
        memcpy(asks + 5 * i, "GCTL\x09", 5);
    /* 100 KB of commands, each answered by some 250 bytes it never reads:
     * its socket fills, then its notices wait in the library. */
    size_t sent = 0;
    for (int i = 0; i < 1000 && sent < sizeof asks; i++) {
        ssize_t n = send(r.fd, asks + sent, sizeof asks - sent, MSG_DONTWAIT);
        if (n > 0)
            sent += (size_t)n;
        else
            sleep_ms(10);
    }
    ok(sent == sizeof asks, "it asked for the event classes 20000 times (%zu bytes sent)", sent);
    struct reader other;
    reader_start(&other, path, true);
    WAIT_FOR(atomic_load(&other.have_header));
    ok(atomic_load(&other.have_header), "another client that connects meanwhile gets its stream");
    atomic_store(&r.go, true);
    WAIT_FOR(atomic_load(&r.classes) > 0);
    stop(s);
    reader_end(&r);
    reader_end(&other);
    ok(atomic_load(&r.classes) > 0 && atomic_load(&r.classes) < 20000,
       "once it reads, it gets the reports that were kept (%u of 20000)", atomic_load(&r.classes));
    ok(atomic_load(&r.largest) <= ES_CLIENT_NOTICE_MAX + 512,
       "in blocks of at most %u bytes and a marker (the largest: %u)", ES_CLIENT_NOTICE_MAX,
       atomic_load(&r.largest));
}

/* 6. Under the `wait` policy a client that may not have lossless delivery
 * is refused as it connects, before it has started: the notice waits for
 * its start, so a program that keeps a window still holds it there and
 * sends it the window it asks for, each message once. */
UNIT_CASE(lossless_refused_at_connection_with_a_window) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_WAIT;
    cfg.lossless_clients = EVENTLOG_SOCKET_LOSSLESS_NONE;
    cfg.retain = (size_t)1 << 20;
    char path[256];
    struct es_server *s = serve("window", &cfg, path, sizeof path);
    size_t blen;
    unsigned char *b = make_block(4, 16, 1000, &blen);
    es_server_submit(s, b, blen);
    free(b);
    /* The header has reached the loop once a first client has it. */
    struct reader first, r;
    reader_start(&first, path, true);
    WAIT_FOR(atomic_load(&first.have_header));
    ok(atomic_load(&first.have_header), "a first client has the header");
    reader_start(&r, path, false);
    WAIT_FOR(atomic_load(&es_server_counters(s)->clients_connected) == 2);
    ok(atomic_load(&es_server_counters(s)->clients_connected) == 2, "a client connected");
    ok(write(r.fd, "GCTL\x08", 5) == 5, "it asks for the window");
    atomic_store(&r.go, true);
    WAIT_FOR(atomic_load(&r.messages) >= 4);
    b = make_block(4, 16, 2000, &blen);
    es_server_submit(s, b, blen);
    free(b);
    WAIT_FOR(atomic_load(&r.messages) >= 8);
    stop(s);
    reader_end(&r);
    reader_end(&first);
    ok(atomic_load(&r.messages) == 8, "it got each of the program's 8 messages once (%u)",
       atomic_load(&r.messages));
    ok(strstr(r.lossless, "lossless delivery refused") != NULL, "and the refusal: \"%s\"",
       r.lossless);
}

UNIT_CASE(lossless_refused_before_header) {
    start();
    refused_before_header("ask", true);
    refused_before_header("wait", false);
}

/* A server (client limit 1 MiB) with two clients: a plain one, the
 * watcher (reading at once when `reading`), and the staller, which asks
 * for lossless delivery, reads nothing and holds a program thread up
 * until it leaves; returns once that thread's blocks are all handed over. */
static struct es_server *hold_up_once(const char *name, struct reader *watcher,
                                      struct reader *staller, bool reading) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.client_limit = (size_t)1 << 20;
    char path[256];
    struct es_server *s = serve(name, &cfg, path, sizeof path);
    reader_start(watcher, path, reading);
    reader_start(staller, path, false);
    WAIT_FOR(atomic_load(&es_server_counters(s)->clients_connected) == 2);
    ok(write(staller->fd, "GCTL\x06", 5) == 5, "%s: a client asks for lossless delivery", name);
    WAIT_FOR(lossless_now(s) == 1);
    struct writer w;
    writer_start(&w, s, 16); /* 4 MiB against a 1 MiB limit */
    WAIT_FOR(es_server_debug_waiting(s) || atomic_load(&w.done));
    ok(es_server_debug_waiting(s), "%s: a program thread waits for the lossless client", name);
    shutdown(staller->fd, SHUT_RDWR); /* it leaves; the wait ends */
    pthread_join(w.thread, NULL);
    return s;
}

/* 2b. A wait is told (the wait notice, to every client) also when the
 * program goes quiet right after it: the notice is not left for a next
 * chunk that may never come. A plain client watches; the lossless client
 * holds the program up for a moment, well within a second of the last
 * look, and leaves; nothing is submitted after the blocks it held up. */
UNIT_CASE(lossless_wait_told_when_quiet) {
    struct reader watcher, staller;
    struct es_server *s = hold_up_once("quiet", &watcher, &staller, true);
    uint64_t waits, ns, max_ns;
    es_server_wait_stats(s, &waits, &ns, &max_ns);
    ok(waits >= 1, "quiet: the program waited (%llu times)", (unsigned long long)waits);
    /* Nothing more is submitted: the notice must come by itself. */
    WAIT_FOR(atomic_load(&watcher.waited) > 0);
    ok(atomic_load(&watcher.waited) >= 1,
       "quiet: the watching client is told of the wait without another chunk (%u notices)",
       atomic_load(&watcher.waited));
    stop(s);
    reader_end(&watcher);
    reader_end(&staller);
}

/* 2c. A wait is told to a client that lagged too: a plain client that
 * reads nothing for a while (the drop policy, a 1 MiB limit) skips the
 * chunks around the wait notice, and its stream still has the notice,
 * beside the drop notice for what it missed (what `serve` shows when it
 * lagged behind a flood). */
UNIT_CASE(lossless_wait_told_to_a_lagging_client) {
    struct reader watcher, staller;
    struct es_server *s = hold_up_once("lagging", &watcher, &staller, false);
    /* The program writes on (5 MiB a second, for 3 s) while the watcher
     * still reads nothing: the wait notice, due within a second, comes
     * among chunks that the watcher skips. */
    size_t len;
    for (int i = 0; i < 60; i++) {
        unsigned char *b = make_block(256, 1012, 100000 + (uint64_t)i * 10, &len);
        es_server_submit(s, b, len);
        free(b);
        sleep_ms(50);
    }
    uint64_t dropped = atomic_load(&es_server_counters(s)->chunks_dropped);
    ok(dropped > 0, "lagging: the watcher skipped chunks (%llu)", (unsigned long long)dropped);
    atomic_store(&watcher.go, true);
    WAIT_FOR(atomic_load(&watcher.waited) > 0 && atomic_load(&watcher.drops) > 0);
    ok(atomic_load(&watcher.drops) >= 1, "lagging: the watcher is told what it missed (%u)",
       atomic_load(&watcher.drops));
    ok(atomic_load(&watcher.waited) >= 1,
       "lagging: the watcher is told of the wait although it skipped the chunks around it "
       "(%u notices)",
       atomic_load(&watcher.waited));
    stop(s);
    reader_end(&watcher);
    reader_end(&staller);
}

/* 3. The `wait` policy: every (allowed) client is lossless as it joins. */
UNIT_CASE(lossless_wait_policy) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_WAIT;
    char path[256];
    struct es_server *s = serve("wait", &cfg, path, sizeof path);
    struct reader r;
    reader_start(&r, path, true);
    ok(s != NULL && es_server_wait_client(s) == 0, "wait: a client connected");
    WAIT_FOR(lossless_now(s) == 1);
    ok(lossless_now(s) == 1, "wait: it is lossless without asking");
    stop(s);
    reader_end(&r);
    ok(r.lossless[0] == '\0', "wait: and has no notice");
}

/* 4. A SIGINT while a client that stopped reading holds the program up. */
UNIT_CASE(lossless_interrupted) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.client_limit = (size_t)1 << 20;
    cfg.lossless_stall_ms = 0; /* never for stalling alone */
    char path[256];
    struct es_server *s = serve("int", &cfg, path, sizeof path);
    struct reader r;
    reader_start(&r, path, false);
    ok(s != NULL && es_server_wait_client(s) == 0, "sigint: a client connected");
    ok(write(r.fd, "GCTL\x06", 5) == 5, "sigint: it asks for lossless delivery");
    WAIT_FOR(lossless_now(s) == 1);
    struct writer w;
    writer_start(&w, s, 64);
    WAIT_FOR(es_server_debug_waiting(s) || atomic_load(&w.done));
    sleep_ms(500); /* longer than the exit rule's 250 ms for a client that never read */
    ok(es_server_debug_waiting(s) && !atomic_load(&w.done),
       "sigint: a program thread still waits (no stall time)");
    es_signal_note();
    WAIT_FOR(atomic_load(&w.done));
    ok(atomic_load(&w.done) && lossless_now(s) == 0,
       "sigint: the interrupt demotes the client that stopped reading; the program goes on");
    pthread_join(w.thread, NULL);
    atomic_store(&r.go, true);
    WAIT_FOR(atomic_load(&r.noticed));
    stop(s);
    reader_end(&r);
    ok(strstr(r.lossless, "ended: the program was interrupted") != NULL,
       "sigint: its stream says so: \"%s\"", r.lossless);
}

/* 4b. A SIGINT that comes as a client has just stopped reading (not yet
 * for the exit rule's while): the client is demoted once it has been still
 * that long, not left to hold the program up after the interrupt. */
UNIT_CASE(lossless_interrupted_early) {
    start();
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.client_limit = (size_t)1 << 20;
    cfg.lossless_stall_ms = 0;
    char path[256];
    struct es_server *s = serve("early", &cfg, path, sizeof path);
    struct reader r;
    reader_start(&r, path, false);
    ok(s != NULL && es_server_wait_client(s) == 0, "early: a client connected");
    ok(write(r.fd, "GCTL\x06", 5) == 5, "early: it asks for lossless delivery");
    WAIT_FOR(lossless_now(s) == 1);
    struct writer w;
    writer_start(&w, s, 64);
    WAIT_FOR(es_server_debug_waiting(s) || atomic_load(&w.done));
    es_signal_note(); /* at once: the client has not been still for 250 ms */
    WAIT_FOR(atomic_load(&w.done));
    bool done = atomic_load(&w.done);
    ok(done && lossless_now(s) == 0,
       "early: the client is demoted once it has been still long enough; the program goes on");
    if (!done) { /* the server's stop ends every wait */
        stop(s);
        pthread_join(w.thread, NULL);
        reader_end(&r);
        return;
    }
    pthread_join(w.thread, NULL);
    atomic_store(&r.go, true);
    WAIT_FOR(atomic_load(&r.noticed));
    stop(s);
    reader_end(&r);
    ok(strstr(r.lossless, "ended: the program was interrupted") != NULL,
       "early: its stream says so: \"%s\"", r.lossless);
}

/* 5. A SIGINT ends a wait for the first client. */
static atomic_int wait_result;

static void *waiter(void *arg) {
    atomic_store(&wait_result, es_server_wait_client(arg));
    return NULL;
}

UNIT_CASE(lossless_sigint_ends_first_wait) {
    start();
    char path[256];
    struct es_server *s = serve("first", NULL, path, sizeof path);
    atomic_store(&wait_result, 1);
    pthread_t t;
    pthread_create(&t, NULL, waiter, s);
    sleep_ms(200);
    ok(atomic_load(&wait_result) == 1, "first: the wait for a client goes on");
    es_signal_note();
    pthread_join(t, NULL);
    ok(atomic_load(&wait_result) == EVENTLOG_SOCKET_EINTR, "first: a SIGINT ends it (%d)",
       atomic_load(&wait_result));
    stop(s);
}
