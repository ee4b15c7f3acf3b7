/* SPDX-License-Identifier: BSD-3-Clause */
/* An LD_PRELOAD shim that makes large allocations fail, for the tests of
 * what the library does when memory runs out: while the file named by
 * FAILALLOC_FLAG exists, every malloc, calloc, realloc, posix_memalign,
 * aligned_alloc and memalign of FAILALLOC_MIN bytes or more (default
 * 65536) returns NULL (errno ENOMEM); smaller ones, and all of them
 * without the file, go to the C library's allocator. The file is looked
 * at on each large request only, so a test decides when memory runs out
 * (after the RTS has allocated its own buffers at start-up) and when it
 * comes back. Each failure adds a line to FAILALLOC_LOG, if set, so that a
 * test knows the shim acted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static size_t threshold(void) {
    const char *s = getenv("FAILALLOC_MIN");
    return s && *s ? strtoull(s, NULL, 10) : 65536;
}

/* Whether a request of `size` bytes fails now. */
static int refuse(size_t size) {
    if (size < threshold())
        return 0;
    const char *flag = getenv("FAILALLOC_FLAG");
    if (flag == NULL || access(flag, F_OK) != 0)
        return 0;
    const char *log = getenv("FAILALLOC_LOG");
    if (log != NULL) {
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) {
            ssize_t r = write(fd, "x\n", 2);
            (void)r;
            close(fd);
        }
    }
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t size) {
    return refuse(size) ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    if (size != 0 && n > (size_t)-1 / size) {
        errno = ENOMEM;
        return NULL;
    }
    return refuse(n * size) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    return refuse(size) ? NULL : __libc_realloc(p, size);
}

void *memalign(size_t align, size_t size) {
    return refuse(size) ? NULL : __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size) {
    return refuse(size) ? NULL : __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size) {
    if (refuse(size))
        return ENOMEM;
    void *p = __libc_memalign(align, size);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}
