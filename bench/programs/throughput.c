/* SPDX-License-Identifier: BSD-3-Clause */
/* Throughput and RTS-side cost of the writer, without a Haskell program:
 * threads call SocketEventLogWriter.writeEventLog directly with 2 MiB
 * blocks, as capabilities do, and clients in this process read them over a
 * Unix socket. References measured the same way in the same process: raw
 * Unix-socket throughput (a writer writing the same blocks straight to the
 * client sockets) and memcpy of a block into memory already faulted in
 * (what a writer must at least do to keep the data, without the cost of
 * finding that memory).
 *
 *   throughput socket CLIENTS MIB WRITERS [WINDOW_MIB]
 *                                           through eventlog-socket
 *   throughput cost MIB WRITERS             the same with one client, also
 *                                           timing the reference copy
 *   throughput stalled MIB WRITERS [MB_PER_S]
 *                                           one client that never reads;
 *                                           writers paced to MB_PER_S in all
 *   throughput raw CLIENTS MIB              straight to the sockets
 *   throughput direct MIB PAUSE_US [SNDBUF_KIB]
 *                                           how much of each block a
 *                                           non-blocking send takes
 *   throughput memcpy COUNT                 memcpy of a block
 *
 * In "socket" mode a writer waits while more than WINDOW_MIB (default 4,
 * two blocks) is in the library, received but not yet sent (they read
 * eventlog_socket_stats between calls; see wait_for_window): like the raw
 * writer, which a full socket buffer holds back, they then measure
 * sustained delivery, not how fast memory can fill. The default keeps both
 * writers' blocks in flight with no backlog behind them, which is where a
 * real program is: it produces far less than either. A larger window
 * measures delivery from a backlog, e.g. after a client fell behind; the
 * blocks in flight then no longer fit in the caches. In "stalled" mode
 * nothing holds them back.
 *
 * In "cost" and "stalled" modes each writer also times a plain
 * memcpy of the same block right before each writeEventLog call, into a
 * buffer of its own that stays faulted in, so the reference copy runs under
 * exactly the same load (threads, cores,
 * caches) as the call it is compared with. "socket" mode leaves it out: it
 * would take as much CPU as the library's own copy.
 *
 * Prints one JSON object (the clocks and the report of a run in
 * throughput_report.c). Linked by ghc (-no-hs-main) for the RTS symbols
 * the library refers to; the RTS itself is never started. */
#define _GNU_SOURCE
#include <Rts.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "eventlog_socket.h"
#include "throughput.h"

#define BLOCK (2u << 20)
#define MSG   100

static void put_be(uint8_t *p, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* A header declaring the block marker and user messages. */
static size_t make_header(uint8_t *h) {
    size_t n = 0;
    memcpy(h + n, "hdrbhetb", 8), n += 8;
    const struct {
        uint16_t id, size;
        const char *desc;
    } types[] = {{18, 14, "Block marker"}, {19, 0xffff, "User message"}};
    for (int i = 0; i < 2; i++) {
        memcpy(h + n, "etb\0", 4), n += 4;
        put_be(h + n, types[i].id, 2), n += 2;
        put_be(h + n, types[i].size, 2), n += 2;
        size_t d = strlen(types[i].desc);
        put_be(h + n, d, 4), n += 4;
        memcpy(h + n, types[i].desc, d), n += d;
        put_be(h + n, 0, 4), n += 4;
        memcpy(h + n, "ete\0", 4), n += 4;
    }
    memcpy(h + n, "hetehdredatb", 12), n += 12;
    return n;
}

/* A block of user messages, exactly BLOCK bytes or just under. */
static size_t make_block(uint8_t *b) {
    size_t ev = 12 + MSG, count = (BLOCK - 24) / ev, len = 24 + count * ev;
    put_be(b, 18, 2);
    put_be(b + 2, 1000, 8);
    put_be(b + 10, len, 4);
    put_be(b + 14, 2000, 8);
    put_be(b + 22, 0, 2);
    for (size_t i = 0; i < count; i++) {
        uint8_t *e = b + 24 + i * ev;
        put_be(e, 19, 2);
        put_be(e + 2, 1000 + i, 8);
        put_be(e + 10, MSG, 2);
        memset(e + 12, 'x', MSG);
    }
    return len;
}

static uint64_t window = (uint64_t)4 << 20;
static double rate_mb_per_s; /* stalled mode: 0 floods */
static uint8_t header[256], *block;
static size_t header_len, block_len;
static char sock_path[64];

/* ---- clients ----------------------------------------------------------- */

struct client {
    pthread_t thread;
    int fd;
    unsigned long long bytes;
    double last;
};

static int connect_unix(void) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, sock_path, sizeof a.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        exit(1);
    }
    return fd;
}

