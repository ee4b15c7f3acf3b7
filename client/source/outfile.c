/* SPDX-License-Identifier: BSD-3-Clause */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int es_outfile_open(const char *path, int flags) {
    return open(path, flags | O_CLOEXEC, ES_OUTFILE_MODE);
}

int es_outfile_create(const char *path, int flags) {
    return es_outfile_open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW);
}

int es_outfile_create_random(char *path, int suffix_len) {
    int fd = mkstemps(path, suffix_len); /* O_EXCL, mode 0600 */
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

FILE *es_outfile_fopen(const char *path, const char *mode) {
    int fd = es_outfile_open(path, O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, mode);
    if (f == NULL) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

/* The directory `path` would be created in. */
static void dir_of(const char *path, char *dir, size_t size) {
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, size, ".");
}

bool es_outfile_check(const char *cmd, const char *what, const char *path) {
    if (strcmp(path, "-") == 0)
        return true;
    struct stat st;
    char dir[1024];
    const char *why = NULL;
    if (path[0] == '\0') {
        why = "an empty file name";
    } else if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            why = "a directory: name a file in it";
        else if (access(path, W_OK) != 0)
            why = strerror(errno);
    } else if (errno != ENOENT) {
        why = strerror(errno);
    } else {
        dir_of(path, dir, sizeof dir);
        if (stat(dir, &st) != 0)
            why = errno == ENOENT ? "its directory does not exist" : strerror(errno);
        else if (!S_ISDIR(st.st_mode))
            why = "its directory is not a directory";
        else if (access(dir, W_OK | X_OK) != 0)
            why = errno == EACCES ? "Permission denied (its directory is not writable)"
                                  : strerror(errno);
    }
    if (why == NULL)
        return true;
    fprintf(stderr, "eventlog-socket %s: cannot write %s%s%s: %s\n", cmd, what ? what : "",
            what ? " " : "", path, why);
    return false;
}
