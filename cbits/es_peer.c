#include "es_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool mapped_v4(const struct in6_addr *a) {
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a->s6_addr, prefix, sizeof prefix) == 0;
}

bool es_peer_is_loopback(const struct sockaddr *addr) {
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)addr;
        return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
    }
    if (addr->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)addr)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (mapped_v4(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* An address as the kernel prints it in /proc/net/tcp{,6}: the address's
 * 32-bit words as the machine stores them, each as 8 hex digits, then ':'
 * and the port as 4 hex digits. */
static void proc_format(const struct sockaddr *sa, char *out, size_t n) {
    uint32_t w[4];
    unsigned port;
    int words;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        memcpy(w, &s4->sin_addr, 4);
        port = ntohs(s4->sin_port);
        words = 1;
    } else {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        memcpy(w, &s6->sin6_addr, 16);
        port = ntohs(s6->sin6_port);
        words = 4;
    }
    size_t k = 0;
    for (int i = 0; i < words; i++)
        k += (size_t)snprintf(out + k, n - k, "%08X", (unsigned)w[i]);
    snprintf(out + k, n - k, ":%04X", port);
}

int es_peer_uid(const struct sockaddr *peer, const struct sockaddr *local, uid_t *out) {
    if (peer->sa_family != local->sa_family ||
        (peer->sa_family != AF_INET && peer->sa_family != AF_INET6))
        return -EAFNOSUPPORT;
    char want_local[48], want_remote[48];
    proc_format(peer, want_local, sizeof want_local);
    proc_format(local, want_remote, sizeof want_remote);
    FILE *f = fopen(peer->sa_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6", "re");
    if (f == NULL)
        return -errno;
    char line[512];
    int r = -ENOENT;
    while (fgets(line, sizeof line, f) != NULL) {
        char laddr[48], raddr[48];
        unsigned long uid;
        /* sl local rem st tx:rx tr:when retrnsmt uid ... */
        if (sscanf(line, " %*s %47s %47s %*s %*s %*s %*s %lu", laddr, raddr, &uid) != 3)
            continue;
        if (strcmp(laddr, want_local) == 0 && strcmp(raddr, want_remote) == 0) {
            *out = (uid_t)uid;
            r = 0;
            break;
        }
    }
    fclose(f);
    return r;
}
