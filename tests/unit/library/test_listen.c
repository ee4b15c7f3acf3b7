/* SPDX-License-Identifier: BSD-3-Clause */
/* Creating listening sockets safely, on the real file system and loopback. */
#define _GNU_SOURCE /* RTLD_NEXT */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "base/es_listen.h"
#include "base/es_log.h"
#include "../unit.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The case's own directory (unit_tmpdir()). */
static const char *dir;

static char *path_in_dir(const char *name) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* es_listen_unix with the library's log captured into `log`. */
static int listen_logged(const char *path, struct es_listen_result *r, char *log, size_t size) {
    es_log_drain(5000); /* earlier lines are not this call's */
    unit_capture_begin();
    int err = es_listen_unix(path, r);
    es_log_drain(5000); /* es_log only queues the line */
    unit_capture_end(log, size);
    return err;
}

/* When set, bind() acts out an attack right after it succeeds: the new
 * socket file is moved away and a symbolic link to `swap_target` is put at
 * `swap_path`, between the library's bind() and whatever it does next. */
static const char *swap_path, *swap_target;

/* The library's calls to bind() come here (a definition in the program
 * takes precedence over the C library's). */
int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real_bind)(int, const struct sockaddr *, socklen_t);
    if (real_bind == NULL)
        *(void **)&real_bind = dlsym(RTLD_NEXT, "bind");
    int r = real_bind(fd, addr, len);
    if (r == 0 && swap_path != NULL) {
        char moved[300];
        snprintf(moved, sizeof moved, "%s.moved", swap_path);
        if (rename(swap_path, moved) != 0 || symlink(swap_target, swap_path) != 0) {
            printf("Bail out! cannot swap in a symbolic link\n");
            exit(1);
        }
        unlink(moved);
        swap_path = NULL;
    }
    return r;
}

/* Mode bits and content of a file, to see that nothing changed them. */
static int unchanged(const char *path, mode_t mode, const char *content) {
    struct stat st;
    char buf[64] = {0};
    FILE *f = fopen(path, "r");
    int same = f != NULL && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
               (st.st_mode & 07777) == mode && fgets(buf, sizeof buf, f) != NULL &&
               strcmp(buf, content) == 0;
    if (f)
        fclose(f);
    return same;
}

/* A symbolic link at the socket path is never followed: not when it is there
 * before, nor when it is swapped in right after bind(). */
UNIT_CASE(listen_symlinks_not_followed) {
    dir = unit_tmpdir();
    struct es_listen_result r;
    struct stat st;
    char log[1024], victim[256], link_path[256], nowhere[256];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    fputs("victim", f);
    fclose(f);
    chmod(victim, 0644);

    snprintf(link_path, sizeof link_path, "%s/planted.sock", dir);
    symlink(victim, link_path);
    ok(listen_logged(link_path, &r, log, sizeof log) == EVENTLOG_SOCKET_ENOTSOCKET &&
           strstr(log, "is a symbolic link, not a socket"),
       "a symbolic link planted at the path is refused");
    ok(unchanged(victim, 0644, "victim"), "its target keeps its mode and content");
    ok(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode), "the link is left alone");
    unlink(link_path);

    snprintf(nowhere, sizeof nowhere, "%s/nowhere", dir);
    snprintf(link_path, sizeof link_path, "%s/dangling.sock", dir);
    symlink(nowhere, link_path);
    ok(listen_logged(link_path, &r, log, sizeof log) == EVENTLOG_SOCKET_ENOTSOCKET,
       "a dangling symbolic link at the path is refused");
    ok(lstat(nowhere, &st) != 0, "nothing is created where it points");
    unlink(link_path);

    snprintf(link_path, sizeof link_path, "%s/swapped.sock", dir);
    swap_path = link_path;
    swap_target = victim;
    int err = listen_logged(link_path, &r, log, sizeof log);
    ok(swap_path == NULL, "the link was swapped in right after bind()");
    ok(err == EVENTLOG_SOCKET_ENOTSOCKET && r.fd == -1 &&
           strstr(log, "was replaced by a symbolic link right after it was created"),
       "a link swapped in after bind() is refused (%d): %s", err, log[0] ? "logged" : "silently");
    ok(unchanged(victim, 0644, "victim"), "the swapped-in link's target keeps mode 0644 (%o)",
       lstat(victim, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0u);
    ok(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode), "the swapped-in link is left alone");
    unlink(link_path);
    unlink(victim);
}

