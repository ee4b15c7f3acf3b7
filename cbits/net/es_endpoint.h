/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the server listens: a Unix socket (with the path of its file,
 * removed when the server stops or a signal ends the wait for the first
 * client) or TCP (with its port), made by es_listen.h. Opened and
 * announced by the thread that starts the server; the file removed by
 * whichever thread stops it (es_endpoint_unlink is async-signal-safe). */
#ifndef ES_ENDPOINT_H
#define ES_ENDPOINT_H

#include "base/es_listen.h"

#include <stdbool.h>

struct es_endpoint {
    bool is_unix;
    char *unix_path;
    struct es_listen_result addr;
};

/* Listen; returns 0 or es_listen's error (then nothing is left open). */
int es_endpoint_open_unix(struct es_endpoint *e, const char *path);
int es_endpoint_open_tcp(struct es_endpoint *e, const char *host, const char *port);

/* The listening socket, until es_accept.h owns it. */
static inline int es_endpoint_fd(const struct es_endpoint *e) {
    return e->addr.fd;
}

/* Log where the server listens, and warn when a TCP address is not a
 * loopback one. */
void es_endpoint_announce(const struct es_endpoint *e);

/* Remove the socket file if it is still ours (TCP: nothing). lstat and
 * unlink only, both async-signal-safe. */
void es_endpoint_unlink(const struct es_endpoint *e);

static inline bool es_endpoint_is_unix(const struct es_endpoint *e) {
    return e->is_unix;
}

/* The TCP port, or -1 for a Unix socket. */
static inline int es_endpoint_port(const struct es_endpoint *e) {
    return e->is_unix ? -1 : e->addr.port;
}

/* Free what it holds (the socket is closed by its owner). */
void es_endpoint_free(struct es_endpoint *e);

#endif
