#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int es_outfile_open(const char *path, int flags) {
    return open(path, flags | O_CLOEXEC, ES_OUTFILE_MODE);
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
