/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_listen.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_fd.h"
#include "es_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Whether a process is accepting connections on the socket file at `path`:
 * 1 live, 0 stale (nobody listening), or a negated errno. */
static int unix_socket_is_live(const struct sockaddr_un *addr) {
    int fd = es_fd_above_std(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd < 0)
        return -errno;
    int r = connect(fd, (const struct sockaddr *)addr, sizeof *addr);
    int err = errno;
    close(fd);
    if (r == 0 || err == EAGAIN || err == EINPROGRESS)
        return 1; /* accepted, or a full backlog: someone is listening */
    if (err == ECONNREFUSED)
        return 0;
    return -err;
}

/* What a file that is not a socket is, for a log line. */
static const char *file_kind(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a socket";
}

int es_listen_check_unix_path(const char *path, const char *origin) {
    /* Every message names what was given, as `origin` plus the quoted path:
     * GHC_EVENTLOG_UNIX_PATH="..." from the environment. */
    const char *what = origin ? origin : "Unix socket path ";
    if (path == NULL || path[0] == '\0') {
        es_log("%s\"\" is empty: give the path of the socket file to create", what);
        return EVENTLOG_SOCKET_EINVAL;
    }
    size_t len = strlen(path);
    size_t max = sizeof((struct sockaddr_un *)0)->sun_path - 1;
    if (len > max) {
        es_log("%s\"%s\" is %zu bytes long; a Unix socket path holds at most %zu: choose a "
               "shorter one",
               what, path, len, max);
        return EVENTLOG_SOCKET_ENAMETOOLONG;
    }
    if (path[len - 1] == '/') {
        es_log("%s\"%s\" ends with '/': give the path of the socket file to create, e.g. "
               "\"%seventlog.sock\"",
               what, path, path);
        return EVENTLOG_SOCKET_EINVAL;
    }

    /* The directory the socket file goes in must exist. */
    char dir[sizeof((struct sockaddr_un *)0)->sun_path];
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct stat st;
    if (stat(dir, &st) != 0) {
        int err = errno;
        if (err == ENOENT)
            es_log("%s\"%s\": the directory \"%s\" does not exist: create it first (mkdir -p "
                   "\"%s\") or choose a path in an existing directory",
                   what, path, dir, dir);
        else if (err == ENOTDIR)
            es_log("%s\"%s\": a part of \"%s\" is not a directory: choose a path in an "
                   "existing directory",
                   what, path, dir);
        else
            es_log("%s\"%s\": cannot use the directory \"%s\": %s", what, path, dir, strerror(err));
        return -err;
    }
    if (!S_ISDIR(st.st_mode)) {
        es_log("%s\"%s\": \"%s\" is %s, not a directory: choose a path in an existing "
               "directory",
               what, path, dir, file_kind(st.st_mode));
        return -ENOTDIR;
    }

    /* Something other than a socket at the path itself is never touched. */
    if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            es_log("%s\"%s\" is a directory: give the path of a socket file to create in it, "
                   "e.g. \"%s/eventlog.sock\"",
                   what, path, path);
        else
            es_log("%s\"%s\" exists and is %s, not a socket; it was left untouched: choose "
                   "another path",
                   what, path, file_kind(st.st_mode));
        return EVENTLOG_SOCKET_ENOTSOCKET;
    }
    return 0;
}

