/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* memmem */
/* The test-suite's client of the library's Unix socket: connect, read
 * until a string shows in the stream, send a frame. Plain POSIX, so the
 * test needs no package beyond base.
 *
 * Thread: the test's calling thread (safe foreign calls). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* What Main.hs imports (foreign import ccall): declared here, as there is
 * no header for Haskell to include. */
int tap_connect(const char *path);
long tap_read_until(int fd, const char *needle, int timeout_ms, char *first4);
int tap_send(int fd, const char *data, int len);
void tap_close(int fd);

int tap_connect(const char *path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path)
        return -1;
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read from fd until `needle` has arrived, the stream ends or timeout_ms
 * pass. The stream's first 4 bytes go to first4. Returns the bytes read
 * when the needle came, -1 otherwise. */
long tap_read_until(int fd, const char *needle, int timeout_ms, char *first4) {
    size_t nlen = strlen(needle);
    char buf[65536];
    size_t keep = 0; /* bytes carried over, so a needle across reads counts */
    long total = 0;
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t n = read(fd, buf + keep, sizeof buf - keep);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        for (long i = total; i < 4 && i < total + n; i++)
            first4[i] = buf[keep + (size_t)(i - total)];
        total += n;
        size_t have = keep + (size_t)n;
        if (memmem(buf, have, needle, nlen) != NULL)
            return total;
        keep = have < nlen ? have : nlen - 1;
        memmove(buf, buf + have - keep, keep);
    }
}

int tap_send(int fd, const char *data, int len) {
    return write(fd, data, (size_t)len) == (ssize_t)len ? 0 : -1;
}

void tap_close(int fd) {
    close(fd);
}