static void *client_main(void *arg) {
    struct client *c = arg;
    static __thread char buf[1 << 20];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n <= 0)
            break;
        c->bytes += (unsigned long long)n;
        c->last = tp_now();
    }
    return NULL;
}

/* ---- the writer side ---------------------------------------------------- */

/* Sleep while more than the window is in the library, about as long as
 * the library needs to send the excess at the rate it can send: one or
 * two wake-ups per call, where the raw writer sleeps in write() until the
 * kernel wakes it. The harness must not charge its own waiting to the
 * library. Polling every 20 us did: with two busy loops running beside
 * the benchmark, the polls took a third of the process's CPU (0.48 CPU s
 * per GiB against 0.31 with this wait; 1460 against 2100 MiB/s). A longer
 * fixed poll (200 us) left the library idle when the machine was quiet. */
static void wait_for_window(struct writer *w, int clients) {
    for (bool waited = false;; waited = true) {
        struct eventlog_socket_stats st;
        eventlog_socket_stats(&st);
        uint64_t sent = st.bytes_sent / (uint64_t)clients;
        uint64_t held = st.bytes_received > sent ? st.bytes_received - sent : 0;
        double t = tp_now();
        if (waited && t > w->sent_at && sent > w->sent) {
            /* Bytes per second while the library had more than the window
             * to send all along: how fast it can send, not how fast the
             * writers fed it. Smoothed over the recent wake-ups. */
            double r = (double)(sent - w->sent) / (t - w->sent_at);
            w->rate = w->rate > 0 ? 0.5 * w->rate + 0.5 * r : r;
        }
        w->sent = sent;
        w->sent_at = t;
        if (held <= window)
            return;
        double wait = (double)(held - window) / (w->rate > 0 ? w->rate : 1e9);
        wait = wait < 10e-6 ? 10e-6 : wait > 2e-3 ? 2e-3 : wait;
        nanosleep(&(struct timespec){0, (long)(wait * 1e9)}, NULL);
    }
}

/* THROUGHPUT_COPY_SYSCALLS=1: the reference copy also makes system calls. */
static bool copy_syscalls;

/* The reference copy, timed, with the context switches it took. */
static void timed_copy(struct writer *w, size_t i) {
    long v0, i0, v1, i1;
    tp_switches_now(&v0, &i0);
    double t0 = tp_now(), c0 = tp_cpu_now();
    /* Not malloc+free: that left freshly faulted memory behind for the
     * library's own allocation right after, hiding its faults. */
    memcpy(w->ref, block, block_len);
    __asm__ volatile("" : : "r"(w->ref) : "memory");
    if (copy_syscalls) {
        /* As many system calls as writeEventLog makes (two thread CPU
         * clock reads and a futex wake-up): each is a point where the
         * kernel may switch to a thread that became runnable. */
        tp_cpu_now();
        tp_cpu_now();
        getppid();
    }
    w->copy[i] = tp_now() - t0;
    w->copy_cpu[i] = tp_cpu_now() - c0;
    tp_switches_now(&v1, &i1);
    w->copy_vol[i] = v1 - v0;
    w->copy_invol[i] = i1 - i0;
}

/* One writeEventLog call, timed, with its page faults and switches. */
static void timed_write(struct writer *w, size_t i) {
    long f1 = tp_faults_now(), v1, i1, v2, i2;
    tp_switches_now(&v1, &i1);
    double t1 = tp_now(), c1 = tp_cpu_now();
    SocketEventLogWriter.writeEventLog(block, block_len);
    w->lat[i] = tp_now() - t1;
    w->lat_cpu[i] = tp_cpu_now() - c1;
    w->faults[i] = tp_faults_now() - f1;
    tp_switches_now(&v2, &i2);
    w->vol[i] = v2 - v1;
    w->invol[i] = i2 - i1;
}

