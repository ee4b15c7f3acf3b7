/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

void es_fd_fill_std(void) {
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* The lowest free number: `fd` itself, those below it are open. */
        int null = open("/dev/null", O_RDWR);
        if (null >= 0 && null != fd) {
            dup2(null, fd);
            close(null);
        }
    }
}

int es_fd_above_std(int fd) {
    if (fd < 0 || fd > 2)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(fd);
    errno = err;
    return moved;
}
