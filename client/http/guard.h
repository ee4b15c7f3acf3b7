/* SPDX-License-Identifier: BSD-3-Clause */
/* The connections of an HTTP server (`serve`'s, `metrics`'s), judged as
 * they come, so that nobody can lock its owner out by holding
 * connections, however slowly they trickle:
 *
 *   - a connection whose peer is known to be the owner (on loopback, this
 *     user or root: client/http/auth.h) is proven as it opens; any other
 *     is unproven until one of its requests passes the auth check (the
 *     token, when there is one), and some never are (another user on
 *     loopback without a token);
 *   - unproven connections are counted by source: a peer on this host by
 *     its user, whatever address it takes (127.0.0.0/8 alone has
 *     millions), any other by its address, IPv6 by its /64 (what one site
 *     is given). They are kept ES_HTTPGUARD_PER_SOURCE at most per source
 *     and ES_HTTPGUARD_UNPROVEN in all: one more cuts the oldest of its
 *     source or, past the total, the oldest of the source that holds the
 *     most. So slow connections make room for the next ones of their own
 *     source instead of taking another's place, and a connection is never
 *     cut for one of a source that holds fewer: the owner's (one or a few
 *     while their requests come, then proven) outlast a flood that comes
 *     from fewer than ES_HTTPGUARD_UNPROVEN sources, however fast it
 *     reconnects; another user of this host is one source however many
 *     addresses it takes;
 *   - every request must arrive whole within ES_HTTPGUARD_REQUEST_S of the
 *     connection's opening or of the previous response's end, however it
 *     trickles in (libmicrohttpd's own timeout fires only on silence): the
 *     loop thread's tick cuts the late ones (es_httpguard_cut_late).
 *
 * A cut is shutdown(2) of the socket: libmicrohttpd sees the end of its
 * input and closes and frees the connection as for a client that left.
 * It reports the closing (es_httpguard_notify, which forgets the
 * connection under the lock) before it closes the socket, so a
 * descriptor is never shut down after it was closed and reused.
 *
 * The notify functions run in libmicrohttpd's threads, es_httpguard_cut_late
 * in the loop thread; the guard's lock covers its list. */
#ifndef ES_HTTPGUARD_H
#define ES_HTTPGUARD_H

#include "auth.h"
#include "base/es_queue.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Unproven connections open at once, at most: from one source, and in
 * all. */
#define ES_HTTPGUARD_PER_SOURCE 8
#define ES_HTTPGUARD_UNPROVEN   32
/* A request must have arrived whole this long after the connection
 * opened or the previous response ended. */
#define ES_HTTPGUARD_REQUEST_S 10

struct es_httpguard_conn;

struct es_httpguard {
    const struct es_httpauth *auth; /* who is proven as the connection opens */
    pthread_mutex_t mu;
    struct es_queue conns; /* every open connection (es_httpguard_conn), newest first */
    unsigned unproven;     /* of them, unproven and not cut */
};

void es_httpguard_init(struct es_httpguard *g, const struct es_httpauth *auth);
void es_httpguard_destroy(struct es_httpguard *g);

/* MHD_OPTION_NOTIFY_CONNECTION's function (`cls`: the guard). */
void es_httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode code);
/* MHD_OPTION_NOTIFY_COMPLETED's function (`cls`: the guard): the response
 * ended, the next request's time begins. */
void es_httpguard_completed(void *cls, struct MHD_Connection *c, void **state,
                            enum MHD_RequestTerminationCode code);
/* A request of `c` arrived whole: no deadline while it is answered;
 * `proven`: it passed the auth check, and so does its connection. */
void es_httpguard_request(struct es_httpguard *g, struct MHD_Connection *c, bool proven);
/* The loop thread, every tick: cut the connections whose request is late. */
void es_httpguard_cut_late(struct es_httpguard *g);

#endif
