/* SPDX-License-Identifier: BSD-3-Clause */
/* An LD_PRELOAD shim that plays a loaded machine's scheduler for the tests
 * of the eventlog-socket command: after every successful write to a socket
 * (write, writev, send, sendmsg) the calling thread sleeps SLOWSEND_MS
 * milliseconds (default 0: no effect), as a process may lose its core right
 * after it sends while the program it sent to goes on. Each sleep adds a
 * line to SLOWSEND_LOG, if set, so that a test knows the shim acted. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t write_fn(int, const void *, size_t);
typedef ssize_t writev_fn(int, const struct iovec *, int);
typedef ssize_t send_fn(int, const void *, size_t, int);
typedef ssize_t sendmsg_fn(int, const struct msghdr *, int);

static void *next(const char *name) {
    return dlsym(RTLD_NEXT, name);
}

/* After `n` bytes went to `fd`: sleep when it is a socket. */
static void after(int fd, ssize_t n) {
    const char *s = getenv("SLOWSEND_MS");
    long ms = s && *s ? strtol(s, NULL, 10) : 0;
    struct stat st;
    if (n <= 0 || ms <= 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return;
    int saved = errno;
    const char *log = getenv("SLOWSEND_LOG");
    if (log != NULL) {
        int lfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (lfd >= 0) {
            static const char line[] = "slept after a send\n";
            write_fn *w = (write_fn *)next("write");
            if (w != NULL && w(lfd, line, sizeof line - 1) < 0) {
                /* a lost log line only hides that the shim acted */
            }
            close(lfd);
        }
    }
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    errno = saved;
}

ssize_t write(int fd, const void *buf, size_t len) {
    write_fn *f = (write_fn *)next("write");
    ssize_t n = f(fd, buf, len);
    after(fd, n);
    return n;
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    writev_fn *f = (writev_fn *)next("writev");
    ssize_t n = f(fd, iov, iovcnt);
    after(fd, n);
    return n;
}

ssize_t send(int fd, const void *buf, size_t len, int flags) {
    send_fn *f = (send_fn *)next("send");
    ssize_t n = f(fd, buf, len, flags);
    after(fd, n);
    return n;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
    sendmsg_fn *f = (sendmsg_fn *)next("sendmsg");
    ssize_t n = f(fd, msg, flags);
    after(fd, n);
    return n;
}
