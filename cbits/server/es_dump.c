/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_dump.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include "base/es_fd.h"
#include "base/es_log.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Room for the expanded name: the setting's 1023 bytes and its numbers. */
#define DUMP_NAME_SIZE 1100
/* What the new file's name adds to the dump's own: a dot, six letters. */
#define SUFFIX_LEN 7
/* Names tried for the new file before giving up (each one taken already). */
#define SUFFIX_TRIES 64

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

/* The directory of `path` into `dir` ("." for a bare name, "/" for the
 * root's files); returns the file's name, what follows the last '/'. */
static const char *split_dir(const char *path, char *dir, size_t size) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(dir, size, ".");
        return path;
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    assert(n < size); /* `dir` is as large as `path` */
    memcpy(dir, path, n);
    dir[n] = '\0';
    return slash + 1;
}

/* Whether `pattern` holds %t before `end`. */
static bool time_before(const char *pattern, const char *end) {
    for (const char *p = pattern; p < end && *p != '\0'; p++) {
        if (p[0] == '%' && (p[1] == '%' || p[1] == 't')) {
            if (p[1] == 't')
                return true;
            p++;
        }
    }
    return false;
}

static int refuse(const char *pattern, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(const char *pattern, const char *fmt, ...) {
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    es_log("GHC_EVENTLOG_DUMP_ON_FAILURE=\"%s\" cannot be used: %s", pattern, why);
    return EVENTLOG_SOCKET_EINVAL;
}

int es_dump_check(const char *pattern) {
    char path[DUMP_NAME_SIZE], dir[DUMP_NAME_SIZE];
    if (!es_dump_path(path, sizeof path, pattern, getpid(), (long long)time(NULL)))
        return refuse(pattern,
                      "the name is empty or, with %%p and %%t expanded, longer than %d bytes",
                      DUMP_NAME_SIZE - 1);
    if (time_before(pattern, strrchr(pattern, '/')))
        return refuse(pattern, "%%t in the directory is known only at the exit: put it in the "
                               "file's name");
    const char *base = split_dir(path, dir, sizeof dir);
    if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return refuse(pattern,
                      "it names a directory: name a file in it (for example "
                      "%s/app-%%p.eventlog)",
                      dir);
    if (strlen(base) + SUFFIX_LEN > NAME_MAX)
        return refuse(pattern, "the file's name is longer than %d bytes", NAME_MAX - SUFFIX_LEN);
    struct stat st;
    if (stat(dir, &st) != 0)
        return refuse(pattern, "the directory %s: %s (create it, or name another)", dir,
                      strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return refuse(pattern, "%s is not a directory", dir);
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        return refuse(pattern, "this program (uid %u) cannot create files in %s: %s",
                      (unsigned)geteuid(), dir, strerror(errno));
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return refuse(pattern, "%s is a directory: name a file", path);
    return 0;
}

/* A new file beside `base` in `dirfd`, created here and now (exclusive,
 * 0600, no link followed, never a FIFO); its name into `tmp`. Returns the
 * descriptor or a negative errno. */
static int create_beside(int dirfd, const char *base, char *tmp, size_t size) {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15u) ^ ((uint64_t)getpid() << 32) ^
                 (uint64_t)ts.tv_sec;
    x |= 1; /* xorshift never leaves 0 */
    for (int i = 0; i < SUFFIX_TRIES; i++) {
        char sfx[SUFFIX_LEN + 1] = ".";
        for (int k = 1; k < SUFFIX_LEN; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            sfx[k] = letters[x % (sizeof letters - 1)];
        }
        sfx[SUFFIX_LEN] = '\0';
        if ((size_t)snprintf(tmp, size, "%s%s", base, sfx) >= size)
            return -ENAMETOOLONG;
        int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            fd = es_fd_above_std(fd);
            if (fd < 0) {
                int err = errno;
                unlinkat(dirfd, tmp, 0);
                return -err;
            }
            return fd;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

static void say_lost(int status, const char *path, const char *why) {
    es_log("the program exits with status %d: cannot write its last events to %s: %s", status, path,
           why);
}

/* The window (`n` bytes) is in `shown`; `there` and `why` say why that
 * is not `path`, the name asked for (NULL: it is). Integers only: this
 * runs after the RTS has shut down. */
static void say_written(int status, long long n, const char *shown, const char *path,
                        const char *there, const char *why) {
    char size[64];
    long long tenths = (n * 10 + (1 << 19)) >> 20;
    if (n < 1 << 20)
        snprintf(size, sizeof size, "%lld KiB", (n + 1023) >> 10);
    else
        snprintf(size, sizeof size, "%lld.%lld MiB", tenths / 10, tenths % 10);
    if (why == NULL)
        es_log("the program exits with status %d: its last %s of eventlog are in %s", status, size,
               shown);
    else
        es_log("the program exits with status %d: its last %s of eventlog are in %s, not in %s: "
               "%s is there and could not be replaced (%s)",
               status, size, shown, path, there, why);
}

/* What is at `base` in `dirfd`, that a rename could not replace. */
static void what_is_there(int dirfd, const char *base, char *out, size_t size) {
    struct stat st;
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        snprintf(out, size, "something");
        return;
    }
    const char *kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISLNK(st.st_mode)  ? "a symbolic link"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISREG(st.st_mode)  ? "a file"
                                              : "a special file";
    if (st.st_uid != geteuid())
        snprintf(out, size, "%s of uid %u", kind, (unsigned)st.st_uid);
    else
        snprintf(out, size, "%s", kind);
}

/* es_server_write_window with SIGXFSZ held on this thread: past a file
 * size limit (RLIMIT_FSIZE, `ulimit -f`) write() then fails with EFBIG
 * and the dump is given up with a line saying so, instead of the signal
 * killing the program in the middle of its exit (its status lost, the
 * file left). A SIGXFSZ the write raised is taken before the mask is
 * restored; one pending before is left as it was. */
static long long write_window_held(struct es_server *s, int fd) {
    sigset_t xfsz, old, before, after;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    bool was_pending = sigpending(&before) == 0 && sigismember(&before, SIGXFSZ);
    long long n = es_server_write_window(s, fd);
    if (n == -EFBIG && !was_pending && sigpending(&after) == 0 && sigismember(&after, SIGXFSZ)) {
        struct timespec now = {0, 0};
        (void)sigtimedwait(&xfsz, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return n;
}

/* The window into a new file in `dirfd` (as `base`'s neighbour), renamed
 * over `base`; says where it went. */
static int write_beside(struct es_server *s, int dirfd, const char *path, const char *base,
                        int status) {
    char tmp[NAME_MAX + 1];
    int fd = create_beside(dirfd, base, tmp, sizeof tmp);
    long long n = fd < 0 ? fd : write_window_held(s, fd);
    if (fd >= 0 && close(fd) != 0 && n >= 0)
        n = -errno;
    if (n < 0) {
        if (fd >= 0)
            unlinkat(dirfd, tmp, 0);
        say_lost(status, path,
                 n == -EBUSY ? "the library's threads did not finish" : strerror((int)-n));
        return (int)n;
    }
    if (renameat(dirfd, tmp, dirfd, base) == 0) {
        say_written(status, n, path, path, NULL, NULL);
    } else {
        const char *why = strerror(errno);
        char shown[DUMP_NAME_SIZE + NAME_MAX], there[80];
        snprintf(shown, sizeof shown, "%.*s%s", (int)(base - path), path, tmp);
        what_is_there(dirfd, base, there, sizeof there);
        say_written(status, n, shown, path, there, why);
    }
    return 0;
}

int es_dump_window(struct es_server *s, const char *pattern, int status) {
    /* An exit that skipped hs_exit (a fast exit) has not stopped it yet. */
    int r = es_server_stop(s);
    char path[DUMP_NAME_SIZE], dir[DUMP_NAME_SIZE];
    if (!es_dump_path(path, sizeof path, pattern, getpid(), (long long)time(NULL))) {
        es_log("GHC_EVENTLOG_DUMP_ON_FAILURE: the file name \"%s\" is empty or too long; the "
               "window is not written",
               pattern);
        return -ENAMETOOLONG;
    }
    const char *base = split_dir(path, dir, sizeof dir);
    int dirfd = r == 0 ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (r != 0)
        say_lost(status, path, "the library's threads did not finish");
    else if (dirfd < 0)
        say_lost(status, path, strerror(r = errno));
    else
        r = write_beside(s, dirfd, path, base, status);
    if (dirfd >= 0)
        close(dirfd);
    es_log_drain(200);
    return r < 0 ? r : -r;
}
