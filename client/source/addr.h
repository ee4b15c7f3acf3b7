/* SPDX-License-Identifier: BSD-3-Clause */
/* Addresses of eventlog-socket servers as a user types them on the command
 * line: `unix:/path`, any argument containing `/` (a Unix socket path),
 * `tcp:HOST:PORT`, `HOST:PORT`, or `:PORT` (loopback). Pure parsing, no
 * I/O and no name lookup: usable from any thread. */
#ifndef ES_ADDR_H
#define ES_ADDR_H

#include <stdint.h>

enum es_addr_kind { ES_ADDR_UNIX, ES_ADDR_TCP };

struct es_addr {
    enum es_addr_kind kind;
    char path[108]; /* ES_ADDR_UNIX: the socket path (sun_path's size) */
    char host[256]; /* ES_ADDR_TCP: a name or a numeric address, no brackets */
    uint16_t port;  /* ES_ADDR_TCP: 1 to 65535 */
};

/* Parse `text`. Returns 0, or -EINVAL with `*why` set to a static sentence
 * saying what is wrong (for a one-line error message). */
int es_addr_parse(const char *text, struct es_addr *out, const char **why);

/* The address as the user would recognise it ("unix:/tmp/a.sock",
 * "tcp:127.0.0.1:4242"), for messages. */
void es_addr_format(const struct es_addr *a, char *buf, unsigned long size);

#endif
