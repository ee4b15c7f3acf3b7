/* SPDX-License-Identifier: BSD-3-Clause */
/* The whole server without GHC: real Unix sockets, real clients, chunks
 * from a recorded eventlog submitted as the RTS would. Runs under ASan. */
#define _GNU_SOURCE
#define EVENTLOG_SOCKET_NO_RTS
/* For SCHED_BATCH. */
#define _GNU_SOURCE
#include "eventlog_socket.h"
#include "delivery/es_client.h"
#include "delivery/es_defs.h"
#include "format/es_events.h"
#include "delivery/es_pool.h"
#include "server/es_server.h"
#include "server_util.h"
#include "../unit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char sock_path[4096];

/* The recorded eventlog (`len` bytes), its header (`hlen` bytes), its first
 * block (`b1` bytes) and the rest (its second block and the end marker). */
static unsigned char *eventlog;
static struct es_header *h;
static size_t len, hlen, b1, rest;

/* What every case starts from: the socket's path, the recording, and the
 * configuration the first server had (a 500 ms linger). */
static void start_case(struct es_config *cfg) {
    snprintf(sock_path, sizeof sock_path, "%s/srv.sock", unit_tmpdir());
    eventlog = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    h = malloc(sizeof *h);
    if (es_header_parse(eventlog, len, h) != 0)
        unit_bail("the recorded eventlog's header does not parse");
    hlen = h->len;
    b1 = es_be32(eventlog + hlen + 10);
    rest = len - hlen - b1;
    es_config_defaults(cfg);
    cfg->linger_ms = 500;
}

static void finish_case(void) {
    free(h);
    free(eventlog);
}

static pthread_mutex_t cmd_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t cmds[16];
static size_t ncmds;

static void on_command(uint8_t cmd, void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&cmd_lock);
    if (ncmds < sizeof cmds)
        cmds[ncmds] = cmd;
    ncmds++;
    pthread_mutex_unlock(&cmd_lock);
}

/* Read until EOF (or an error), at most `cap` bytes kept; bounded by a
 * 10 s poll timeout so a bug cannot hang the test. With `so_far`, the
 * bytes kept until now are published there as they come. */
static size_t read_counting(int fd, unsigned char *buf, size_t cap, atomic_size_t *so_far) {
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            break;
        unsigned char tmp[65536];
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r <= 0)
            break;
        size_t keep = (size_t)r <= cap - n ? (size_t)r : cap - n;
        memcpy(buf + n, tmp, keep);
        n += keep;
        if (so_far != NULL)
            atomic_store(so_far, n);
    }
    return n;
}

static size_t read_all(int fd, unsigned char *buf, size_t cap) {
    return read_counting(fd, buf, cap, NULL);
}

static void *stop_thread(void *arg) {
    es_server_stop(arg);
    return NULL;
}

/* Two clients, the header and first block before either: the first gets
 * everything, the later one the definitions it missed and the rest. */
