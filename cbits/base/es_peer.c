/* SPDX-License-Identifier: BSD-3-Clause */
/* For struct ucred (SO_PEERCRED). */
#define _GNU_SOURCE
#include "es_peer.h"

#include "es_fd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The kernel's TCP states (include/net/tcp_states.h). */
#define TCP_STATE_LISTEN 10

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

/* One end of a TCP connection, as the kernel keys its sockets: an
 * IPv4-mapped IPv6 address is the IPv4 address it maps. */
struct endpoint {
    int family;
    size_t alen; /* 4 or 16 */
    uint8_t addr[16];
    uint16_t port_be;
};

static bool endpoint_of(const struct sockaddr *sa, struct endpoint *e) {
    memset(e, 0, sizeof *e);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        *e = (struct endpoint){.family = AF_INET, .alen = 4, .port_be = s4->sin_port};
        memcpy(e->addr, &s4->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        if (mapped_v4(&s6->sin6_addr)) {
            *e = (struct endpoint){.family = AF_INET, .alen = 4, .port_be = s6->sin6_port};
            memcpy(e->addr, s6->sin6_addr.s6_addr + 12, 4);
        } else {
            *e = (struct endpoint){.family = AF_INET6, .alen = 16, .port_be = s6->sin6_port};
            memcpy(e->addr, &s6->sin6_addr, 16);
        }
        return true;
    }
    return false;
}

void es_peer_finder_init(struct es_peer_finder *f) {
    *f = (struct es_peer_finder){.diag_fd = -1};
}

void es_peer_finder_close(struct es_peer_finder *f) {
    if (f->diag_fd >= 0)
        close(f->diag_fd);
    f->diag_fd = -1;
}

/* ---- sock_diag ---------------------------------------------------------- */

/* Ask the kernel for the socket whose local end is `src` and remote end
 * `dst`. 0 with *uid, -ENOENT, -ENOTCONN (closed: no owner), or another
 * negated errno when the kernel cannot be asked. */
static int diag_lookup(struct es_peer_finder *f, const struct endpoint *src,
                       const struct endpoint *dst, uid_t *uid) {
    if (f->diag_fd < 0) {
        f->diag_fd =
            es_fd_above_std(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
        if (f->diag_fd < 0)
            return -errno;
    }
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 r;
    } req;
    memset(&req, 0, sizeof req);
    req.nlh.nlmsg_len = sizeof req;
    req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nlh.nlmsg_flags = NLM_F_REQUEST; /* one socket, not a dump */
    req.nlh.nlmsg_seq = ++f->seq;
    req.r.sdiag_family = (uint8_t)src->family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0u;
    req.r.id.idiag_sport = src->port_be;
    req.r.id.idiag_dport = dst->port_be;
    memcpy(req.r.id.idiag_src, src->addr, src->alen);
    memcpy(req.r.id.idiag_dst, dst->addr, dst->alen);
    req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(f->diag_fd, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0)
        return -errno;
    /* The kernel answers within the send: nothing to wait for. */
    for (;;) {
        union {
            struct nlmsghdr h;
            /* cppcheck-suppress unusedStructMember ; it sizes the buffer, h aligns it */
            char bytes[4096];
        } buf;
        ssize_t n = recv(f->diag_fd, &buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0)
            return errno == EAGAIN ? -EPROTO : -errno;
        for (struct nlmsghdr *h = &buf.h; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_seq != req.nlh.nlmsg_seq)
                continue; /* an answer to an earlier question */
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                return e->error < 0 ? e->error : -EPROTO;
            }
            if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
                continue;
            const struct inet_diag_msg *m = NLMSG_DATA(h);
            /* A listener found instead (nothing connected there) is not
             * the peer's socket. */
            if (m->idiag_state == TCP_STATE_LISTEN || m->id.idiag_dport != dst->port_be)
                return -ENOENT;
            if (m->idiag_inode == 0)
                return -ENOTCONN;
            *uid = (uid_t)m->idiag_uid;
            return 0;
        }
    }
}

/* ---- /proc/net/tcp{,6} --------------------------------------------------- */

