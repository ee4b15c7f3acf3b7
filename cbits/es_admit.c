#include "es_admit.h"

#include "es_peer.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* Descriptors the program keeps for itself: the library refuses a client
 * whose connection would take one of them (es_admit_refusal). */
static unsigned fd_reserve(rlim_t limit) {
    rlim_t r = limit / 8;
    return (unsigned)(r < 32 ? 32 : r > 1024 ? 1024 : r);
}

/* Whether a TCP client from this machine belongs to another user (root
 * excepted, as for a Unix socket's 0600), or cannot be told apart from one;
 * if so, `why` says so. Clients from other machines cannot be checked:
 * binding a non-loopback address was asked for, and logged by the server. */
static bool other_user(int fd, char *why, size_t n) {
    struct sockaddr_storage peer, local;
    socklen_t plen = sizeof peer, llen = sizeof local;
    if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0 ||
        getsockname(fd, (struct sockaddr *)&local, &llen) != 0 ||
        !es_peer_is_loopback((struct sockaddr *)&peer))
        return false;
    uid_t uid;
    int r = es_peer_uid((struct sockaddr *)&peer, (struct sockaddr *)&local, &uid);
    if (r != 0) {
        snprintf(why, n,
                 "cannot tell which user it belongs to (/proc/net/tcp: %s); "
                 "GHC_EVENTLOG_ALLOW_OTHER_USERS=1 serves any user",
                 strerror(-r));
        return true;
    }
    if (uid == geteuid() || uid == 0)
        return false;
    snprintf(why, n,
             "it belongs to uid %lu and the program runs as uid %lu "
             "(GHC_EVENTLOG_ALLOW_OTHER_USERS=1 serves other users)",
             (unsigned long)uid, (unsigned long)geteuid());
    return true;
}

const char *es_admit_refusal(const struct es_admit_rules *rules, int fd, unsigned nclients,
                             char *why, size_t n) {
    if (nclients >= rules->max_clients) {
        snprintf(why, n, "%u clients are connected, the most allowed (GHC_EVENTLOG_MAX_CLIENTS)",
                 nclients);
        return why;
    }
    struct rlimit rl;
    if (!rules->is_unix && !rules->allow_other_users && other_user(fd, why, n))
        return why;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)fd + fd_reserve(rl.rlim_cur) >= rl.rlim_cur) {
        snprintf(why, n,
                 "the program has fewer than %u of its %llu file descriptors left, kept for "
                 "its own use (raise ulimit -n)",
                 fd_reserve(rl.rlim_cur), (unsigned long long)rl.rlim_cur);
        return why;
    }
    return NULL;
}
