/* SPDX-License-Identifier: BSD-3-Clause */
/* The process at the other end of a loopback TCP connection (client/source/peerpid.h). */
#include "peerpid.h"

#include <dirent.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An address as /proc/net/tcp{,6} prints it: the address's 32-bit words
 * in the kernel's byte order (%08X each), then the port (%04X). */
struct row_addr {
    uint32_t w[4];
    unsigned port;
};

static bool to_row(const struct sockaddr *sa, struct row_addr *out, bool *v6) {
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        memcpy(&out->w[0], &in->sin_addr, 4);
        out->port = ntohs(in->sin_port);
        *v6 = false;
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        memcpy(out->w, &in6->sin6_addr, 16);
        out->port = ntohs(in6->sin6_port);
        *v6 = true;
        return true;
    }
    return false;
}

/* "HEX:PORT" at `s` into `out` (one word for IPv4, four for IPv6). */
static bool parse_addr(const char *s, bool v6, struct row_addr *out) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < (v6 ? 4 : 1); i++) {
        char word[9];
        memcpy(word, s + 8 * i, 8);
        word[8] = '\0';
        char *end;
        out->w[i] = (uint32_t)strtoul(word, &end, 16);
        if (*end != '\0')
            return false;
    }
    s += v6 ? 32 : 8;
    if (*s != ':')
        return false;
    out->port = (unsigned)strtoul(s + 1, NULL, 16);
    return true;
}

static bool same(const struct row_addr *a, const struct row_addr *b) {
    return a->port == b->port && memcmp(a->w, b->w, sizeof a->w) == 0;
}

/* The inode of the socket local=`peer`, remote=`local`; 0: none. */
static unsigned long find_inode(const struct row_addr *peer, const struct row_addr *local,
                                bool v6) {
    FILE *f = fopen(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", "r");
    if (f == NULL)
        return 0;
    char line[512];
    unsigned long inode = 0;
    while (inode == 0 && fgets(line, sizeof line, f) != NULL) {
        char la[64], ra[64];
        unsigned long ino;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %*s %*s %lu", la, ra, &ino) != 3)
            continue;
        struct row_addr l, r;
        if (parse_addr(la, v6, &l) && parse_addr(ra, v6, &r) && same(&l, peer) && same(&r, local))
            inode = ino;
    }
    fclose(f);
    return inode;
}

/* The process holding socket `inode` among those whose /proc/PID/fd can be read. */
static int find_owner(unsigned long inode) {
    char want[64];
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return 0;
    int found = 0;
    struct dirent *p;
    while (found == 0 && (p = readdir(proc)) != NULL) {
        int pid = atoi(p->d_name);
        if (pid <= 0 || pid == getpid())
            continue;
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
        DIR *fds = opendir(dir);
        if (fds == NULL)
            continue;
        struct dirent *d;
        while (found == 0 && (d = readdir(fds)) != NULL) {
            char path[384], target[64];
            snprintf(path, sizeof path, "%s/%s", dir, d->d_name);
            ssize_t n = readlink(path, target, sizeof target - 1);
            if (n > 0) {
                target[n] = '\0';
                if (strcmp(target, want) == 0)
                    found = pid;
            }
        }
        closedir(fds);
    }
    closedir(proc);
    return found;
}

int es_peerpid_tcp(const struct sockaddr *peer, const struct sockaddr *local) {
    struct row_addr p, l;
    bool v6p, v6l;
    if (!to_row(peer, &p, &v6p) || !to_row(local, &l, &v6l) || v6p != v6l)
        return 0;
    unsigned long inode = find_inode(&p, &l, v6p);
    return inode != 0 ? find_owner(inode) : 0;
}