/* An endpoint as the kernel prints it there: the address's 32-bit words as
 * the machine stores them, each as 8 hex digits, then ':' and the port as
 * 4 hex digits. */
static void proc_format(const struct endpoint *e, const uint8_t *addr, size_t alen, char *out,
                        size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < alen; i += 4) {
        uint32_t w;
        memcpy(&w, addr + i, 4);
        k += (size_t)snprintf(out + k, n - k, "%08X", (unsigned)w);
    }
    snprintf(out + k, n - k, ":%04X", (unsigned)ntohs(e->port_be));
}

/* The socket with local end `src` and remote end `dst` in one file, the
 * addresses given as `alen` bytes (an IPv4 address in /proc/net/tcp6 is
 * written mapped). */
static int proc_lookup(const char *file, const struct endpoint *src, const uint8_t *src_addr,
                       const struct endpoint *dst, const uint8_t *dst_addr, size_t alen,
                       uid_t *out) {
    char want_local[48], want_remote[48];
    proc_format(src, src_addr, alen, want_local, sizeof want_local);
    proc_format(dst, dst_addr, alen, want_remote, sizeof want_remote);
    FILE *fp = fopen(file, "re");
    if (fp == NULL)
        return -errno;
    char line[512];
    int r = -ENOENT;
    while (fgets(line, sizeof line, fp) != NULL) {
        char laddr[48], raddr[48];
        unsigned long uid, inode;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode ... */
        if (sscanf(line, " %*s %47s %47s %*s %*s %*s %*s %lu %*s %lu", laddr, raddr, &uid,
                   &inode) != 4)
            continue;
        if (strcmp(laddr, want_local) == 0 && strcmp(raddr, want_remote) == 0) {
            *out = (uid_t)uid;
            r = inode == 0 ? -ENOTCONN : 0;
            break;
        }
    }
    fclose(fp);
    return r;
}

static int proc_uid(const struct endpoint *src, const struct endpoint *dst, uid_t *out) {
    if (src->family == AF_INET6)
        return proc_lookup("/proc/net/tcp6", src, src->addr, dst, dst->addr, 16, out);
    int r = proc_lookup("/proc/net/tcp", src, src->addr, dst, dst->addr, 4, out);
    if (r != -ENOENT)
        return r;
    /* An IPv6 socket connected to a mapped address is listed mapped. */
    uint8_t s6[16] = {[10] = 0xff, [11] = 0xff}, d6[16] = {[10] = 0xff, [11] = 0xff};
    memcpy(s6 + 12, src->addr, 4);
    memcpy(d6 + 12, dst->addr, 4);
    int r6 = proc_lookup("/proc/net/tcp6", src, s6, dst, d6, 16, out);
    return r6 == 0 || r6 == -ENOTCONN ? r6 : r;
}

int es_peer_uid(struct es_peer_finder *f, const struct sockaddr *peer, const struct sockaddr *local,
                uid_t *out) {
    struct endpoint p, l;
    if (!endpoint_of(peer, &p) || !endpoint_of(local, &l) || p.family != l.family)
        return -EAFNOSUPPORT;
    struct es_peer_finder once;
    if (f == NULL) {
        es_peer_finder_init(&once);
        f = &once;
    }
    int r = -ENOSYS;
    if (!f->diag_off) {
        r = diag_lookup(f, &p, &l, out);
        if (r == -ENOENT && !f->diag_ok) {
            /* A kernel without TCP sock_diag says "no such socket" too.
             * Our own end of the connection surely exists: if it is
             * found, the answer is to be trusted from now on. */
            uid_t mine;
            if (diag_lookup(f, &l, &p, &mine) == 0)
                f->diag_ok = true;
            else
                f->diag_off = true;
        } else if (r == 0 || r == -ENOTCONN) {
            f->diag_ok = true;
        } else if (r != -ENOENT) {
            f->diag_off = true;
        }
    }
    if (f->diag_off) {
        f->lookups_proc++;
        r = proc_uid(&p, &l, out);
    }
    if (f == &once)
        es_peer_finder_close(&once);
    return r;
}

int es_peer_unix_uid(int fd, uid_t *out) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -errno;
    *out = cred.uid;
    return 0;
}