UNIT_CASE(server_two_clients) {
    struct es_config cfg;
    start_case(&cfg);
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server started");
#ifdef SCHED_BATCH
    int wpol = -1, lpol = -1;
    struct sched_param sp;
    uv_thread_t walker, loop;
    es_server_threads(s, &walker, &loop);
    pthread_getschedparam(walker, &wpol, &sp);
    pthread_getschedparam(loop, &lpol, &sp);
    ok(wpol == SCHED_BATCH && lpol == SCHED_BATCH,
       "walker and loop threads run as SCHED_BATCH (%d, %d)", wpol, lpol);
#endif

    /* Header and first block arrive before any client (a stale block
     * marker in front of the header must be removed). */
    unsigned char *stale = malloc(24 + hlen);
    memset(stale, 0, 24);
    stale[1] = 18;
    memcpy(stale + 24, eventlog, hlen);
    es_server_submit(s, stale, 24 + hlen);
    es_server_submit(s, eventlog + hlen, b1);

    int a = connect_unix(sock_path);
    ok(a >= 0 && es_server_wait_client(s) == 0, "first client connected");
    ok(write(a, "GCTL\x03xxGCTL\x01", 12) == 12, "client A sent two frames");
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&cmd_lock);
        size_t n = ncmds;
        pthread_mutex_unlock(&cmd_lock);
        if (n >= 2)
            break;
        sleep_ms(10);
    }
    pthread_mutex_lock(&cmd_lock);
    ok(ncmds == 2 && cmds[0] == 3 && cmds[1] == 1, "commands 3 then 1 arrived (%zu)", ncmds);
    pthread_mutex_unlock(&cmd_lock);

    /* B must join after the first block reached the loop thread (through
     * the walker), or it would get it as a later chunk: wait until nothing
     * is in flight. */
    for (int i = 0; i < 500 && es_server_in_flight(s) > 0; i++)
        sleep_ms(10);
    int b = connect_unix(sock_path);
    /* B must be accepted before the last chunk, or it would get that chunk
     * as part of its catch-up: wait for the loop to count it (a fixed sleep
     * was too short once on a loaded machine). */
    for (int i = 0; i < 500 && atomic_load(&es_server_counters(s)->clients_accepted) < 2; i++)
        sleep_ms(10);
    ok(atomic_load(&es_server_counters(s)->clients_accepted) == 2, "second client accepted");
    es_server_submit(s, eventlog + hlen + b1, rest);
    es_server_stop(s);
    struct stat st;
    ok(lstat(sock_path, &st) != 0, "socket file removed at stop");

    unsigned char *got = malloc(2 * len);
    size_t na = read_all(a, got, 2 * len);
    ok(na == len && memcmp(got, eventlog, len) == 0,
       "first client got header + everything, stale marker removed (%zu of %zu)", na, len);
    /* The later client missed the first block: it gets the header, the
     * definitions from that block (checked in detail below), then only the
     * later chunks. */
    size_t nb = read_all(b, got, 2 * len);
    size_t bdefs = nb > hlen + 24 ? es_be32(got + hlen + 10) : 0;
    ok(nb == hlen + bdefs + rest && memcmp(got, eventlog, hlen) == 0 &&
           es_be16(got + hlen + 22) == 0xffff &&
           memcmp(got + hlen + bdefs, eventlog + hlen + b1, rest) == 0,
       "later client got header + definitions + later chunks only (%zu bytes)", nb);
    close(a);
    close(b);
    ok(es_server_wait_client(s) == 0, "wait after stop still reports the client");
    es_server_free(s);
    free(got);
    free(stale);
    finish_case();
}

/* With the disconnect policy, a client that never reads is disconnected
 * once it has stayed past its limit for its stall time, while the program
 * runs; stop then does not wait for it. */
UNIT_CASE(server_disconnect_policy) {
    struct es_config cfg;
    start_case(&cfg);
    struct es_server *s = NULL;
    size_t blen;
    unsigned char *block = make_block(1000, 1000, 0, &blen); /* ~1 MiB */
    unsigned char *got = malloc(2 * len);
    cfg.client_limit = 256 << 10;
    cfg.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, hlen);
    int c = connect_unix(sock_path);
    es_server_wait_client(s);
    for (int i = 0; i < 16; i++)
        es_server_submit(s, block, blen);
    /* Its stall time is 250 ms: 30 s is for a starved loop thread. */
    for (int i = 0; i < 3000 && atomic_load(&es_server_counters(s)->clients_lagged) == 0; i++)
        sleep_ms(10);
    ok(atomic_load(&es_server_counters(s)->clients_lagged) == 1,
       "the stalled client was disconnected for lag while the program ran");
    es_server_stop(s);
    ok(atomic_load(&es_server_counters(s)->clients_connected) == 0, "no client left at stop");
    size_t nc = read_all(c, got, 2 * len);
    ok(nc >= hlen && memcmp(got, eventlog, hlen) == 0, "it had received the header first");
    close(c);
    es_server_free(s);
    free(got);
    free(block);
    finish_case();
}

