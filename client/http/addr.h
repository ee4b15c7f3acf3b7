/* SPDX-License-Identifier: BSD-3-Clause */
/* `serve`'s --http address: parsed, and listened on before the HTTP server
 * starts (so that its port, and who may ask, are known before its threads
 * run). Main thread. */
#ifndef ES_HTTPADDR_H
#define ES_HTTPADDR_H

#include <stdbool.h>
#include <sys/socket.h>

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (127.0.0.1) into a socket address,
 * and whether it is loopback. Returns 0, or -1 when it is not one. */
int es_httpaddr_parse(const char *spec, struct sockaddr_storage *out, socklen_t *len,
                      bool *loopback);

/* A listening socket on `sa`. Returns the descriptor, or -1 (errno). */
int es_httpaddr_listen(const struct sockaddr_storage *sa);

/* What follows strerror(EADDRINUSE) when --http's port is taken. */
#define ES_HTTPADDR_IN_USE_HINT                                                                    \
    " (another process listens there: choose another port with --http HOST:PORT, or port 0 "       \
    "for a free one)"

/* The port a socket is bound to, 0 when it cannot tell. */
unsigned es_httpaddr_port(int fd);

#endif