int es_listen_unix(const char *path, struct es_listen_result *out) {
    memset(out, 0, sizeof *out);
    out->fd = -1;
    out->port = -1;
    int checked = es_listen_check_unix_path(path, NULL);
    if (checked != 0)
        return checked;

    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, path, strlen(path) + 1);

    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return EVENTLOG_SOCKET_ENOTSOCKET; /* it changed since the check */
        int live = unix_socket_is_live(&addr);
        if (live < 0)
            return live;
        if (live) {
            es_log("\"%s\" is in use: another process is listening on it (it was left alone)",
                   path);
            return EVENTLOG_SOCKET_EADDRINUSE;
        }
        /* A socket file nobody listens on is left over from a process that
         * died; replacing it is what a restarted service needs. */
        if (unlink(path) != 0 && errno != ENOENT)
            return -errno;
        es_log("replaced stale socket file %s", path);
    } else if (errno != ENOENT) {
        return -errno;
    }

    int fd = es_fd_above_std(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd < 0)
        return -errno;
    /* On Linux the socket file takes its mode from the socket's inode
     * (minus the umask), so setting it before bind() means the file is
     * created 0600 and never exists with wider permissions. There is no
     * chmod(path) afterwards: it would follow a symbolic link that someone
     * put at the path after bind() and change the mode of its target. */
    if (fchmod(fd, 0600) != 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(fd, ES_LISTEN_BACKLOG) != 0) {
        int err = errno;
        es_log("cannot create the socket file \"%s\": %s", path, strerror(err));
        close(fd);
        return -err;
    }
    /* The file's identity, so that exit removes only our own file. If what
     * is at the path now is not a socket, it was swapped in since bind():
     * refuse, and leave it alone (it is not ours to remove). */
    if (lstat(path, &st) != 0) {
        int err = errno;
        es_log("the socket file \"%s\" was removed right after it was created (%s); not "
               "listening there",
               path, strerror(err));
        close(fd);
        return -err;
    }
    if (!S_ISSOCK(st.st_mode)) {
        es_log("the socket file \"%s\" was replaced by %s right after it was created; that "
               "was left alone, and nothing listens there",
               path, file_kind(st.st_mode));
        close(fd);
        return EVENTLOG_SOCKET_ENOTSOCKET;
    }
    out->fd = fd;
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    out->ctime = st.st_ctim;
    snprintf(out->desc, sizeof out->desc, "unix:%s", path);
    return 0;
}

void es_listen_unlink_unix(const char *path, const struct es_listen_result *res) {
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == res->dev &&
        st.st_ino == res->ino && st.st_ctim.tv_sec == res->ctime.tv_sec &&
        st.st_ctim.tv_nsec == res->ctime.tv_nsec)
        unlink(path);
}

/* A port is decimal digits only: no sign, no spaces, no base prefix (strtol
 * would skip leading white space and take a sign, so it is not used). */
/* getaddrinfo's code behind the calling thread's last
 * EVENTLOG_SOCKET_ERESOLVE (for upstream's EVENTLOG_SOCKET_ERR_GAI). */
static _Thread_local int last_gai_error;

int es_listen_last_gai_error(void) {
    return last_gai_error;
}

static int parse_port(const char *port) {
    if (port == NULL || port[0] == '\0')
        return -1;
    long v = 0;
    for (const char *p = port; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > 65535)
            return -1;
    }
    return (int)v;
}

static void describe(const struct sockaddr *sa, struct es_listen_result *out) {
    char host[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
        out->port = ntohs(s6->sin6_port);
        snprintf(out->desc, sizeof out->desc, "[%s]:%d", host, out->port);
    } else {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
        out->port = ntohs(s4->sin_port);
        snprintf(out->desc, sizeof out->desc, "%s:%d", host, out->port);
    }
}

int es_listen_tcp(const char *host, const char *port, struct es_listen_result *out) {
    memset(out, 0, sizeof *out);
    out->fd = -1;
    out->port = -1;
    if (parse_port(port) < 0) {
        es_log("invalid TCP port \"%s\": expected a number from 0 to 65535 in digits only (no "
               "sign or spaces)",
               port ? port : "");
        return EVENTLOG_SOCKET_EINVAL;
    }
    if (host == NULL || host[0] == '\0')
        host = "127.0.0.1";

    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        es_log("cannot resolve TCP host \"%s\": %s", host, gai_strerror(gai));
        last_gai_error = gai;
        return EVENTLOG_SOCKET_ERESOLVE;
    }
    int err = EVENTLOG_SOCKET_ERESOLVE;
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        int fd = es_fd_above_std(
            socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        if (fd < 0) {
            err = -errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, ES_LISTEN_BACKLOG) != 0) {
            err = -errno;
            close(fd);
            continue;
        }
        struct sockaddr_storage ss;
        socklen_t sslen = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
            err = -errno;
            close(fd);
            continue;
        }
        describe((struct sockaddr *)&ss, out);
        out->fd = fd;
        err = 0;
        break;
    }
    freeaddrinfo(res);
    if (err == EVENTLOG_SOCKET_EADDRINUSE)
        es_log("cannot listen on TCP %s port %s: another process is listening there "
               "(GHC_EVENTLOG_INET_PORT, or the program's own setting): choose another port, "
               "or 0 for any free one",
               host, port);
    else if (err < 0 && err != EVENTLOG_SOCKET_ERESOLVE)
        es_log("cannot listen on TCP %s port %s: %s (GHC_EVENTLOG_INET_HOST and "
               "GHC_EVENTLOG_INET_PORT, or the program's own settings)",
               host, port, strerror(-err));
    return err;
}