/* A reader of its own stream, to EOF, kept (32 MiB at most). */
struct keeper {
    int fd;
    unsigned char *got;
    size_t n;
    atomic_size_t so_far; /* read until now */
    pthread_t thread;
};

static void *keep_thread(void *arg) {
    struct keeper *k = arg;
    k->n = read_counting(k->fd, k->got, 32u << 20, &k->so_far);
    return NULL;
}

/* The disconnect policy and a burst the loop thread could not hand out
 * as it came (held up here through the test hook, on a busy machine by
 * the scheduler): the burst is past every client's limit at once, yet
 * only the client that does not read is disconnected; the one that reads
 * takes the burst at its own pace and gets all of it. */
UNIT_CASE(server_disconnect_spares_a_reader) {
    struct es_config cfg;
    start_case(&cfg);
    cfg.linger_ms = 6000; /* a stall time of 3 s: a loaded machine starves the reader */
    cfg.client_limit = 1u << 20;
    cfg.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT;
    struct es_server *s = NULL;
    size_t blen;
    unsigned char *block = make_block(1000, 1000, 0, &blen); /* ~1 MiB */
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, hlen);
    struct keeper r = {.fd = connect_unix(sock_path), .got = malloc(32u << 20)};
    es_server_wait_client(s);
    int idle = connect_unix(sock_path);
    for (int i = 0; i < 3000 && atomic_load(&es_server_counters(s)->clients_connected) < 2; i++)
        sleep_ms(10);
    pthread_create(&r.thread, NULL, keep_thread, &r);
    /* It has read (its header): it is judged as a reader, by the stall
     * time, not as a client that never read (ES_EXIT_NEVER_READ_MS). */
    for (int i = 0; i < 3000 && atomic_load(&r.so_far) < hlen; i++)
        sleep_ms(10);
    es_server_debug_block(s, 60000);
    for (int i = 0; i < 3000 && !es_server_debug_blocked(s); i++)
        sleep_ms(10);
    ok(es_server_debug_blocked(s), "two clients, the loop thread held up");
    for (int i = 0; i < 8; i++) /* within the hand-off's limit: nothing is dropped there */
        es_server_submit(s, block, blen);
    es_server_debug_release(s);
    for (int i = 0; i < 3000 && atomic_load(&es_server_counters(s)->clients_lagged) == 0; i++)
        sleep_ms(10);
    sleep_ms(3500); /* a stall time more, for a wrong verdict on the reader */
    ok(atomic_load(&es_server_counters(s)->clients_lagged) == 1,
       "one client disconnected for lag (%llu), after a burst of 8 MiB past both limits (1 MiB)",
       (unsigned long long)atomic_load(&es_server_counters(s)->clients_lagged));
    es_server_submit(s, "\xff\xff", 2);
    es_server_stop(s);
    pthread_join(r.thread, NULL);
    struct es_chunk_info info;
    ok(r.n == hlen + 8 * blen + 2 && memcmp(r.got, eventlog, hlen) == 0 &&
           es_events_inspect(h, r.got + hlen, r.n - hlen, &info, NULL, NULL, NULL) == 0 &&
           info.has_end,
       "the reader got the whole burst and the end marker (%zu of %zu bytes)", r.n,
       hlen + 8 * blen + 2);
    unsigned char *rest_of_idle = malloc(32u << 20);
    size_t ni = read_all(idle, rest_of_idle, 32u << 20);
    ok(ni < hlen + 8 * blen, "the idle client's stream was cut (%zu bytes)", ni);
    close(r.fd);
    close(idle);
    es_server_free(s);
    free(rest_of_idle);
    free(r.got);
    free(block);
    finish_case();
}

/* With the drop policy, a client that stalls and then reads gets a
 * parseable stream with a notice where chunks were skipped. */
