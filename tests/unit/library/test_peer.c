/* SPDX-License-Identifier: BSD-3-Clause */
/* Telling who is on the other end of a connection: the owner of the
 * peer's socket over loopback TCP (IPv4, IPv6, and an IPv4 client of a
 * dual-stack listener, whose address is IPv4-mapped), by sock_diag and by
 * the /proc fallback alike; a peer that closed or reset its socket has no
 * owner; another user's socket (as root: a child that becomes nobody) is
 * that user's; a Unix socket's peer by SO_PEERCRED. */
#define _GNU_SOURCE
#include "base/es_peer.h"
#include "server_util.h"
#include "../unit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* A listener on `host` (any family), its address in *ss. */
static int listen_on(const char *host, int family, struct sockaddr_storage *ss, socklen_t *len) {
    memset(ss, 0, sizeof *ss);
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_family = AF_INET;
        inet_pton(AF_INET, host, &a->sin_addr);
        *len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        inet_pton(AF_INET6, host, &a->sin6_addr);
        *len = sizeof *a;
    }
    int l = socket(family, SOCK_STREAM, 0);
    if (family == AF_INET6) {
        int off = 0; /* dual-stack, whatever the system's default */
        setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    if (l < 0 || bind(l, (struct sockaddr *)ss, *len) != 0 || listen(l, 4) != 0) {
        if (l >= 0)
            close(l);
        return -1;
    }
    getsockname(l, (struct sockaddr *)ss, len);
    return l;
}

/* The two ends of the accepted connection `a`, as the server sees them. */
struct ends {
    struct sockaddr_storage peer, local;
};

static struct ends ends_of(int a) {
    struct ends e;
    socklen_t plen = sizeof e.peer, llen = sizeof e.local;
    getpeername(a, (struct sockaddr *)&e.peer, &plen);
    getsockname(a, (struct sockaddr *)&e.local, &llen);
    return e;
}

/* What es_peer_uid says of those. */
static int lookup_ends(struct es_peer_finder *f, const struct ends *e, uid_t *uid) {
    return es_peer_uid(f, (const struct sockaddr *)&e->peer, (const struct sockaddr *)&e->local,
                       uid);
}

static int lookup(struct es_peer_finder *f, int a, uid_t *uid) {
    struct ends e = ends_of(a);
    return lookup_ends(f, &e, uid);
}

/* A client of `family` connects to a listener on `host` (whose family is
 * `lfamily`); check what the finder `f` says. */
static void check(struct es_peer_finder *f, const char *how, const char *host, int lfamily,
                  const char *client_host, int family) {
    struct sockaddr_storage ss, cs;
    socklen_t len, clen;
    int l = listen_on(host, lfamily, &ss, &len);
    if (l < 0) {
        ok(1, "# SKIP %s: no listener on %s here", how, host);
        return;
    }
    int port = ntohs(lfamily == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                        : ((struct sockaddr_in6 *)&ss)->sin6_port);
    memset(&cs, 0, sizeof cs);
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&cs;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, client_host, &a->sin_addr);
        clen = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&cs;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        inet_pton(AF_INET6, client_host, &a->sin6_addr);
        clen = sizeof *a;
    }
    int c = socket(family, SOCK_STREAM, 0);
    ok(connect(c, (struct sockaddr *)&cs, clen) == 0, "%s: connected", how);
    int a = accept(l, NULL, NULL);
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    getpeername(a, (struct sockaddr *)&peer, &plen);
    ok(es_peer_is_loopback((struct sockaddr *)&peer), "%s: the peer is on loopback", how);
    uid_t uid = (uid_t)-1;
    int r = lookup(f, a, &uid);
    ok(r == 0 && uid == geteuid(), "%s: the peer's socket belongs to uid %ld (we are %ld; %d)", how,
       r == 0 ? (long)uid : -1L, (long)geteuid(), r);
    /* A peer that closed its socket (an orphan or TIME_WAIT now) has no
     * owner, though the kernel lists it with uid 0. */
    close(c);
    sleep_ms(50);
    r = lookup(f, a, &uid);
    ok(r == -ENOTCONN || r == -ENOENT, "%s: a peer that closed has no owner (%d)", how, r);
    close(a);
    /* One that reset its socket is gone (the addresses as they were: the
     * reset ends our side too). */
    c = socket(family, SOCK_STREAM, 0);
    connect(c, (struct sockaddr *)&cs, clen);
    a = accept(l, NULL, NULL);
    struct ends e = ends_of(a);
    struct linger lg = {1, 0};
    setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(c);
    sleep_ms(50);
    r = lookup_ends(f, &e, &uid);
    ok(r == -ENOENT, "%s: a peer that reset its socket is not found (%d)", how, r);
    close(a);
    close(l);
}

