/* SPDX-License-Identifier: BSD-3-Clause */
/* Who may use `serve`'s and `metrics`'s HTTP servers: they are the
 * invoking user's alone, as the socket they read is. docs/security.md
 * says the same:
 *
 *   --http on loopback   the HTTP peer's socket must belong to this user
 *                        (or root): its owner is looked up by
 *                        es_peer_uid (cbits/base/es_peer.c: sock_diag, else
 *                        /proc/net/tcp{,6}; the check the library makes
 *                        for its own TCP clients); others get 403 and a
 *                        log line on stderr, and hold at most a few
 *                        connections at once (client/http/guard.h), so
 *                        that they never lock the owner out.
 *                        The Host header must name this server (DNS
 *                        rebinding): 127.0.0.1, localhost, [::1], or the
 *                        --http address itself, with or without the port.
 *   --http elsewhere     a secret token (32 random bytes, hex) printed in
 *                        the URL as `?token=...`, which every request
 *                        carries (the page's script passes it on); compared
 *                        in constant time; without it 403 and a log line.
 *                        Never a cookie: a browser sends a host's cookies
 *                        to every port of it, another user's server too.
 *   a token of the user's (`metrics --token-file FILE`, es_httpauth_read_token)
 *                        replaces the random one, and on loopback also
 *                        lets other users in (Prometheus runs as its own
 *                        user): it may come as `?token=` or
 *                        `Authorization: Bearer TOKEN` (Prometheus's
 *                        `authorization: credentials_file`). Nothing prints it.
 *
 * es_httpauth_init runs on the main thread before the server starts;
 * es_httpauth_check in libmicrohttpd's threads (it only reads the struct,
 * and logs under stdio's own lock). */
#ifndef ES_HTTPAUTH_H
#define ES_HTTPAUTH_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

struct MHD_Connection;

#define ES_HTTPAUTH_TOKEN_HEX 64  /* a random token's length */
#define ES_HTTPAUTH_TOKEN_MIN 16  /* a token file's, at least */
#define ES_HTTPAUTH_TOKEN_MAX 256 /* and at most */

struct es_httpauth {
    bool loopback;
    bool given; /* the token is the user's (a token file), not random */
    uid_t owner;
    unsigned port;
    char host[80];                         /* the --http address, numeric ("[v6]" for IPv6) */
    char token[ES_HTTPAUTH_TOKEN_MAX + 1]; /* "" on loopback unless given */
};

/* For a server bound to `sa` (port: the one it got). `token`: the user's
 * (from es_httpauth_read_token), or NULL for a random one off loopback and
 * none on loopback. Returns 0, or -1 when no random token could be made
 * (errno says why). */
int es_httpauth_init(struct es_httpauth *a, const struct sockaddr_storage *sa, bool loopback,
                     unsigned port, const char *token);

/* Read a token file into `out` (ES_HTTPAUTH_TOKEN_MAX + 1 bytes): a regular
 * file of this user's that no one else may read or write (like an SSH
 * key), holding ES_HTTPAUTH_TOKEN_MIN to _MAX printable characters without
 * spaces, surrounding white space ignored (as Prometheus reads a
 * credentials_file). Returns 0, or -1 with what is wrong and what to do in
 * `why`. */
int es_httpauth_read_token(const char *path, char *out, char *why, size_t whysize);

enum es_httpauth_verdict {
    ES_HTTPAUTH_OK,
    ES_HTTPAUTH_OTHER_USER, /* 403 */
    ES_HTTPAUTH_NO_TOKEN,   /* 403 */
    ES_HTTPAUTH_WRONG_HOST, /* 421 */
};

/* Whether the peer of connection `fd` is this user (or root); always true
 * off loopback, where the token decides. Logs a refusal. */
bool es_httpauth_fd_is_owner(const struct es_httpauth *a, int fd);

/* The user of the peer of connection `fd` when the peer is a socket of
 * this host (any of its addresses: es_peer_uid), into *uid. Returns 0, or
 * -1 when the peer is elsewhere or cannot be told; logs nothing. */
int es_httpauth_peer_user(int fd, uid_t *uid);

/* Judge one request (logging refusals on stderr). */
enum es_httpauth_verdict es_httpauth_check(const struct es_httpauth *a, struct MHD_Connection *c);

#endif
