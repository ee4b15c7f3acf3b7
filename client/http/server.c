/* SPDX-License-Identifier: BSD-3-Clause */
#include "server.h"

#include "http/addr.h"

#include <errno.h>
#include <unistd.h>

int es_httpserver_start(struct es_httpserver *s, const struct sockaddr_storage *sa, bool loopback,
                        const char *token, const struct es_httpserver_limits *lim,
                        MHD_AccessHandlerCallback on_request, void *cls) {
    errno = 0;
    s->daemon = NULL;
    s->listen_fd = es_httpaddr_listen(sa);
    if (s->listen_fd < 0)
        return -1;
    if (es_httpauth_init(&s->auth, sa, loopback, es_httpaddr_port(s->listen_fd), token) != 0) {
        int e = errno;
        close(s->listen_fd);
        errno = e;
        return -1;
    }
    es_httpguard_init(&s->guard, &s->auth);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                     (lim->thread_per_conn ? MHD_USE_THREAD_PER_CONNECTION : 0) |
                     (sa->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    /* A stack size of 0 is libmicrohttpd's default. */
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, cls, MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
        MHD_OPTION_CONNECTION_TIMEOUT, lim->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        lim->memory, MHD_OPTION_CONNECTION_LIMIT, lim->conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        lim->per_ip, MHD_OPTION_THREAD_STACK_SIZE, lim->thread_per_conn ? lim->thread_stack : 0,
        MHD_OPTION_NOTIFY_CONNECTION, es_httpguard_notify, &s->guard, MHD_OPTION_NOTIFY_COMPLETED,
        es_httpguard_completed, &s->guard, MHD_OPTION_END);
    if (s->daemon == NULL) {
        int e = errno;
        close(s->listen_fd);
        es_httpguard_destroy(&s->guard);
        errno = e;
        return -1;
    }
    return 0;
}

enum es_httpauth_verdict es_httpserver_admit(struct es_httpserver *s, struct MHD_Connection *c) {
    enum es_httpauth_verdict v = es_httpauth_check(&s->auth, c);
    es_httpguard_request(&s->guard, c, v == ES_HTTPAUTH_OK);
    return v;
}

void es_httpserver_stop(struct es_httpserver *s) {
    /* Quiesced first, libmicrohttpd hands the listening socket back
     * instead of closing it: closed here, once. */
    MHD_socket fd = MHD_quiesce_daemon(s->daemon);
    MHD_stop_daemon(s->daemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    es_httpguard_destroy(&s->guard);
    s->daemon = NULL;
}
