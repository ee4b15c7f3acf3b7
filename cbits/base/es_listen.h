/* SPDX-License-Identifier: BSD-3-Clause */
/* Creating the listening socket, done carefully: a Unix socket path is
 * checked before anything is removed, and TCP binds to loopback unless told
 * otherwise. Runs on the thread that starts the server, before the loop
 * thread exists, so every error reaches the caller synchronously. */
#ifndef ES_LISTEN_H
#define ES_LISTEN_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* Connections the kernel queues before the loop thread accepts them (it
 * takes them all at each wake-up). A burst of clients connecting back to
 * back must not overflow it: at 128, 6% of 1000 connects timed out (a TCP
 * SYN dropped waits a second to be retried). Linux caps it at
 * net.core.somaxconn (4096 since 5.4). */
#define ES_LISTEN_BACKLOG 4096

struct es_listen_result {
    int fd;                /* a bound, listening, non-blocking socket */
    int port;              /* TCP port, or -1 for a Unix socket */
    dev_t dev;             /* identity of the socket file we created, so that */
    ino_t ino;             /* only that file is removed at exit; inode numbers */
    struct timespec ctime; /* are reused, so the change time is compared too */
    char desc[160];        /* "unix:PATH" or "HOST:PORT", for log lines */
};

/* Check a Unix socket path before anything is created: not empty, short
 * enough, not ending with '/', in an existing directory, and nothing but a
 * socket there already. Logs what is wrong and what to do, naming the path
 * after `origin` ("GHC_EVENTLOG_UNIX_PATH=" for the variable; NULL says
 * "Unix socket path "). Returns 0 or the error es_listen_unix would. */
int es_listen_check_unix_path(const char *path, const char *origin);

/* Listen on a Unix socket at `path` (mode 0600), after the checks above.
 * Errors: EVENTLOG_SOCKET_EINVAL (empty, or a trailing '/'), ENAMETOOLONG,
 * EADDRINUSE (a live listener is there), ENOTSOCKET (the path is a
 * directory or another file that is not a socket; untouched), -ENOENT (no
 * such directory), -ENOTDIR, or another negated errno. Problems with the
 * path are logged with the path. */
int es_listen_unix(const char *path, struct es_listen_result *out);

/* Listen on TCP. `host` NULL or "" means 127.0.0.1. `port` must be a
 * decimal number from 0 to 65535 in digits only (no sign, no spaces); 0
 * picks a free port. */
int es_listen_tcp(const char *host, const char *port, struct es_listen_result *out);

/* getaddrinfo's error code behind the calling thread's last
 * EVENTLOG_SOCKET_ERESOLVE from es_listen_tcp (0 if none). */
int es_listen_last_gai_error(void);

/* Remove the Unix socket file at `path` if it is still the one `res`
 * describes (another process may have replaced it meanwhile). */
void es_listen_unlink_unix(const char *path, const struct es_listen_result *res);

#endif
