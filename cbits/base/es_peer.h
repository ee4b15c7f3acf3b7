/* SPDX-License-Identifier: BSD-3-Clause */
/* Who is on the other end of a connection.
 *
 * A Unix socket tells by itself: the kernel records the connecting
 * process's credentials (SO_PEERCRED). A TCP port on loopback is open to
 * every account on the machine, so for a loopback TCP peer the owner of the
 * peer's own socket is looked up: the peer's socket is the one whose local
 * address is the peer's and whose remote address is ours. The lookup asks
 * the kernel for exactly that socket (NETLINK_SOCK_DIAG, inet_diag: one
 * hash lookup whatever the number of connections), and only where that is
 * unavailable reads the list of every TCP socket of the machine
 * (/proc/net/tcp{,6}), a cost that grows with the connections of the whole
 * machine. A peer whose address is IPv4-mapped (::ffff:a.b.c.d, an IPv4
 * client of a dual-stack listener bound to ::) is an IPv4 socket, looked up
 * as one.
 *
 * A peer that has already closed its socket (an orphan, or TIME_WAIT) has
 * no owner any more: the kernel reports such sockets with uid 0 and no
 * inode, which is not root's word; they are reported as -ENOTCONN.
 *
 * Loop thread (a finder belongs to the thread that uses it). */
#ifndef ES_PEER_H
#define ES_PEER_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Whether `addr` is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x). */
bool es_peer_is_loopback(const struct sockaddr *addr);

/* The lookup's state: a sock_diag socket kept open between lookups, and
 * whether the kernel answers on it. */
struct es_peer_finder {
    int diag_fd;           /* -1 until the first lookup */
    bool diag_ok;          /* sock_diag has found a socket: its "none" is true */
    bool diag_off;         /* sock_diag is unavailable: /proc is read instead */
    unsigned seq;          /* netlink sequence numbers */
    unsigned lookups_proc; /* lookups that had to read /proc (tests) */
};

void es_peer_finder_init(struct es_peer_finder *f);
void es_peer_finder_close(struct es_peer_finder *f);

/* The owner of the TCP socket at `peer` connected to `local` (both as
 * getpeername/getsockname give them). Returns 0, -ENOENT when no such
 * socket exists, -ENOTCONN when it exists but its owner has closed it, or a
 * negated errno from the lookup. `f` may be NULL (a lookup of its own). */
int es_peer_uid(struct es_peer_finder *f, const struct sockaddr *peer, const struct sockaddr *local,
                uid_t *out);

/* The user of the process that connected to the Unix socket `fd`
 * (SO_PEERCRED). Returns 0 or a negated errno. */
int es_peer_unix_uid(int fd, uid_t *out);

#endif