UNIT_CASE(server_drop_policy) {
    struct es_config cfg;
    start_case(&cfg);
    cfg.client_limit = 256 << 10;
    struct es_server *s = NULL;
    size_t blen;
    unsigned char *block = make_block(1000, 1000, 0, &blen); /* ~1 MiB */
    cfg.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DROP;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, hlen);
    int e = connect_unix(sock_path);
    es_server_wait_client(s);
    for (int i = 0; i < 16; i++)
        es_server_submit(s, block, blen);
    es_server_submit(s, "\xff\xff", 2);
    sleep_ms(300); /* the chunks reach the loop while e does not read */
    uint64_t dropped = atomic_load(&es_server_counters(s)->chunks_dropped);
    ok(dropped > 0 && atomic_load(&es_server_counters(s)->clients_lagged) == 0,
       "chunks dropped for the stalled client (%llu), not disconnected",
       (unsigned long long)dropped);
    size_t cap = 32u << 20;
    unsigned char *all = malloc(cap);
    /* It reads before the stop begins: a client that has never read
     * anything when the program exits is not waited for (that rule has its
     * own test), and on a slow machine the stop could win the race. */
    ssize_t first = read(e, all, 65536);
    pthread_t stopper;
    pthread_create(&stopper, NULL, stop_thread, s);
    size_t ne = (first > 0 ? (size_t)first : 0);
    ne += read_all(e, all + ne, cap - ne);
    pthread_join(stopper, NULL);
    struct es_chunk_info info;
    ok(ne > hlen && memcmp(all, eventlog, hlen) == 0 &&
           es_events_inspect(h, all + hlen, ne - hlen, &info, NULL, NULL, NULL) == 0 &&
           info.has_end,
       "its stream walks cleanly to the end marker (%zu bytes)", ne);
    /* The notices together account for every dropped chunk. */
    unsigned long long noted = 0, k;
    const char *tag = "eventlog-socket: dropped ";
    for (unsigned char *p = all; (p = memmem(p, ne - (size_t)(p - all), tag, strlen(tag))); p++)
        if (sscanf((const char *)p + strlen(tag), "%llu", &k) == 1)
            noted += k;
    ok(noted == dropped, "its notices count %llu dropped chunks, the server %llu", noted,
       (unsigned long long)dropped);
    /* The skipped chunks' buffers were lent to the pool for the RTS; once
     * the client caught up, the pool gave the extra ones back. */
    ok(es_pool_fitting(blen) <= ES_POOL_MAX, "the pool holds %zu buffers again (at most %d)",
       es_pool_fitting(blen), ES_POOL_MAX);
    /* Walk the blocks: data blocks (capability 0) and notices (global). */
    size_t data_bytes = 0, notices = 0;
    for (size_t pos = hlen; pos + 2 < ne;) {
        size_t bl = es_be32(all + pos + 10);
        if (es_be16(all + pos + 22) == 0xffff)
            notices++;
        else
            data_bytes += bl;
        pos += bl;
    }
    ok(notices >= 1 && data_bytes + atomic_load(&es_server_counters(s)->bytes_dropped) == 16 * blen,
       "delivered + dropped bytes = submitted (%zu notices)", notices);
    close(e);
    es_server_free(s);
    free(all);
    free(block);
    finish_case();
}

/* The global bound: a stalled client with a generous own limit still
 * cannot make the server hold more than max_buffer plus what its
 * unfinished write pins. */
UNIT_CASE(server_global_bound) {
    struct es_config cfg;
    start_case(&cfg);
    cfg.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DROP;
    struct es_server *s = NULL;
    size_t blen;
    unsigned char *block = make_block(1000, 1000, 0, &blen); /* ~1 MiB */
    cfg.client_limit = 64u << 20;
    cfg.max_buffer = 4u << 20;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, hlen);
    int g = connect_unix(sock_path);
    es_server_wait_client(s);
    for (int i = 0; i < 64; i++)
        es_server_submit(s, block, blen);
    sleep_ms(300);
    uint64_t peak = atomic_load(&es_server_counters(s)->bytes_held_peak);
    ok(peak <= cfg.max_buffer + ES_CLIENT_MAX_WRITE + 2 * blen,
       "peak held %.1f MiB within the 4 MiB bound plus one write", (double)peak / (1 << 20));
    ok(atomic_load(&es_server_counters(s)->chunks_dropped) > 0, "by dropping chunks");
    es_server_stop(s);
    close(g);
    es_server_free(s);
    free(block);
    finish_case();
}

