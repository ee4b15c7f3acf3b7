/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_endpoint.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "base/es_log.h"
#include "base/es_peer.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int es_endpoint_open_unix(struct es_endpoint *e, const char *path) {
    e->is_unix = true;
    int r = es_listen_unix(path, &e->addr);
    if (r == 0 && (e->unix_path = strdup(path)) == NULL) {
        close(e->addr.fd);
        unlink(path);
        r = EVENTLOG_SOCKET_ENOMEM;
    }
    return r;
}

int es_endpoint_open_tcp(struct es_endpoint *e, const char *host, const char *port) {
    e->is_unix = false;
    return es_listen_tcp(host, port, &e->addr);
}

void es_endpoint_announce(const struct es_endpoint *e) {
    es_log("listening on %s", e->addr.desc);
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (!e->is_unix && getsockname(e->addr.fd, (struct sockaddr *)&bound, &blen) == 0 &&
        !es_peer_is_loopback((struct sockaddr *)&bound))
        es_log("%s is not a loopback address: anyone who can reach this port can read the "
               "program's eventlog and send it control commands",
               e->addr.desc);
}

void es_endpoint_unlink(const struct es_endpoint *e) {
    if (e->is_unix)
        es_listen_unlink_unix(e->unix_path, &e->addr);
}

void es_endpoint_free(struct es_endpoint *e) {
    free(e->unix_path);
    e->unix_path = NULL;
}