/* Paths that cannot work: each is refused with a message that names the
 * path, says what is wrong and what to do, and nothing is created. */
UNIT_CASE(listen_unix_path_problems) {
    dir = unit_tmpdir();
    struct es_listen_result r;
    struct stat st;
    char log[1024], path[256], named[300];
    struct {
        const char *name; /* under dir */
        int err;
        const char *says;
    } cases[] = {
        {"missing/s.sock", -ENOENT, "/missing\" does not exist: create it first (mkdir -p"},
        {"missing/deeper/s.sock", -ENOENT, "/missing/deeper\" does not exist"},
        {"s.sock/", EVENTLOG_SOCKET_EINVAL, "ends with '/': give the path of the socket file"},
        {"", EVENTLOG_SOCKET_EINVAL, "ends with '/'"}, /* the directory, with its slash */
        {"sub", EVENTLOG_SOCKET_ENOTSOCKET, "is a directory: give the path of a socket file"},
        {"file/s.sock", -ENOTDIR, "/file\" is a regular file, not a directory"},
        {"file/deeper/s.sock", -ENOTDIR, "a part of"},
        {"file", EVENTLOG_SOCKET_ENOTSOCKET, "is a regular file, not a socket; it was left"},
    };
    snprintf(path, sizeof path, "%s/sub", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/file", dir);
    fclose(fopen(path, "w"));
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].name);
        int err = listen_logged(path, &r, log, sizeof log);
        snprintf(named, sizeof named, "Unix socket path \"%s\"", path);
        if (!ok(err == cases[i].err && r.fd == -1 && strstr(log, named) &&
                    strstr(log, cases[i].says),
                "DIR/%s is refused (%d) with the path and \"%s\"", cases[i].name, cases[i].err,
                cases[i].says))
            printf("#   returned %d, logged: %s", err, log);
    }
    snprintf(path, sizeof path, "%s/missing", dir);
    ok(lstat(path, &st) != 0, "no missing directory was created");
    snprintf(path, sizeof path, "%s/sub", dir);
    ok(rmdir(path) == 0, "the directory in the way is left as it was (empty)");
    snprintf(path, sizeof path, "%s/file", dir);
    ok(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0,
       "the file in the way is left as it was");
    unlink(path);
}

UNIT_CASE(listen_bad_paths) {
    struct es_listen_result r;
    char longpath[200];
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    ok(es_listen_unix(longpath, &r) == EVENTLOG_SOCKET_ENAMETOOLONG, "too long a path");
    ok(es_listen_unix("", &r) == EVENTLOG_SOCKET_EINVAL, "empty path");
}

/* A regular file in the way is left exactly as it was. */
UNIT_CASE(listen_regular_file_in_the_way) {
    dir = unit_tmpdir();
    struct es_listen_result r;
    char *file = strdup(path_in_dir("not-a-socket"));
    FILE *f = fopen(file, "w");
    fputs("precious", f);
    fclose(f);
    ok(es_listen_unix(file, &r) == EVENTLOG_SOCKET_ENOTSOCKET, "a regular file is refused");
    char content[32] = {0};
    f = fopen(file, "r");
    ok(f && fgets(content, sizeof content, f) && strcmp(content, "precious") == 0,
       "the file is untouched");
    fclose(f);
    unlink(file);
    free(file);
}

