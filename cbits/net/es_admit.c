/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_admit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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

static bool owner_uid(uid_t uid) {
    return uid == geteuid() || uid == 0;
}

/* Who is on the other end of `fd`. */
enum who { OWNER, OTHER_USER, REMOTE, UNKNOWN };

static void describe_addr(const struct sockaddr_storage *ss, char *out, size_t n) {
    char host[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host, sizeof host);
    else if (ss->ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof host);
    snprintf(out, n, "%s", host);
}

static enum who identify(const struct es_admit_rules *rules, struct es_peer_finder *finder, int fd,
                         char *why, size_t n) {
    uid_t uid;
    if (rules->is_unix) {
        int r = es_peer_unix_uid(fd, &uid);
        if (r != 0) {
            snprintf(why, n, "cannot tell which user it belongs to (SO_PEERCRED: %s)",
                     strerror(-r));
            return UNKNOWN;
        }
    } else {
        struct sockaddr_storage peer, local;
        socklen_t plen = sizeof peer, llen = sizeof local;
        if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0 ||
            getsockname(fd, (struct sockaddr *)&local, &llen) != 0) {
            snprintf(why, n, "it is gone already");
            return UNKNOWN;
        }
        if (!es_peer_is_loopback((struct sockaddr *)&peer)) {
            char host[INET6_ADDRSTRLEN];
            describe_addr(&peer, host, sizeof host);
            snprintf(why, n, "it connects from %s, not from this machine's loopback", host);
            return REMOTE;
        }
        int r = es_peer_uid(finder, (struct sockaddr *)&peer, (struct sockaddr *)&local, &uid);
        if (r != 0) {
            snprintf(why, n, "cannot tell which user it belongs to (%s)",
                     r == -ENOTCONN ? "it has closed its socket already"
                     : r == -ENOENT ? "its socket is gone"
                                    : strerror(-r));
            return UNKNOWN;
        }
    }
    if (owner_uid(uid))
        return OWNER;
    snprintf(why, n, "it belongs to uid %lu and the program runs as uid %lu", (unsigned long)uid,
             (unsigned long)geteuid());
    return OTHER_USER;
}

const char *es_admit_refusal(const struct es_admit_rules *rules, struct es_peer_finder *finder,
                             int fd, unsigned nclients, char *why, size_t n) {
    if (nclients >= rules->max_clients) {
        snprintf(why, n, "%u clients are connected, the most allowed (GHC_EVENTLOG_MAX_CLIENTS)",
                 nclients);
        return why;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)fd + fd_reserve(rl.rlim_cur) >= rl.rlim_cur) {
        snprintf(why, n,
                 "the program has fewer than %u of its %llu file descriptors left, kept for "
                 "its own use (raise ulimit -n)",
                 fd_reserve(rl.rlim_cur), (unsigned long long)rl.rlim_cur);
        return why;
    }
    /* A Unix socket's mode keeps other users out; clients from other
     * machines cannot be checked: binding a non-loopback address was asked
     * for, and logged by the server. */
    if (rules->is_unix || rules->allow_other_users)
        return NULL;
    char who[200];
    enum who w = identify(rules, finder, fd, who, sizeof who);
    if (w == OWNER || w == REMOTE)
        return NULL;
    snprintf(why, n, "%s%s", who,
             w == OTHER_USER ? " (GHC_EVENTLOG_ALLOW_OTHER_USERS=1 serves other users)" : "");
    return why;
}

bool es_admit_is_owner(const struct es_admit_rules *rules, struct es_peer_finder *finder, int fd,
                       char *why, size_t n) {
    return identify(rules, finder, fd, why, n) == OWNER;
}