/* The reference copy and the call take turns going first: whichever runs
 * first after the writer wakes from its wait starts on a fresh time slice,
 * and the second is the one the scheduler preempts when the cores are
 * busy. Always copying first, as this harness did until 2026-11-23, made
 * the call's wall-time p99 look several times the copy's on a loaded
 * machine (BENCHMARKS.md, section 3). THROUGHPUT_COPY_FIRST=1 restores it. */
static void *writer_main(void *arg) {
    struct writer *w = arg;
    const char *order = getenv("THROUGHPUT_COPY_FIRST");
    bool always_copy_first = order != NULL && strcmp(order, "1") == 0;
    const char *sys = getenv("THROUGHPUT_COPY_SYSCALLS");
    copy_syscalls = sys != NULL && strcmp(sys, "1") == 0;
    double start = tp_now();
    for (size_t i = 0; i < w->chunks; i++) {
        if (w->period > 0) {
            double at = start + w->phase + (double)i * w->period, wait = at - tp_now();
            if (wait > 0)
                nanosleep(&(struct timespec){(time_t)wait, (long)((wait - (time_t)wait) * 1e9)},
                          NULL);
        }
        if (w->clients)
            wait_for_window(w, w->clients);
        struct eventlog_socket_stats st;
        eventlog_socket_stats(&st);
        w->dropping[i] = st.chunks_dropped > 0;
        bool copy_first = w->reference && (always_copy_first || i % 2 == 0);
        if (copy_first)
            timed_copy(w, i);
        timed_write(w, i);
        if (w->reference && !copy_first)
            timed_copy(w, i);
    }
    return NULL;
}

/* Room for a writer's record of each of its calls. */
static void writer_records(struct writer *w) {
    size_t n = w->chunks;
    w->lat = calloc(n, sizeof(double));
    w->copy = calloc(n, sizeof(double));
    w->lat_cpu = calloc(n, sizeof(double));
    w->copy_cpu = calloc(n, sizeof(double));
    w->faults = calloc(n, sizeof(long));
    w->vol = calloc(n, sizeof(long));
    w->invol = calloc(n, sizeof(long));
    w->copy_vol = calloc(n, sizeof(long));
    w->copy_invol = calloc(n, sizeof(long));
    w->dropping = calloc(n, sizeof(bool));
}

