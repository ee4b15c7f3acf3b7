/* Telling who is on the other end of a loopback TCP connection: the owner
 * of the peer's socket, found in /proc/net/tcp{,6}, is this process's
 * user for a connection this process made, over IPv4 and IPv6. */
#define _GNU_SOURCE
#include "es_peer.h"
#include "tap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <unistd.h>

/* Connect to a listener on the loopback of `family`; check what es_peer_uid
 * says of the accepted connection (as the server sees it). */
static void check(int family) {
    const char *name = family == AF_INET ? "IPv4" : "IPv6";
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    }
    int l = socket(family, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&ss, len) != 0 || listen(l, 4) != 0) {
        ok(1, "# SKIP no %s loopback here", name);
        if (l >= 0)
            close(l);
        return;
    }
    getsockname(l, (struct sockaddr *)&ss, &len);
    int c = socket(family, SOCK_STREAM, 0);
    ok(connect(c, (struct sockaddr *)&ss, len) == 0, "%s: connected", name);
    int a = accept(l, NULL, NULL);
    struct sockaddr_storage peer, local;
    socklen_t plen = sizeof peer, llen = sizeof local;
    getpeername(a, (struct sockaddr *)&peer, &plen);
    getsockname(a, (struct sockaddr *)&local, &llen);
    ok(es_peer_is_loopback((struct sockaddr *)&peer), "%s: the peer is on loopback", name);
    uid_t uid = (uid_t)-1;
    int r = es_peer_uid((struct sockaddr *)&peer, (struct sockaddr *)&local, &uid);
    ok(r == 0 && uid == geteuid(), "%s: the peer's socket belongs to uid %ld (we are %ld)", name,
       r == 0 ? (long)uid : -1L, (long)geteuid());
    /* The same addresses the other way round name the server's socket
     * (ours too), and a port nobody uses names nothing. */
    ((struct sockaddr_in *)&peer)->sin_port ^= htons(1);
    ok(es_peer_uid((struct sockaddr *)&peer, (struct sockaddr *)&local, &uid) == -ENOENT,
       "%s: a socket that does not exist is not found", name);
    close(a);
    close(c);
    close(l);
}

int main(void) {
    check(AF_INET);
    check(AF_INET6);
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
    return tap_done();
}
