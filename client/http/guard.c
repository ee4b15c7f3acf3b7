/* SPDX-License-Identifier: BSD-3-Clause */
#include "guard.h"

#include <assert.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

enum { SOURCE_KEY = 17 }; /* a source's key: its kind, then up to 16 bytes */

struct es_httpguard_conn {
    struct es_queue_node node; /* in the guard's `conns`, newest first */
    int fd;
    uint8_t source[SOURCE_KEY]; /* where it comes from (source_of), if unproven */
    uint64_t opened_ms;
    uint64_t deadline_ms; /* by when the awaited request must be whole, 0: none awaited */
    bool proven;
    bool cut; /* shut down, waiting for libmicrohttpd to close it */
};

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

void es_httpguard_init(struct es_httpguard *g, const struct es_httpauth *auth) {
    g->auth = auth;
    es_queue_init(&g->conns);
    g->unproven = 0;
    pthread_mutex_init(&g->mu, NULL);
}

void es_httpguard_destroy(struct es_httpguard *g) {
    pthread_mutex_destroy(&g->mu);
}

/* Under the lock: shut `k` down (libmicrohttpd closes it soon). */
static void cut(struct es_httpguard *g, struct es_httpguard_conn *k) {
    assert(es_queue_contains(&g->conns, &k->node));
    if (k->cut)
        return;
    shutdown(k->fd, SHUT_RDWR);
    k->cut = true;
    k->deadline_ms = 0;
    if (!k->proven) {
        assert(g->unproven > 0);
        g->unproven--;
    }
}

/* The source of a connection, as a key of SOURCE_KEY bytes: the kind, then
 * who. A peer on this host is known by its user, whatever address it takes
 * (127.0.0.0/8 alone has millions); any other by its address, IPv4 as IPv6
 * maps it (one host, one key), IPv6 by its /64 (what one site is given, so
 * as good as one host). */
enum { SOURCE_USER = 0xff };

static void source_of(int fd, uint8_t key[SOURCE_KEY]) {
    memset(key, 0, SOURCE_KEY);
    uid_t uid;
    if (es_httpauth_peer_user(fd, &uid) == 0) {
        key[0] = SOURCE_USER;
        memcpy(key + 1, &uid, sizeof uid);
        return;
    }
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    if (getpeername(fd, (struct sockaddr *)&sa, &len) != 0)
        return; /* those that cannot tell are one source */
    key[0] = AF_INET6;
    if (sa.ss_family == AF_INET) {
        key[11] = key[12] = 0xff;
        memcpy(key + 13, &((struct sockaddr_in *)&sa)->sin_addr, 4);
    } else if (sa.ss_family == AF_INET6) {
        const struct in6_addr *a = &((struct sockaddr_in6 *)&sa)->sin6_addr;
        memcpy(key + 1, a, IN6_IS_ADDR_V4MAPPED(a) ? 16 : 8);
    } else {
        key[0] = (uint8_t)sa.ss_family;
    }
}

/* Under the lock: the unproven connections not cut, newest first, into
 * `out` (room for ES_HTTPGUARD_UNPROVEN + 1). Returns how many. */
static unsigned unproven_ones(struct es_httpguard *g, struct es_httpguard_conn **out) {
    unsigned n = 0;
    ES_QUEUE_FOREACH(q, &g->conns) {
        struct es_httpguard_conn *w = ES_QUEUE_DATA(q, struct es_httpguard_conn, node);
        if (!w->proven && !w->cut) {
            assert(n <= ES_HTTPGUARD_UNPROVEN);
            out[n++] = w;
        }
    }
    return n;
}

/* Of `v[0..n)`, how many come from `source`. */
static unsigned from_source(struct es_httpguard_conn *const *v, unsigned n, const uint8_t *source) {
    unsigned c = 0;
    for (unsigned i = 0; i < n; i++)
        c += memcmp(v[i]->source, source, SOURCE_KEY) == 0;
    return c;
}

/* Of `v[0..n)`, newest first: the oldest of `source`'s, or (NULL) the
 * oldest of those whose source holds the most. */
static struct es_httpguard_conn *oldest(struct es_httpguard_conn *const *v, unsigned n,
                                        const uint8_t *source) {
    struct es_httpguard_conn *found = NULL;
    unsigned most = 0;
    for (unsigned i = 0; i < n; i++) {
        if (source != NULL) {
            if (memcmp(v[i]->source, source, SOURCE_KEY) == 0)
                found = v[i];
            continue;
        }
        unsigned c = from_source(v, n, v[i]->source);
        if (c >= most) {
            most = c;
            found = v[i];
        }
    }
    return found;
}