/* As root: a child that is uid 65534 connects; its socket is nobody's. */
static void other_user(struct es_peer_finder *f, const char *how) {
    if (geteuid() != 0) {
        ok(1, "# SKIP %s: another user's socket needs root", how);
        return;
    }
    struct sockaddr_storage ss;
    socklen_t len;
    int l = listen_on("127.0.0.1", AF_INET, &ss, &len);
    int ready[2];
    if (pipe(ready) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(1);
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&ss, len) != 0)
            _exit(1);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char x;
    ok(read(ready[0], &x, 1) == 1, "%s: nobody's child connected", how);
    int a = accept(l, NULL, NULL);
    uid_t uid = 0;
    int r = lookup(f, a, &uid);
    ok(r == 0 && uid == 65534, "%s: its socket belongs to uid 65534 (%d, %ld)", how, r, (long)uid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(a);
    close(l);
    close(ready[0]);
    close(ready[1]);
}

static void all_cases(struct es_peer_finder *f, const char *by) {
    char how[64];
    snprintf(how, sizeof how, "%s, IPv4", by);
    check(f, how, "127.0.0.1", AF_INET, "127.0.0.1", AF_INET);
    snprintf(how, sizeof how, "%s, IPv6", by);
    check(f, how, "::1", AF_INET6, "::1", AF_INET6);
    snprintf(how, sizeof how, "%s, IPv4 to a dual-stack ::", by);
    check(f, how, "::", AF_INET6, "127.0.0.1", AF_INET);
    snprintf(how, sizeof how, "%s, v4-mapped from an IPv6 socket", by);
    check(f, how, "::", AF_INET6, "::ffff:127.0.0.1", AF_INET6);
    snprintf(how, sizeof how, "%s, another user", by);
    other_user(f, how);
}

UNIT_CASE(peer_unix) {
    int sv[2];
    ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "a Unix socket pair");
    uid_t uid = (uid_t)-1;
    int r = es_peer_unix_uid(sv[0], &uid);
    ok(r == 0 && uid == geteuid(), "a Unix socket's peer is told by SO_PEERCRED (uid %ld)",
       (long)uid);
    close(sv[0]);
    close(sv[1]);
}

UNIT_CASE(peer_sock_diag) {
    struct es_peer_finder f;
    es_peer_finder_init(&f);
    all_cases(&f, "sock_diag");
    ok(f.lookups_proc == 0, "sock_diag answered every lookup (%u read /proc)", f.lookups_proc);
    es_peer_finder_close(&f);
}

/* Where the kernel has no TCP sock_diag: /proc/net/tcp{,6}. */
UNIT_CASE(peer_proc_fallback) {
    struct es_peer_finder f;
    es_peer_finder_init(&f);
    f.diag_off = true;
    all_cases(&f, "/proc");
    ok(f.lookups_proc > 0, "the fallback read /proc (%u lookups)", f.lookups_proc);
    es_peer_finder_close(&f);
}

UNIT_CASE(peer_loopback_addresses) {
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(0x7f000102); /* 127.0.1.2 */
    ok(es_peer_is_loopback((struct sockaddr *)&a), "127.0.1.2 is loopback");
    a.sin_addr.s_addr = htonl(0x0a000001); /* 10.0.0.1 */
    ok(!es_peer_is_loopback((struct sockaddr *)&a), "10.0.0.1 is not");
    struct sockaddr_in6 b = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &b.sin6_addr);
    ok(es_peer_is_loopback((struct sockaddr *)&b), "::ffff:127.0.0.1 is loopback");
    inet_pton(AF_INET6, "::ffff:192.168.1.1", &b.sin6_addr);
    ok(!es_peer_is_loopback((struct sockaddr *)&b), "::ffff:192.168.1.1 is not");
}
