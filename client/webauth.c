#include "webauth.h"

#include "es_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define COOKIE "es_token"

int es_webauth_init(struct es_webauth *a, const struct sockaddr_storage *sa, bool loopback,
                    unsigned port) {
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
    if (loopback)
        return 0;
    uint8_t raw[ES_WEBAUTH_TOKEN_HEX / 2];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return -1;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(a->token + 2 * i, 3, "%02x", raw[i]);
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

static bool host_ok(const struct es_webauth *a, struct MHD_Connection *c) {
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (host == NULL)
        return false;
    static const char *fixed[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (names(host, fixed[i], a->port))
            return true;
    return names(host, a->host, a->port);
}

/* The owner of the peer's socket: this user or root. */
static bool peer_is_owner(const struct es_webauth *a, int fd) {
    struct sockaddr_storage peer, local;
    socklen_t plen = sizeof peer, llen = sizeof local;
    if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0 ||
        getsockname(fd, (struct sockaddr *)&local, &llen) != 0) {
        log_refusal("refused an HTTP request: cannot tell its peer (%s)", strerror(errno));
        return false;
    }
    uid_t uid;
    int r = es_peer_uid(NULL, (struct sockaddr *)&peer, (struct sockaddr *)&local, &uid);
    if (r != 0) {
        log_refusal("refused an HTTP request: cannot tell which user it comes from "
                    "(the kernel's socket lookup: %s)",
                    strerror(-r));
        return false;
    }
    if (uid == a->owner || uid == 0)
        return true;
    log_refusal("refused an HTTP request of uid %lu: this server is uid %lu's alone",
                (unsigned long)uid, (unsigned long)a->owner);
    return false;
}

bool es_webauth_fd_is_owner(const struct es_webauth *a, int fd) {
    return !a->loopback || peer_is_owner(a, fd);
}

/* Equal, in a time that does not depend on where they differ. */
static bool same_token(const char *given, const char *token) {
    if (given == NULL || strlen(given) != ES_WEBAUTH_TOKEN_HEX)
        return false;
    unsigned char d = 0;
    for (size_t i = 0; i < ES_WEBAUTH_TOKEN_HEX; i++)
        d |= (unsigned char)(given[i] ^ token[i]);
    return d == 0;
}

enum es_webauth_verdict es_webauth_check(const struct es_webauth *a, struct MHD_Connection *c) {
    if (a->loopback) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci == NULL || !peer_is_owner(a, ci->connect_fd))
            return ES_WEBAUTH_OTHER_USER;
        return host_ok(a, c) ? ES_WEBAUTH_OK : ES_WEBAUTH_WRONG_HOST;
    }
    if (same_token(MHD_lookup_connection_value(c, MHD_COOKIE_KIND, COOKIE), a->token))
        return ES_WEBAUTH_OK;
    if (same_token(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"), a->token))
        return ES_WEBAUTH_OK_SET_COOKIE;
    log_refusal("refused an HTTP request without the token: open the URL this command printed "
                "(with ?token=)");
    return ES_WEBAUTH_NO_TOKEN;
}

void es_webauth_cookie(const struct es_webauth *a, char *out, size_t size) {
    snprintf(out, size, COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict", a->token);
}