/* Under the lock: `k`, unproven, has just come; make room if its source,
 * or all, hold too many. Past its source's share, the source's oldest is
 * cut; past the total, the oldest of the source that holds the most. So a
 * connection is never cut for one of a source that holds fewer: the
 * owner's, one or a few while their requests come, outlast a flood from
 * fewer than ES_HTTPGUARD_UNPROVEN sources, however fast it reconnects. */
static void make_room(struct es_httpguard *g, struct es_httpguard_conn *k) {
    struct es_httpguard_conn *v[ES_HTTPGUARD_UNPROVEN + 1];
    unsigned n = unproven_ones(g, v);
    assert(n == g->unproven && n > 0 && v[0] == k);
    struct es_httpguard_conn *victim = NULL;
    if (from_source(v, n, k->source) > ES_HTTPGUARD_PER_SOURCE)
        victim = oldest(v, n, k->source);
    else if (n > ES_HTTPGUARD_UNPROVEN)
        victim = oldest(v, n, NULL);
    if (victim != NULL)
        cut(g, victim);
    assert(g->unproven <= ES_HTTPGUARD_UNPROVEN);
}

static void opened(struct es_httpguard *g, struct MHD_Connection *c, void **socket_context) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct es_httpguard_conn *k = ci ? calloc(1, sizeof *k) : NULL;
    *socket_context = k;
    if (k == NULL) {
        if (ci != NULL)
            shutdown(ci->connect_fd, SHUT_RDWR); /* no room to judge it: not served */
        return;
    }
    uint64_t now = now_ms();
    k->fd = ci->connect_fd;
    k->opened_ms = now;
    k->deadline_ms = now + ES_HTTPGUARD_REQUEST_S * 1000;
    /* On loopback the peer's user is known at once; elsewhere only the
     * token, in a request, tells. */
    k->proven = g->auth->loopback && es_httpauth_fd_is_owner(g->auth, k->fd);
    if (!k->proven)
        source_of(k->fd, k->source);
    pthread_mutex_lock(&g->mu);
    es_queue_insert_head(&g->conns, &k->node);
    if (!k->proven) {
        g->unproven++;
        make_room(g, k);
    }
    pthread_mutex_unlock(&g->mu);
}

static void closed(struct es_httpguard *g, void **socket_context) {
    struct es_httpguard_conn *k = *socket_context;
    pthread_mutex_lock(&g->mu);
    if (!k->proven && !k->cut) {
        assert(g->unproven > 0);
        g->unproven--;
    }
    es_queue_remove(&g->conns, &k->node);
    pthread_mutex_unlock(&g->mu);
    free(k);
    *socket_context = NULL;
}

void es_httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode code) {
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        opened(cls, c, socket_context);
    else if (*socket_context != NULL)
        closed(cls, socket_context);
}

static struct es_httpguard_conn *conn_of(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void es_httpguard_completed(void *cls, struct MHD_Connection *c, void **state,
                            enum MHD_RequestTerminationCode code) {
    (void)state;
    (void)code;
    struct es_httpguard *g = cls;
    struct es_httpguard_conn *k = conn_of(c);
    if (k == NULL)
        return;
    pthread_mutex_lock(&g->mu);
    if (!k->cut)
        k->deadline_ms = now_ms() + ES_HTTPGUARD_REQUEST_S * 1000;
    pthread_mutex_unlock(&g->mu);
}

void es_httpguard_request(struct es_httpguard *g, struct MHD_Connection *c, bool proven) {
    struct es_httpguard_conn *k = conn_of(c);
    if (k == NULL)
        return;
    pthread_mutex_lock(&g->mu);
    k->deadline_ms = 0;
    if (proven && !k->proven) {
        k->proven = true;
        if (!k->cut) {
            assert(g->unproven > 0);
            g->unproven--;
        }
    }
    pthread_mutex_unlock(&g->mu);
}

void es_httpguard_cut_late(struct es_httpguard *g) {
    uint64_t now = now_ms();
    pthread_mutex_lock(&g->mu);
    ES_QUEUE_FOREACH(n, &g->conns) {
        struct es_httpguard_conn *k = ES_QUEUE_DATA(n, struct es_httpguard_conn, node);
        if (k->deadline_ms != 0 && k->deadline_ms <= now)
            cut(g, k);
    }
    pthread_mutex_unlock(&g->mu);
}
