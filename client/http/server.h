/* SPDX-License-Identifier: BSD-3-Clause */
/* The HTTP server as `serve` and `metrics` run it: libmicrohttpd on a
 * socket that listens before it starts (client/http/addr.h), so that its
 * port and who may ask (client/http/auth.h) are known before its threads
 * run; every connection judged by the guard (client/http/guard.h); and
 * stopped so that the listening socket is closed once, by us.
 *
 * Started and stopped on the main thread; es_httpserver_admit runs in
 * libmicrohttpd's threads, es_httpguard_cut_late (client/http/guard.h) on the caller's loop. */
#ifndef ES_HTTPSERVER_H
#define ES_HTTPSERVER_H

#include "http/auth.h"
#include "http/guard.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* What one server may hold. */
struct es_httpserver_limits {
    unsigned conns;       /* connections in all */
    unsigned per_ip;      /* from one address */
    size_t memory;        /* a connection's memory (its request, headers) */
    unsigned timeout_s;   /* silence before libmicrohttpd closes a connection */
    bool thread_per_conn; /* a thread each (serve's streams), else one polls all */
    size_t thread_stack;  /* with thread_per_conn: each thread's stack */
};

struct es_httpserver {
    struct MHD_Daemon *daemon;
    struct es_httpauth auth;   /* who may ask: read by the owner, set before start */
    struct es_httpguard guard; /* its connections */
    int listen_fd;
};

/* Listen on `sa`, decide who may ask (`token`: es_httpauth_init's), and
 * start the server, which hands each request to `on_request` with `cls`.
 * 0, or -1 with errno and nothing left open. */
int es_httpserver_start(struct es_httpserver *s, const struct sockaddr_storage *sa, bool loopback,
                        const char *token, const struct es_httpserver_limits *lim,
                        MHD_AccessHandlerCallback on_request, void *cls);

/* A request has come whole: whether its asker may have it, and the guard
 * told (a connection that passes is proven). */
enum es_httpauth_verdict es_httpserver_admit(struct es_httpserver *s, struct MHD_Connection *c);

/* Stop the server (its threads joined, its connections closed), close the
 * listening socket and forget the connections. */
void es_httpserver_stop(struct es_httpserver *s);

#endif