static void run_socket(int nclients, size_t mib, int nwriters, bool stall, bool reference) {
    struct socket_run r = {.nclients = nclients,
                           .nwriters = nwriters,
                           .stall = stall,
                           .reference = reference,
                           .window = window,
                           .rate_mb_per_s = rate_mb_per_s};
    struct eventlog_socket_options o;
    eventlog_socket_options_init(&o);
    /* Measure throughput, not the drop policy: hold everything. A stalled
     * client uses the defaults, as a user would have them. */
    if (!stall) {
        o.max_buffer = o.client_buffer = (size_t)8 << 30;
        o.linger_ms = 600000;
    } else {
        o.linger_ms = 200;
    }
    if (eventlog_socket_set_options(&o) != 0 || eventlog_socket_init_unix(sock_path) != 0) {
        fprintf(stderr, "throughput: cannot start eventlog-socket\n");
        exit(1);
    }
    SocketEventLogWriter.initEventLogWriter();
    SocketEventLogWriter.writeEventLog(header, header_len);
    struct client *cs = calloc((size_t)nclients, sizeof *cs);
    for (int i = 0; i < nclients; i++) {
        cs[i].fd = connect_unix();
        if (!stall)
            pthread_create(&cs[i].thread, NULL, client_main, &cs[i]);
    }
    struct eventlog_socket_stats st;
    do
        eventlog_socket_stats(&st);
    while (st.clients_connected < (uint64_t)nclients);

    size_t chunks = mib * (1u << 20) / block_len;
    struct writer *ws = calloc((size_t)nwriters, sizeof *ws);
    r.ws = ws;
    r.start = tp_now();
    double cpu_start = tp_process_cpu_now();
    for (int i = 0; i < nwriters; i++) {
        ws[i].chunks = chunks / (size_t)nwriters;
        ws[i].clients = stall ? 0 : nclients;
        if (stall && rate_mb_per_s > 0) {
            ws[i].period = (double)block_len * nwriters / (rate_mb_per_s * 1e6);
            /* The first call one period after the header, not right
             * after it: at this rate the RTS needs that long to fill its
             * first buffer. (Calling at once raced the walker's reserve of
             * a buffer for it, a race no program can produce.) */
            ws[i].phase = ws[i].period * (i + 1) / nwriters;
        }
        ws[i].reference = reference;
        if (reference) {
            ws[i].ref = malloc(block_len);
            memset(ws[i].ref, 0, block_len);
        }
        writer_records(&ws[i]);
        pthread_create(&ws[i].thread, NULL, writer_main, &ws[i]);
    }
    for (int i = 0; i < nwriters; i++) {
        pthread_join(ws[i].thread, NULL);
        r.calls += ws[i].chunks;
    }
    r.written = tp_now();
    SocketEventLogWriter.writeEventLog((void *)"\xff\xff", 2);
    SocketEventLogWriter.stopEventLogWriter(); /* delivers everything, then returns */
    for (int i = 0; i < nclients; i++) {
        if (!stall)
            pthread_join(cs[i].thread, NULL);
        close(cs[i].fd);
        r.bytes += cs[i].bytes;
        if (cs[i].last > r.last)
            r.last = cs[i].last;
    }
    r.cpu = tp_process_cpu_now() - cpu_start;
    eventlog_socket_stats(&r.st);
    tp_report_socket(&r);
}

/* Write all `len` bytes to `fd`, blocking; on an error say `what` and exit. */
static void write_all(int fd, const uint8_t *p, size_t len, const char *what) {
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, p + off, len - off);
        if (n < 0 && errno != EINTR) {
            perror(what);
            exit(1);
        }
        off += n > 0 ? (size_t)n : 0;
    }
}

static void run_raw(int nclients, size_t mib) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, sock_path, sizeof a.sun_path - 1);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 64) != 0) {
        perror("raw listen");
        exit(1);
    }
    struct client *cs = calloc((size_t)nclients, sizeof *cs);
    int *server_fds = calloc((size_t)nclients, sizeof(int));
    for (int i = 0; i < nclients; i++) {
        cs[i].fd = connect_unix();
        server_fds[i] = accept(lfd, NULL, NULL);
        pthread_create(&cs[i].thread, NULL, client_main, &cs[i]);
    }
    size_t chunks = mib * (1u << 20) / block_len;
    double start = tp_now(), cpu_start = tp_process_cpu_now();
    for (size_t k = 0; k <= chunks; k++) {
        const uint8_t *p = k == 0 ? header : block;
        size_t len = k == 0 ? header_len : block_len;
        for (int i = 0; i < nclients; i++)
            write_all(server_fds[i], p, len, "raw write");
    }
    for (int i = 0; i < nclients; i++)
        close(server_fds[i]);
    double last = 0;
    unsigned long long bytes = 0;
    for (int i = 0; i < nclients; i++) {
        pthread_join(cs[i].thread, NULL);
        close(cs[i].fd);
        bytes += cs[i].bytes;
        if (cs[i].last > last)
            last = cs[i].last;
    }
    double cpu = tp_process_cpu_now() - cpu_start;
    close(lfd);
    unlink(sock_path);
    printf("{\"mode\": \"raw\", \"clients\": %d, \"bytes\": %llu, \"seconds\": %.4f, "
           "\"mib_per_s\": %.1f, \"cpu_s_per_gib\": %.4f}\n",
           nclients, bytes, last - start, (double)bytes / nclients / (1 << 20) / (last - start),
           cpu / ((double)bytes / nclients / (1 << 30)));
}

