/* SPDX-License-Identifier: BSD-3-Clause */
/* many-clients: connect many clients to an eventlog-socket server at once,
 * in C so that a test measures the server and not its clients.
 *
 *   many-clients (--unix PATH | --tcp PORT | --file PATH) [--readers N]
 *                [--stalled M] [--timeout SECONDS] [--save FILE]
 *                [--stagger-ms MS] [--lossless] [--read-mbps R] [--tag TAG]
 *
 * Connects N reading clients, then M clients that never read, back to
 * back. Each reader reads its stream to EOF, parsed as it arrives by the
 * library's own stream reader (cbits/format/es_stream.h): it must start with the
 * header and end with the end-of-data marker. --save writes the first
 * reader's stream to FILE; --stagger-ms waits that long before each
 * stalled client connects, so that they join at different places in the
 * stream. --lossless makes each reader ask for lossless delivery (the
 * control frame GCTL 0x06) as it connects; --read-mbps makes each reader
 * read at most R MB/s, like a client that parses slowly; --tag counts the
 * user messages (traceEvent) that begin with TAG in each reader's stream;
 * --file reads a recorded eventlog as one reader would. Prints one line per
 * failed client, a line per reader with its counts, and a closing
 * line; exit status 0 when every connect succeeded and every reader got a
 * complete stream, 1 otherwise, 2 for a usage error. */
#define _GNU_SOURCE
#include "format/es_stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct reader {
    int fd;
    bool done;
    int result; /* es_stream_finish */
    uint64_t bytes, drop_notices, tagged;
    struct es_stream stream;
};

static const char *unix_path, *file_path, *tag = "";
static size_t tag_len;
static int tcp_port = -1;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A blocking connect that gives up after 5 s (a full backlog makes a Unix
 * connect wait; a dropped SYN makes TCP retry). -1 on failure. */