/* A fresh socket: mode 0600, set on the socket before bind(), so even with
 * a umask of 0 (which would leave a socket file 0777) and no chmod of the
 * path afterwards; then a live listener, a stale file and removal. */
UNIT_CASE(listen_socket_file) {
    dir = unit_tmpdir();
    struct es_listen_result r, r2;
    struct stat st;
    char *sock = strdup(path_in_dir("s.sock"));
    mode_t old_umask = umask(0);
    ok(es_listen_unix(sock, &r) == 0 && r.fd >= 0, "listening on a new path (umask 0)");
    umask(old_umask);
    int got = lstat(sock, &st) == 0 && S_ISSOCK(st.st_mode) ? (int)(st.st_mode & 0777) : -1;
    ok(got == 0600, "socket file has mode 0600 (got %o)", (unsigned)got);
    ok(strcmp(r.desc + 5, sock) == 0, "description names the path");

    /* Someone is listening: refuse, leave it alone. */
    ok(es_listen_unix(sock, &r2) == EVENTLOG_SOCKET_EADDRINUSE, "a live listener is refused");
    ok(lstat(sock, &st) == 0 && st.st_ino == r.ino, "the live socket is still there");

    /* The listener dies without removing its file: the file is stale. File
     * change times are as coarse as the kernel tick, and the new file may
     * reuse the old inode number; a real replacement comes much later than
     * a tick, so let one pass. */
    close(r.fd);
    struct timespec tick = {0, 30 * 1000 * 1000};
    nanosleep(&tick, NULL);
    ok(es_listen_unix(sock, &r2) == 0, "a stale socket is replaced");
    ok(lstat(sock, &st) == 0 && st.st_ino == r2.ino, "the new socket is ours");

    /* Removing only removes our own file. */
    es_listen_unlink_unix(sock, &r); /* r describes the old, replaced file */
    ok(lstat(sock, &st) == 0, "someone else's socket file is not removed");
    es_listen_unlink_unix(sock, &r2);
    ok(lstat(sock, &st) != 0, "our socket file is removed");
    close(r2.fd);
    free(sock);
}

UNIT_CASE(listen_tcp) {
    struct es_listen_result r, r2;
    int listened = es_listen_tcp(NULL, "0", &r);
    ok(listened == 0 && r.port > 0, "port 0 picks a free port (%d)", r.port);
    ok(strncmp(r.desc, "127.0.0.1:", 10) == 0, "no host means loopback (%s)", r.desc);
    char port[16];
    snprintf(port, sizeof port, "%d", r.port);
    ok(es_listen_tcp("127.0.0.1", port, &r2) == EVENTLOG_SOCKET_EADDRINUSE,
       "a port in use is refused");
    close(r.fd);
    ok(es_listen_tcp("", "abc", &r) == EVENTLOG_SOCKET_EINVAL, "a non-numeric port is refused");
    ok(es_listen_tcp("", "70000", &r) == EVENTLOG_SOCKET_EINVAL, "port 70000 is refused");
    ok(es_listen_tcp("", "", &r) == EVENTLOG_SOCKET_EINVAL, "an empty port is refused");
    /* Digits only: what strtol would skip or accept is refused, at either end. */
    static const char *const bad_ports[] = {" 80",  "80 ", "\t80",  "80\n",
                                            "8 0",  "+80", "-0",    "-80",
                                            "0x50", "80a", "65536", "99999999999999999999"};
    for (unsigned i = 0; i < sizeof bad_ports / sizeof bad_ports[0]; i++) {
        char shown[64];
        ok(es_listen_tcp("", bad_ports[i], &r) == EVENTLOG_SOCKET_EINVAL && r.fd == -1,
           "port \"%s\" is refused", unit_shown(bad_ports[i], shown, sizeof shown));
    }
    ok(es_listen_tcp(NULL, "000", &r) == 0 && r.port > 0, "leading zeros are digits (000 is 0)");
    close(r.fd);
}
