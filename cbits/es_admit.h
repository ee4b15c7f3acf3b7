/* Who may connect: the limit on clients served at once, the descriptors
 * the program keeps for itself, and, over TCP, the same-user rule that a
 * Unix socket's mode 0600 gives. Called on the loop thread for each
 * accepted connection. */
#ifndef ES_ADMIT_H
#define ES_ADMIT_H

#include <stdbool.h>
#include <stddef.h>

struct es_admit_rules {
    unsigned max_clients;   /* connections served at once */
    bool allow_other_users; /* TCP: serve loopback clients of any user */
    bool is_unix;           /* the socket's mode already keeps other users out */
};

/* Whether the connection on `fd`, arriving while `nclients` are served,
 * must be refused: NULL if not, else `why` filled with the reason. */
const char *es_admit_refusal(const struct es_admit_rules *rules, int fd, unsigned nclients,
                             char *why, size_t n);

#endif