/* What a writer that sent each block itself, without waiting, would have
 * left to copy: one client reading as in "raw"; each block is offered
 * once with MSG_DONTWAIT (what the socket takes then is what such a
 * writer need not copy), the rest written blocking, as the loop thread
 * would send it, then the writer pauses PAUSE_US, as an RTS fills its
 * next buffer (2 MiB in 20 ms at 100 MB/s; the "socket" mode's writers
 * at several GB/s pause far less). SNDBUF_KIB sets the socket's send
 * buffer (the kernel caps it at net.core.wmem_max), else the default. */
static void run_direct(size_t mib, long pause_us, int sndbuf_kib) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("direct socketpair");
        exit(1);
    }
    int sndbuf = sndbuf_kib << 10;
    socklen_t sl = sizeof sndbuf;
    if (sndbuf_kib > 0)
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl);
    struct client c = {.fd = sv[1]};
    pthread_create(&c.thread, NULL, client_main, &c);
    size_t chunks = mib * (1u << 20) / block_len, taken = 0, whole = 0;
    for (size_t k = 0; k < chunks; k++) {
        ssize_t n = send(sv[0], block, block_len, MSG_DONTWAIT);
        size_t off = n > 0 ? (size_t)n : 0;
        taken += off;
        whole += off == block_len;
        write_all(sv[0], block + off, block_len - off, "direct write");
        if (pause_us > 0)
            nanosleep(&(struct timespec){pause_us / 1000000, pause_us % 1000000 * 1000}, NULL);
    }
    close(sv[0]);
    pthread_join(c.thread, NULL);
    close(sv[1]);
    printf("{\"mode\": \"direct\", \"pause_us\": %ld, \"sndbuf\": %d, \"blocks\": %zu, "
           "\"taken_share\": %.4f, \"taken_whole\": %zu, \"bytes\": %llu}\n",
           pause_us, sndbuf, chunks, (double)taken / ((double)chunks * block_len), whole, c.bytes);
}

static void run_memcpy(size_t count) {
    double *lat = calloc(count, sizeof(double));
    uint8_t *copy = malloc(block_len);
    memset(copy, 0, block_len);
    for (size_t i = 0; i < count; i++) {
        double t = tp_now();
        memcpy(copy, block, block_len);
        lat[i] = tp_now() - t;
        /* Keep the copy observable so the compiler cannot drop it. */
        __asm__ volatile("" : : "r"(copy) : "memory");
    }
    printf("{\"mode\": \"memcpy\", ");
    tp_print_dist("copy", lat, count);
    printf("}\n");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: throughput socket CLIENTS MIB WRITERS [WINDOW_MIB] | cost MIB "
                        "WRITERS | stalled MIB WRITERS [MB_PER_S] | raw CLIENTS MIB | direct MIB "
                        "PAUSE_US [SNDBUF_KIB] | memcpy COUNT\n");
        return 2;
    }
    snprintf(sock_path, sizeof sock_path, "/tmp/es-bench-%d.sock", (int)getpid());
    header_len = make_header(header);
    block = malloc(BLOCK);
    block_len = make_block(block);
    if (strcmp(argv[1], "socket") == 0 && argc == 6)
        window = (uint64_t)atol(argv[5]) << 20;
    if (strcmp(argv[1], "socket") == 0 && (argc == 5 || argc == 6))
        run_socket(atoi(argv[2]), (size_t)atol(argv[3]), atoi(argv[4]), false, false);
    else if (strcmp(argv[1], "cost") == 0 && argc == 4)
        run_socket(1, (size_t)atol(argv[2]), atoi(argv[3]), false, true);
    else if (strcmp(argv[1], "stalled") == 0 && (argc == 4 || argc == 5)) {
        rate_mb_per_s = argc == 5 ? atof(argv[4]) : 0;
        run_socket(1, (size_t)atol(argv[2]), atoi(argv[3]), true, true);
    } else if (strcmp(argv[1], "raw") == 0 && argc == 4)
        run_raw(atoi(argv[2]), (size_t)atol(argv[3]));
    else if (strcmp(argv[1], "direct") == 0 && (argc == 4 || argc == 5))
        run_direct((size_t)atol(argv[2]), atol(argv[3]), argc == 5 ? atoi(argv[4]) : 0);
    else if (strcmp(argv[1], "memcpy") == 0)
        run_memcpy((size_t)atol(argv[2]));
    else
        return 2;
    return 0;
}
