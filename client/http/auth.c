/* SPDX-License-Identifier: BSD-3-Clause */
#include "auth.h"

#include "base/es_peer.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int es_httpauth_init(struct es_httpauth *a, const struct sockaddr_storage *sa, bool loopback,
                     unsigned port, const char *token) {
    memset(a, 0, sizeof *a);
    a->loopback = loopback;
    a->owner = geteuid();
    a->port = port;
    char num[INET6_ADDRSTRLEN] = "";
    socklen_t len =
        sa->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo((const struct sockaddr *)sa, len, num, sizeof num, NULL, 0, NI_NUMERICHOST) ==
        0)
        snprintf(a->host, sizeof a->host, sa->ss_family == AF_INET6 ? "[%s]" : "%s", num);
    if (token != NULL) {
        assert(strlen(token) >= ES_HTTPAUTH_TOKEN_MIN && strlen(token) <= ES_HTTPAUTH_TOKEN_MAX);
        snprintf(a->token, sizeof a->token, "%s", token);
        a->given = true;
        return 0;
    }
    if (loopback)
        return 0;
    uint8_t raw[ES_HTTPAUTH_TOKEN_HEX / 2];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return -1;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(a->token + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

int es_httpauth_read_token(const char *path, char *out, char *why, size_t whysize) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, whysize, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char buf[ES_HTTPAUTH_TOKEN_MAX + 64];
    ssize_t n = -1;
    if (!S_ISREG(st.st_mode))
        snprintf(why, whysize, "%s: not a regular file", path);
    else if (st.st_uid != geteuid())
        snprintf(why, whysize, "%s: owned by uid %lu, not by you (uid %lu): a token must be yours",
                 path, (unsigned long)st.st_uid, (unsigned long)geteuid());
    else if ((st.st_mode & 077) != 0)
        snprintf(why, whysize,
                 "%s: others may read or write it (mode %04o): chmod 600 %s, then make a new token",
                 path, (unsigned)(st.st_mode & 07777), path);
    else if (st.st_size > ES_HTTPAUTH_TOKEN_MAX + 32)
        snprintf(why, whysize, "%s: %lld bytes: a token file holds one token of at most %d", path,
                 (long long)st.st_size, ES_HTTPAUTH_TOKEN_MAX);
    else if ((n = read(fd, buf, sizeof buf - 1)) < 0)
        snprintf(why, whysize, "%s: %s", path, strerror(errno));
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    char *b = buf, *e = buf + n;
    while (b < e && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    size_t len = (size_t)(e - b);
    for (const char *q = b; q < e; q++)
        if (!isgraph((unsigned char)*q)) {
            snprintf(why, whysize, "%s: the token has a space or a control character in it", path);
            return -1;
        }
    if (len < ES_HTTPAUTH_TOKEN_MIN || len > ES_HTTPAUTH_TOKEN_MAX) {
        snprintf(why, whysize,
                 "%s: a token of %zu characters: it needs %d to %d (e.g. `openssl rand -hex 32`)",
                 path, len, ES_HTTPAUTH_TOKEN_MIN, ES_HTTPAUTH_TOKEN_MAX);
        return -1;
    }
    memcpy(out, b, len);
    out[len] = '\0';
    return 0;
}

/* One line on stderr per second at most, whatever a flood of refused
 * requests does. */
static void log_refusal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_refusal(const char *fmt, ...) {
    static _Atomic long long last;
    long long now = (long long)time(NULL);
    long long prev = atomic_load(&last);
    if (prev == now || !atomic_compare_exchange_strong(&last, &prev, now))
        return;
    char line[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "eventlog-socket: %s\n", line); /* serve or metrics */
}

/* `host` is `name` or `name:PORT`. */
static bool names(const char *host, const char *name, unsigned port) {
    size_t k = strlen(name);
    if (k == 0 || strncmp(host, name, k) != 0)
        return false;
    if (host[k] == '\0')
        return true;
    char p[16];
    snprintf(p, sizeof p, ":%u", port);
    return strcmp(host + k, p) == 0;
}

static bool host_ok(const struct es_httpauth *a, struct MHD_Connection *c) {
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (host == NULL)
        return false;
    static const char *fixed[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (names(host, fixed[i], a->port))
            return true;
    return names(host, a->host, a->port);
}

/* The peer's user, into *uid. Returns 0, or -1 after logging why it
 * cannot be told (`quiet`: without). */
static int peer_uid(int fd, uid_t *uid, bool quiet) {
    struct sockaddr_storage peer, local;
    socklen_t plen = sizeof peer, llen = sizeof local;
    if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0 ||
        getsockname(fd, (struct sockaddr *)&local, &llen) != 0) {
        if (!quiet)
            log_refusal("refused an HTTP request: cannot tell its peer (%s)", strerror(errno));
        return -1;
    }
    int r = es_peer_uid(NULL, (struct sockaddr *)&peer, (struct sockaddr *)&local, uid);
    if (r != 0) {
        if (!quiet)
            log_refusal("refused an HTTP request: cannot tell which user it comes from "
                        "(the kernel's socket lookup: %s)",
                        strerror(-r));
        return -1;
    }
    return 0;
}

int es_httpauth_peer_user(int fd, uid_t *uid) {
    return peer_uid(fd, uid, true);
}

/* The owner of the peer's socket: this user or root. `quiet`: no log
 * line for another user (a token may still let it in). */
static bool peer_is_owner(const struct es_httpauth *a, int fd, bool quiet) {
    uid_t uid;
    if (peer_uid(fd, &uid, false) != 0)
        return false;
    if (uid == a->owner || uid == 0)
        return true;
    if (!quiet)
        log_refusal("refused an HTTP request of uid %lu: this server is uid %lu's alone",
                    (unsigned long)uid, (unsigned long)a->owner);
    return false;
}

bool es_httpauth_fd_is_owner(const struct es_httpauth *a, int fd) {
    return !a->loopback || peer_is_owner(a, fd, a->given);
}

/* Equal, in a time that does not depend on where they differ (only on the
 * length, which a token file's user chose). */
static bool same_token(const char *given, const char *token) {
    size_t n = strlen(token);
    if (given == NULL || n == 0 || strlen(given) != n)
        return false;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(given[i] ^ token[i]);
    return d == 0;
}

/* The token the request carries, if it is the right one: as
 * `Authorization: Bearer`, or as ?token=. Never a cookie: a browser sends
 * a host's cookies to every port of it (RFC 6265 8.5), so another user's
 * server on another port of the same host would receive it. */
static enum es_httpauth_verdict token_verdict(const struct es_httpauth *a,
                                              struct MHD_Connection *c) {
    const char *auth =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth != NULL && strncasecmp(auth, "Bearer ", 7) == 0 && same_token(auth + 7, a->token))
        return ES_HTTPAUTH_OK;
    if (same_token(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"), a->token))
        return ES_HTTPAUTH_OK;
    return ES_HTTPAUTH_NO_TOKEN;
}

enum es_httpauth_verdict es_httpauth_check(const struct es_httpauth *a, struct MHD_Connection *c) {
    if (a->loopback) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        enum es_httpauth_verdict v = ES_HTTPAUTH_OTHER_USER;
        if (ci != NULL && peer_is_owner(a, ci->connect_fd, a->given))
            v = ES_HTTPAUTH_OK;
        else if (ci != NULL && a->given && (v = token_verdict(a, c)) == ES_HTTPAUTH_NO_TOKEN) {
            log_refusal("refused an HTTP request of another user without the token "
                        "(the --token-file's, as Authorization: Bearer or ?token=)");
            v = ES_HTTPAUTH_OTHER_USER;
        }
        if (v == ES_HTTPAUTH_OTHER_USER)
            return v;
        return host_ok(a, c) ? v : ES_HTTPAUTH_WRONG_HOST;
    }
    enum es_httpauth_verdict v = token_verdict(a, c);
    if (v == ES_HTTPAUTH_NO_TOKEN)
        log_refusal(a->given ? "refused an HTTP request without the token (the --token-file's, "
                               "as Authorization: Bearer or ?token=)"
                             : "refused an HTTP request without the token: open the URL this "
                               "command printed (with ?token=)");
    return v;
}
