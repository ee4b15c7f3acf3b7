/* SPDX-License-Identifier: BSD-3-Clause */
/* Upstream eventlog-socket 0.1.3's C API: configuring from the
 * environment, starting the server, waiting and the status of the
 * library's thread, each on top of the library's own function
 * (es_upstream.h; the RTS side is rts-writer/upstream_api.c). */
#include "es_upstream.h"

#include "base/es_config.h"
#include "server/es_instance.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The longest Unix socket path (sockaddr_un.sun_path without its NUL). */
#define UNIX_PATH_MAX 107

/* Fill `addr` with copies of the strings; false when out of memory. */
static bool fill_unix(EventlogSocketAddr *addr, const char *path) {
    char *p = strdup(path);
    if (p == NULL)
        return false;
    addr->esa_tag = EVENTLOG_SOCKET_UNIX;
    addr->esa_unix_addr.esa_unix_path = p;
    return true;
}

static bool fill_inet(EventlogSocketAddr *addr, const char *host, const char *port) {
    char *h = strdup(host), *p = strdup(port);
    if (h == NULL || p == NULL) {
        free(h);
        free(p);
        return false;
    }
    addr->esa_tag = EVENTLOG_SOCKET_INET;
    addr->esa_inet_addr.esa_inet_host = h;
    addr->esa_inet_addr.esa_inet_port = p;
    return true;
}

static const char *env(const char *name) {
    const char *v = getenv(name);
    return (v != NULL && v[0] != '\0') ? v : NULL;
}

static void fill_opts(EventlogSocketOpts *opts, bool wait) {
    if (opts != NULL) {
        eventlog_socket_opts_init(opts);
        opts->eso_wait = wait;
    }
}

EventlogSocketStatus eventlog_socket_from_env(EventlogSocketAddr *addr_out,
                                              EventlogSocketOpts *opts_out) {
    if (addr_out == NULL)
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, EINVAL);
    const char *path = env(EVENTLOG_SOCKET_ENV_UNIX_PATH);
    const char *host = env(EVENTLOG_SOCKET_ENV_INET_HOST);
    const char *port = env(EVENTLOG_SOCKET_ENV_INET_PORT);
    bool wait = false;
    es_config_parse_bool(getenv(EVENTLOG_SOCKET_ENV_WAIT), &wait);
    /* Upstream's two errors that come with the address, for a message. */
    if (path != NULL && strlen(path) > UNIX_PATH_MAX) {
        if (!fill_unix(addr_out, path))
            return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, ENOMEM);
        fill_opts(opts_out, wait);
        return es_upstream_code(EVENTLOG_SOCKET_ERR_ENV_TOOLONG, 0);
    }
    if (path == NULL && host != NULL && port == NULL) {
        if (!fill_inet(addr_out, host, ""))
            return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, ENOMEM);
        fill_opts(opts_out, wait);
        return es_upstream_code(EVENTLOG_SOCKET_ERR_ENV_NOPORT, 0);
    }
    const struct es_config *cfg;
    int r = es_instance_apply_env(&cfg);
    if (r == EVENTLOG_SOCKET_ENOTCONFIGURED)
        return es_upstream_code(EVENTLOG_SOCKET_ERR_ENV_NOADDR, 0);
    if (r < 0)
        return es_upstream_status(r);
    if (!(cfg->unix_path
              ? fill_unix(addr_out, cfg->unix_path)
              : fill_inet(addr_out, cfg->inet_host ? cfg->inet_host : "127.0.0.1", cfg->inet_port)))
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, ENOMEM);
    fill_opts(opts_out, cfg->wait);
    return es_upstream_code(EVENTLOG_SOCKET_OK, 0);
}

EventlogSocketStatus eventlog_socket_init(const EventlogSocketAddr *addr,
                                          const EventlogSocketOpts *opts) {
    if (addr == NULL)
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, EINVAL);
    if (opts != NULL && opts->eso_linger > 0) {
        unsigned max_s = UINT_MAX / 1000;
        unsigned s = (unsigned)opts->eso_linger < max_s ? (unsigned)opts->eso_linger : max_s;
        int r = es_instance_set_linger_ms(s * 1000);
        if (r < 0)
            return es_upstream_status(r);
    }
    switch (addr->esa_tag) {
    case EVENTLOG_SOCKET_UNIX:
        if (addr->esa_unix_addr.esa_unix_path == NULL)
            break;
        return es_upstream_status(eventlog_socket_init_unix(addr->esa_unix_addr.esa_unix_path));
    case EVENTLOG_SOCKET_INET:
        return es_upstream_status(eventlog_socket_init_tcp(addr->esa_inet_addr.esa_inet_host,
                                                           addr->esa_inet_addr.esa_inet_port));
    }
    return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, EINVAL);
}

EventlogSocketStatus eventlog_socket_wait(void) {
    return es_upstream_status(eventlog_socket_wait_for_client());
}

EventlogSocketStatus eventlog_socket_worker_status(void) {
    return es_upstream_status(eventlog_socket_last_error());
}

EventlogSocketStatus eventlog_socket_control_status(void) {
    return es_upstream_status(eventlog_socket_last_error());
}
