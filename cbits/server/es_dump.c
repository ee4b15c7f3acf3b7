/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_dump.h"

#include "base/es_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool es_dump_path(char *out, size_t size, const char *pattern, pid_t pid, long long now) {
    size_t n = 0;
    for (const char *p = pattern; *p != '\0'; p++) {
        char num[32];
        const char *piece = num;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(num, sizeof num, "%ld", (long)pid);
            p++;
        } else if (p[0] == '%' && p[1] == 't') {
            snprintf(num, sizeof num, "%lld", now);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            piece = "%";
            p++;
        } else {
            snprintf(num, sizeof num, "%c", *p);
        }
        size_t k = strlen(piece);
        if (n + k >= size)
            return false;
        memcpy(out + n, piece, k);
        n += k;
    }
    out[n] = '\0';
    return n > 0;
}

int es_dump_window(struct es_server *s, const char *pattern, int status) {
    /* An exit that skipped hs_exit (a fast exit) has not stopped it yet. */
    int r = es_server_stop(s);
    char path[1100];
    if (!es_dump_path(path, sizeof path, pattern, getpid(), (long long)time(NULL))) {
        es_log("GHC_EVENTLOG_DUMP_ON_FAILURE: the file name \"%s\" is empty or too long; the "
               "window is not written",
               pattern);
        return -ENAMETOOLONG;
    }
    int fd = r == 0 ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    long long n = r != 0 ? r : fd < 0 ? -errno : es_server_write_window(s, fd);
    if (fd >= 0 && close(fd) != 0 && n >= 0)
        n = -errno;
    if (n < 0)
        es_log("the program exits with status %d: cannot write its last events to %s: %s", status,
               path,
               r != 0 || n == -EBUSY ? "the library's threads did not finish" : strerror((int)-n));
    else
        es_log("the program exits with status %d: its last %.1f MiB of eventlog are in %s", status,
               (double)n / (1 << 20), path);
    es_log_drain(200);
    return n < 0 ? (int)n : 0;
}
