/* SPDX-License-Identifier: BSD-3-Clause */
/* A benchmark client: connect to a Unix socket (waiting for it to appear)
 * and read until EOF, or with --stall never read and wait to be killed, or
 * with --census-flood read while sending heap census requests ("GCTL\x03")
 * as fast as the socket takes them. Prints the number of bytes read. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* One read into `buf`, counted; returns false at EOF or on an error. */
static bool read_some(int fd, char *buf, size_t size, unsigned long long *total) {
    ssize_t n = read(fd, buf, size);
    if (n > 0)
        *total += (unsigned long long)n;
    return n > 0 || (n < 0 && errno == EINTR);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: drain SOCKET [--stall | --census-flood]\n");
        return 2;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    int fd = -1;
    for (int tries = 0; tries < 20000; tries++) { /* 20 s */
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            break;
        close(fd);
        fd = -1;
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (fd < 0) {
        fprintf(stderr, "drain: cannot connect to %s\n", argv[1]);
        return 1;
    }
    if (argc > 2 && strcmp(argv[2], "--stall") == 0) {
        for (;;)
            pause();
    }
    static char buf[1 << 20];
    unsigned long long total = 0;
    if (argc > 2 && strcmp(argv[2], "--census-flood") == 0) {
        static char frames[5 * 4096];
        for (size_t i = 0; i < sizeof frames; i += 5)
            memcpy(frames + i, "GCTL\x03", 5);
        for (;;) {
            struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
            if (poll(&p, 1, -1) < 0 && errno != EINTR)
                break;
            if (p.revents & POLLOUT)
                (void)send(fd, frames, sizeof frames, MSG_DONTWAIT | MSG_NOSIGNAL);
            if ((p.revents & (POLLIN | POLLHUP | POLLERR)) &&
                !read_some(fd, buf, sizeof buf, &total))
                break;
        }
        printf("%llu\n", total);
        return 0;
    }
    while (read_some(fd, buf, sizeof buf, &total))
        ;
    printf("%llu\n", total);
    return 0;
}
