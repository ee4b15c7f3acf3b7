/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int es_fd_above_std(int fd) {
    if (fd < 0 || fd > 2)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(fd);
    errno = err;
    return moved;
}
