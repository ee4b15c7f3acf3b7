/* SPDX-License-Identifier: BSD-3-Clause */
/* `serve`'s HTTP server: libmicrohttpd runs it in threads of its own (one
 * per connection), serving the page and its files, the event stream
 * (Server-Sent Events of the messages the loop thread publishes in the
 * share, client/web/share.h), the recording's download and the buttons'
 * commands, within limits: connections in all and per address, memory per
 * connection, a timeout on silence, and client/http/guard.h's: connections
 * not yet known to be the owner's few per address, and a deadline by which
 * each request must have arrived whole however it trickles in, which the
 * loop thread enforces from its tick (es_webhttp_cut_late). Who may ask is
 * client/http/auth.h's: on loopback, this user only (and a Host that names
 * the server); elsewhere, whoever has the token printed in the URL, which
 * every request carries (the page passes it on: no cookie). */
#ifndef ES_WEBHTTP_H
#define ES_WEBHTTP_H

#include "share.h"

#include <stdbool.h>
#include <sys/socket.h>

struct es_webhttp;

/* Serve on `sa` what `sh` holds. NULL when the server cannot start (errno
 * says why, 0 when it does not know). */
struct es_webhttp *es_webhttp_start(struct es_webshare *sh, const struct sockaddr_storage *sa,
                                    bool loopback);
/* The port it listens on (the one picked for port 0). */
unsigned es_webhttp_port(const struct es_webhttp *h);
/* The secret the URL must carry (?token=), "" on loopback. */
const char *es_webhttp_token(const struct es_webhttp *h);
/* The loop thread, every tick: cut the connections whose request is late. */
void es_webhttp_cut_late(struct es_webhttp *h);
/* Stop the server (its threads end: close the share first, so that event
 * streams end) and free it. */
void es_webhttp_stop(struct es_webhttp *h);

#endif
