/* SPDX-License-Identifier: BSD-3-Clause */
/* What the unit tests that drive a real server share: a Unix-socket
 * client, a sleep, and valid eventlog blocks to submit. */
#ifndef SERVER_UTIL_H
#define SERVER_UTIL_H

#include "format/es_header.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define UTIL_UNUSED __attribute__((unused))

/* A connected client socket, or -1. */
UTIL_UNUSED static int connect_unix(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

UTIL_UNUSED static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A valid block (capability 0) of `nevents` user messages of `len` bytes
 * each, stamped `time`; malloc'd, its size in *out_len. */
UTIL_UNUSED static unsigned char *make_block(size_t nevents, size_t len, uint64_t time,
                                             size_t *out_len) {
    size_t size = ES_BLOCK_MARKER_LEN + nevents * (12 + len);
    unsigned char *b = calloc(1, size);
    es_put_block_marker(b, time, (uint32_t)size, time + 1, 0);
    unsigned char *e = b + ES_BLOCK_MARKER_LEN;
    for (size_t i = 0; i < nevents; i++, e += 12 + len) {
        es_put_be(e, ES_EVENT_USER_MSG, 2);
        es_put_be(e + 2, time, 8);
        es_put_be(e + 10, len, 2);
        memset(e + 12, 'm', len);
    }
    *out_len = size;
    return b;
}

#endif
