/* SPDX-License-Identifier: BSD-3-Clause */
/* `metrics`'s HTTP server: GET /metrics answers with the latest exposition
 * that the loop thread published (es_promhttp_publish); nothing else is
 * served. libmicrohttpd runs it in one thread of its own, polling every
 * connection, so a scrape only copies the text under a lock and never
 * waits on a program, and a slow scraper delays nobody. Limits:
 * connections in all, memory per connection, a timeout on silence, and
 * serve's guard (client/http/guard.h): other users' and unproven
 * connections few at a time, a deadline for each request. When
 * bound to loopback it answers only requests whose Host names it (DNS
 * rebinding), as serve's server does (client/web/http.h). */
#ifndef ES_PROMHTTP_H
#define ES_PROMHTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct es_promhttp;

/* Serve on `sa`; `token`: the user's (--token-file) or NULL (client/http/auth.h).
 * NULL when the server cannot start (errno says why, 0 when it does not know). */
struct es_promhttp *es_promhttp_start(const struct sockaddr_storage *sa, bool loopback,
                                      const char *token);
unsigned es_promhttp_port(const struct es_promhttp *h);

/* The random secret a scrape must carry (?token=) when the address is not
 * loopback, for the printed URL; "" on loopback, where the peer's user is
 * checked instead, and "" when the token is the user's own (never printed). */
const char *es_promhttp_token(const struct es_promhttp *h);
/* Print the URL to scrape on stdout: `http` as given to --http (its host
 * part), with ?token= when the token is a random one; `token_file`: the
 * --token-file (NULL: none), named on a second line. */
void es_promhttp_print_url(const struct es_promhttp *h, const char *http, const char *token_file);
/* The loop thread: `text` (malloc'd, `len` bytes, taken over) is what the
 * next scrapes get. */
void es_promhttp_publish(struct es_promhttp *h, char *text, size_t len);
/* The loop thread, every tick: cut the connections whose request is late
 * (client/http/guard.h). */
void es_promhttp_cut_late(struct es_promhttp *h);
/* Stop the server and free it. */
void es_promhttp_stop(struct es_promhttp *h);

#endif
