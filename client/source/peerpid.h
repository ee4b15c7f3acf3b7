/* SPDX-License-Identifier: BSD-3-Clause */
/* Which local process is at the other end of a loopback TCP connection:
 * the owner of the socket whose local address is our peer's and whose
 * remote address is ours, found by its inode in /proc/net/tcp{,6} and then
 * among the descriptors of /proc/PID/fd. Only processes of the same user
 * (or any, for root) can be seen. For names that GHC 9.0's stream gives
 * only at exit (`record`'s PROGRAM-PID over TCP). Any thread. */
#ifndef ES_PEERPID_H
#define ES_PEERPID_H

#include <sys/socket.h>

/* The pid, or 0 when it cannot be found. */
int es_peerpid_tcp(const struct sockaddr *peer, const struct sockaddr *local);

#endif
