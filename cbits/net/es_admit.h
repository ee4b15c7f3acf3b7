/* SPDX-License-Identifier: BSD-3-Clause */
/* Who may do what: the limit on clients served at once, the descriptors
 * the program keeps for itself, over TCP the same-user rule that a Unix
 * socket's mode 0600 gives, and who counts as the program's owner (for
 * lossless delivery, es_lossless.h). The owner is the user the program
 * runs as, and root, who could stop or read the program anyway. Called on
 * the loop thread. */
#ifndef ES_ADMIT_H
#define ES_ADMIT_H

#include "base/es_peer.h"

#include <stdbool.h>
#include <stddef.h>

struct es_admit_rules {
    unsigned max_clients;   /* connections served at once */
    bool allow_other_users; /* TCP: serve loopback clients of any user */
    bool is_unix;           /* the socket's mode already keeps other users out */
};

/* Whether the connection on `fd`, arriving while `nclients` are served,
 * must be refused: NULL if not, else `why` filled with the reason. Nothing
 * is allocated, and a loopback TCP peer costs one lookup in `finder`. */
const char *es_admit_refusal(const struct es_admit_rules *rules, struct es_peer_finder *finder,
                             int fd, unsigned nclients, char *why, size_t n);

/* Whether the peer of the connected socket `fd` is the program's owner
 * (its user, or root): for a Unix socket by SO_PEERCRED, over TCP only a
 * loopback peer whose socket's owner is known. If not, `why` says who it
 * is instead. */
bool es_admit_is_owner(const struct es_admit_rules *rules, struct es_peer_finder *finder, int fd,
                       char *why, size_t n);

#endif
