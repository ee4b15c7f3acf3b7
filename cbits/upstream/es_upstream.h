/* SPDX-License-Identifier: BSD-3-Clause */
/* Upstream eventlog-socket 0.1.3's C API on top of this library's: its
 * EventlogSocketStatus made from the library's int error codes (the table
 * in eventlog_socket.h), and the functions of that API that need no RTS
 * (the rest is rts-writer/upstream_api.c). They keep no
 * state of their own: each one calls the library's own function. Split in
 * two so that the registry's users need not link the server:
 * es_upstream.c (status, addresses, hooks, commands) and
 * es_upstream_start.c (environment, start, wait, status of the thread).
 *
 * Thread ownership: as the function each one calls. */
#ifndef ES_UPSTREAM_H
#define ES_UPSTREAM_H

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

/* A status. */
EventlogSocketStatus es_upstream_code(EventlogSocketStatusCode code, int error);

/* The status for one of the library's int error codes (0 is OK). For
 * EVENTLOG_SOCKET_ERESOLVE, getaddrinfo's code from the calling thread's
 * last failed resolution. */
EventlogSocketStatus es_upstream_status(int err);

#endif
