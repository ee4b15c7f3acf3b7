/* Who is on the other end of a TCP connection from this machine.
 *
 * A Unix socket file is created 0600, so only its owner (and root) can
 * connect. A TCP port on loopback is open to every account on the machine;
 * to make it as safe by default, the server looks up which user owns the
 * peer's socket and refuses other users. Linux lists every TCP socket of
 * the machine with its owner in /proc/net/tcp and /proc/net/tcp6; the
 * peer's socket is the line whose local address is the peer's and whose
 * remote address is ours. Loop thread (it reads a file, once per accepted
 * loopback client). */
#ifndef ES_PEER_H
#define ES_PEER_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Whether `addr` is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x). */
bool es_peer_is_loopback(const struct sockaddr *addr);

/* The owner of the socket at `peer` connected to `local` (both as
 * getpeername/getsockname give them). Returns 0, -ENOENT when no such
 * socket is listed, or a negated errno from reading the list. */
int es_peer_uid(const struct sockaddr *peer, const struct sockaddr *local, uid_t *out);

#endif