/* A late joiner gets the definitions it missed, in one global block
 * right after the header. */
UNIT_CASE(server_late_joiner) {
    struct es_config cfg;
    start_case(&cfg);
    struct es_server *s = NULL;
    unsigned char *got = malloc(2 * len);
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    int early = connect_unix(sock_path);
    es_server_wait_client(s);
    es_server_submit(s, eventlog, hlen);
    es_server_submit(s, eventlog + hlen, b1);
    /* The first block reached the early client (so the library has its
     * definitions) before the late one connects, and the late one is in
     * before the rest comes: waited for, not slept (a loaded machine). */
    for (int i = 0; i < 3000 && atomic_load(&es_server_counters(s)->bytes_sent) < hlen + b1; i++)
        sleep_ms(10);
    int late = connect_unix(sock_path);
    for (int i = 0; i < 3000 && atomic_load(&es_server_counters(s)->clients_connected) < 2; i++)
        sleep_ms(10);
    es_server_submit(s, eventlog + hlen + b1, rest);
    es_server_stop(s);
    size_t nl = read_all(late, got, 2 * len);
    ok(nl > hlen + 24 && memcmp(got, eventlog, hlen) == 0 && es_be16(got + hlen) == 18 &&
           es_be16(got + hlen + 22) == 0xffff,
       "late joiner: header, then a global block");
    size_t dlen = es_be32(got + hlen + 10);
    /* The block holds exactly the fixture's definition events, in order. */
    unsigned char *want_defs = malloc(len);
    size_t nwant = 0;
    struct es_event_iter it;
    struct es_event ev;
    es_events_iter_init(&it, h, eventlog + hlen, b1);
    while (es_events_next(&it, &ev) == ES_WALK_EVENT)
        if (es_defs_is_definition(ev.type)) {
            memcpy(want_defs + nwant, eventlog + hlen + ev.offset, ev.len);
            nwant += ev.len;
        }
    ok(nwant > 0 && dlen == 24 + nwant && memcmp(got + hlen + 24, want_defs, nwant) == 0,
       "with the %zu bytes of definition events of the first block", nwant);
    ok(nl == hlen + dlen + rest && memcmp(got + hlen + dlen, eventlog + hlen + b1, rest) == 0,
       "then the chunks after it joined");
    size_t ne2 = read_all(early, got, 2 * len);
    ok(ne2 == len && memcmp(got, eventlog, len) == 0, "the early client got the plain stream");
    free(want_defs);
    close(late);
    close(early);
    es_server_free(s);
    free(got);
    finish_case();
}

/* A client with a big limit that stalls: stop gives up after linger. */
UNIT_CASE(server_stop_leaves_stalled) {
    struct es_config cfg;
    start_case(&cfg);
    struct es_server *s = NULL;
    size_t blen;
    unsigned char *block = make_block(1000, 1000, 0, &blen); /* ~1 MiB */
    cfg.client_limit = 64u << 20;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, hlen);
    int d = connect_unix(sock_path);
    es_server_wait_client(s);
    for (int i = 0; i < 16; i++)
        es_server_submit(s, block, blen);
    es_server_stop(s);
    ok(atomic_load(&es_server_counters(s)->clients_connected) == 0 &&
           atomic_load(&es_server_counters(s)->clients_lagged) == 0,
       "stop did not wait for the client that stopped reading");
    close(d);
    es_server_free(s);
    free(block);
    finish_case();
}

/* No client ever: stop is immediate and wait reports the stop. */
UNIT_CASE(server_no_client_ever) {
    struct es_config cfg;
    start_case(&cfg);
    cfg.client_limit = 64u << 20;
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, eventlog, len);
    es_server_stop(s);
    ok(es_server_wait_client(s) == EVENTLOG_SOCKET_ESTOPPED, "wait reports a stopped server");
    es_server_free(s);
    finish_case();
}