static int connect_one(void) {
    int fd = socket(unix_path ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int r;
    if (unix_path) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        strncpy(a.sun_path, unix_path, sizeof a.sun_path - 1);
        r = connect(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)tcp_port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        r = connect(fd, (struct sockaddr *)&a, sizeof a);
    }
    if (r != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void connect_stalled(int *stalled, long i, long *failed) {
    stalled[i] = connect_one();
    if (stalled[i] < 0) {
        (*failed)++;
        printf("stalled client %ld: connect failed: %s\n", i, strerror(errno));
    }
}

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct reader *r = ctx;
    static const char notice[] = "eventlog-socket: dropped ";
    if (ev->type != ES_EVENT_USER_MSG)
        return;
    if (ev->payload_len >= sizeof notice - 1 && memcmp(ev->payload, notice, sizeof notice - 1) == 0)
        r->drop_notices++;
    else if (tag_len > 0 && ev->payload_len >= tag_len && memcmp(ev->payload, tag, tag_len) == 0)
        r->tagged++;
}

int main(int argc, char **argv) {
    long nreaders = 1, nstalled = 0;
    double timeout = 60;
    const char *save = NULL;
    long stagger_ms = 0;
    bool lossless = false;
    double read_mbps = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--lossless") == 0) {
            lossless = true;
            continue;
        }
        if (v == NULL)
            goto usage;
        if (strcmp(a, "--unix") == 0)
            unix_path = v;
        else if (strcmp(a, "--tcp") == 0)
            tcp_port = atoi(v);
        else if (strcmp(a, "--readers") == 0)
            nreaders = atol(v);
        else if (strcmp(a, "--stalled") == 0)
            nstalled = atol(v);
        else if (strcmp(a, "--timeout") == 0)
            timeout = atof(v);
        else if (strcmp(a, "--save") == 0)
            save = v;
        else if (strcmp(a, "--stagger-ms") == 0)
            stagger_ms = atol(v);
        else if (strcmp(a, "--read-mbps") == 0)
            read_mbps = atof(v);
        else if (strcmp(a, "--tag") == 0)
            tag = v;
        else if (strcmp(a, "--file") == 0)
            file_path = v;
        else
            goto usage;
        i++;
    }
    tag_len = strlen(tag);
    if ((unix_path != NULL) + (tcp_port >= 0) + (file_path != NULL) != 1 || nreaders < 0 ||
        nstalled < 0)
        goto usage;
    if (file_path != NULL) {
        nreaders = 1;
        nstalled = 0;
    }

    /* Two descriptors per client pair (ours and the server's) may exceed
     * the usual soft limit of 1024. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    double deadline = now_s() + timeout;
    struct reader *readers = calloc((size_t)nreaders + 1, sizeof *readers);
    int *stalled = calloc((size_t)nstalled + 1, sizeof *stalled);
    long connect_failed = 0;
    double t0 = now_s();
    for (long i = 0; i < nreaders; i++) {
        readers[i].fd = file_path ? open(file_path, O_RDONLY | O_CLOEXEC) : connect_one();
        es_stream_init(&readers[i].stream);
        if (lossless && readers[i].fd >= 0 && write(readers[i].fd, "GCTL\x06", 5) != 5) {
            close(readers[i].fd);
            readers[i].fd = -1;
        }
        if (readers[i].fd < 0) {
            connect_failed++;
            readers[i].done = true;
            readers[i].result = -ECONNREFUSED;
            printf("reader %ld: connect failed: %s\n", i, strerror(errno));
        }
    }
    /* Stalled clients connect now, or one every stagger_ms while the
     * readers read (below). */
    long nconnected = 0;
    while (stagger_ms == 0 && nconnected < nstalled)
        connect_stalled(stalled, nconnected++, &connect_failed);
    double t_connect = now_s() - t0, next_connect = now_s() + (double)stagger_ms / 1000;

    int ep = epoll_create1(EPOLL_CLOEXEC);
    long open_readers = 0;
    for (long i = 0; i < nreaders; i++) {
        if (readers[i].fd < 0)
            continue;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &readers[i]};
        if (file_path == NULL)
            epoll_ctl(ep, EPOLL_CTL_ADD, readers[i].fd, &e);
        open_readers++;
    }
    FILE *out = save ? fopen(save, "wb") : NULL;
    static uint8_t buf[1 << 18];
    struct epoll_event evs[256];
    while ((open_readers > 0 || nconnected < nstalled) && now_s() < deadline) {
        if (nconnected < nstalled && now_s() >= next_connect) {
            connect_stalled(stalled, nconnected++, &connect_failed);
            next_connect += (double)stagger_ms / 1000;
            if (nconnected == nstalled)
                t_connect = now_s() - t0;
        }
        int wait_ms = nconnected < nstalled ? (int)stagger_ms : 200;
        int n;
        if (file_path != NULL) {
            /* A regular file is always readable: no epoll for it. */
            evs[0].data.ptr = &readers[0];
            n = 1;
        } else {
            n = epoll_wait(ep, evs, 256, wait_ms);
        }
        for (int k = 0; k < n; k++) {
            struct reader *r = evs[k].data.ptr;
            /* A slow reader: no more than read_mbps on average since it
             * began, which is how a client that parses slowly reads. */
            double ahead =
                read_mbps > 0 ? (double)r->bytes / (read_mbps * 1e6) - (now_s() - t0) : 0;
            if (ahead > 0) {
                struct timespec ts = {(time_t)ahead, (long)((ahead - (double)(time_t)ahead) * 1e9)};
                if (ahead > 0.05)
                    ts = (struct timespec){0, 50000000L};
                nanosleep(&ts, NULL);
                continue;
            }
            size_t want = sizeof buf;
            if (read_mbps > 0 && want > 65536)
                want = 65536;
            ssize_t got = read(r->fd, buf, want);
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (got > 0) {
                struct es_stream_callbacks cb = {.on_event = on_event, .ctx = r};
                r->bytes += (uint64_t)got;
                es_stream_feed(&r->stream, buf, (size_t)got, &cb);
                if (out && r == &readers[0])
                    fwrite(buf, 1, (size_t)got, out);
                continue;
            }
            r->done = true;
            r->result = es_stream_finish(&r->stream);
            close(r->fd);
            open_readers--;
        }
    }
    if (out)
        fclose(out);
    long complete = 0, cut = 0, bad = 0, unfinished = 0;
    uint64_t notices = 0;
    for (long i = 0; i < nreaders; i++) {
        struct reader *r = &readers[i];
        if (!r->done) {
            unfinished++;
            printf("reader %ld: no EOF within %.0f s (%llu bytes so far)\n", i, timeout,
                   (unsigned long long)r->bytes);
        } else if (r->result == 0) {
            complete++;
        } else if (r->fd >= 0) {
            *(r->result == -EPIPE ? &cut : &bad) += 1;
            printf("reader %ld: %s at byte %llu\n", i, r->stream.error,
                   (unsigned long long)r->stream.error_offset);
        }
        notices += r->drop_notices;
        printf("reader %ld: %llu bytes, %llu drop notices, %llu tagged\n", i,
               (unsigned long long)r->bytes, (unsigned long long)r->drop_notices,
               (unsigned long long)r->tagged);
        es_stream_destroy(&r->stream);
    }
    for (long i = 0; i < nconnected; i++)
        if (stalled[i] >= 0)
            close(stalled[i]);
    printf("many-clients: %ld readers: %ld complete, %ld cut, %ld malformed, %ld unfinished; "
           "%ld stalled; %ld connects failed; %llu drop notices; connecting took %.2f s\n",
           nreaders, complete, cut, bad, unfinished, nstalled, connect_failed,
           (unsigned long long)notices, t_connect);
    return complete == nreaders && connect_failed == 0 ? 0 : 1;
usage:
    fprintf(stderr, "usage: many-clients (--unix PATH | --tcp PORT | --file PATH) [--readers N] "
                    "[--stalled M] [--timeout SECONDS] [--save FILE] [--stagger-ms MS] "
                    "[--lossless] [--read-mbps R] [--tag TAG]\n");
    return 2;
}
