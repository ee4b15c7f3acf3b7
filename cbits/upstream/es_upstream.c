/* SPDX-License-Identifier: BSD-3-Clause */
/* Upstream eventlog-socket 0.1.3's C API, the part that needs neither the
 * RTS nor the server: its status type, addresses and options, hooks and
 * custom commands, each on top of the library's own function
 * (es_upstream.h). Configuring and starting are es_upstream_start.c. */
#include "es_upstream.h"

#include "format/es_control.h"
#include "base/es_listen.h"
#include "control/es_registry.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

EventlogSocketStatus es_upstream_code(EventlogSocketStatusCode code, int error) {
    return (EventlogSocketStatus){.ess_status_code = code, .ess_error_code = error};
}

EventlogSocketStatus es_upstream_status(int err) {
    switch (err) {
    case 0:
        return es_upstream_code(EVENTLOG_SOCKET_OK, 0);
    case EVENTLOG_SOCKET_ENOTSOCKET:
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, ENOTSOCK);
    case EVENTLOG_SOCKET_ESTOPPED:
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, ESHUTDOWN);
    case EVENTLOG_SOCKET_ENOTCONFIGURED:
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, EINVAL);
    case EVENTLOG_SOCKET_ERESOLVE:
        return es_upstream_code(EVENTLOG_SOCKET_ERR_GAI, es_listen_last_gai_error());
    case EVENTLOG_SOCKET_ENOEVENTLOG:
    case EVENTLOG_SOCKET_EEVENTLOGOFF:
        return es_upstream_code(EVENTLOG_SOCKET_ERR_RTS_FAIL, err);
    }
    /* A negated errno value (the library's own codes are handled above). */
    return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, err < 0 && err > -4096 ? -err : EINVAL);
}

/* The library's own int code for an ERR_SYS status: the errno values
 * es_upstream_status gives the library's codes map back to them, so that
 * the description is the library's. */
static int sys_code(int error) {
    switch (error) {
    case ENOTSOCK:
        return EVENTLOG_SOCKET_ENOTSOCKET;
    case ESHUTDOWN:
        return EVENTLOG_SOCKET_ESTOPPED;
    }
    return -error;
}

static const char *describe(EventlogSocketStatus st, char *buf, size_t len) {
    switch (st.ess_status_code) {
    case EVENTLOG_SOCKET_OK:
        return "success";
    case EVENTLOG_SOCKET_ERR_RTS_NOSUPPORT:
        return "the RTS has no eventlog support (link with -eventlog on GHC < 9.4)";
    case EVENTLOG_SOCKET_ERR_RTS_FAIL:
        if (st.ess_error_code < 0)
            return eventlog_socket_error_message(st.ess_error_code);
        return "the RTS could not start event logging";
    case EVENTLOG_SOCKET_ERR_ENV_NOADDR:
        return eventlog_socket_error_message(EVENTLOG_SOCKET_ENOTCONFIGURED);
    case EVENTLOG_SOCKET_ERR_ENV_TOOLONG:
        return EVENTLOG_SOCKET_ENV_UNIX_PATH " is longer than a Unix socket path may be (107 "
                                             "bytes); choose a shorter path";
    case EVENTLOG_SOCKET_ERR_ENV_NOHOST:
        return EVENTLOG_SOCKET_ENV_INET_PORT " is set but " EVENTLOG_SOCKET_ENV_INET_HOST " is not";
    case EVENTLOG_SOCKET_ERR_ENV_NOPORT:
        return EVENTLOG_SOCKET_ENV_INET_HOST " is set but " EVENTLOG_SOCKET_ENV_INET_PORT
                                             " is not; set the port (0 picks a free one)";
    case EVENTLOG_SOCKET_ERR_CTL_NOSUPPORT:
        return "control commands are not supported (this library always supports them)";
    case EVENTLOG_SOCKET_ERR_CTL_EXISTS:
        return "the namespace or command id is registered already (\"eventlog-socket\" is "
               "the library's own namespace)";
    case EVENTLOG_SOCKET_ERR_GAI:
        snprintf(buf, len, "the TCP host name could not be resolved: %s",
                 gai_strerror(st.ess_error_code));
        return buf;
    case EVENTLOG_SOCKET_ERR_SYS:
        return eventlog_socket_error_message(sys_code(st.ess_error_code));
    }
    return NULL;
}

char *eventlog_socket_strerror(EventlogSocketStatus st) {
    char buf[256];
    const char *text = describe(st, buf, sizeof buf);
    if (text == NULL) {
        errno = EINVAL;
        return NULL;
    }
    return strdup(text); /* sets errno (ENOMEM) when it fails */
}

/* ---- addresses and options ---------------------------------------------- */

void eventlog_socket_addr_free(EventlogSocketAddr *addr) {
    if (addr == NULL)
        return;
    if (addr->esa_tag == EVENTLOG_SOCKET_UNIX) {
        free(addr->esa_unix_addr.esa_unix_path);
        addr->esa_unix_addr.esa_unix_path = NULL;
    } else if (addr->esa_tag == EVENTLOG_SOCKET_INET) {
        free(addr->esa_inet_addr.esa_inet_host);
        free(addr->esa_inet_addr.esa_inet_port);
        addr->esa_inet_addr.esa_inet_host = NULL;
        addr->esa_inet_addr.esa_inet_port = NULL;
    }
}

void eventlog_socket_opts_init(EventlogSocketOpts *opts) {
    if (opts != NULL)
        *opts = (EventlogSocketOpts){.eso_wait = false, .eso_sndbuf = 0, .eso_linger = 0};
}

void eventlog_socket_opts_free(EventlogSocketOpts *opts) {
    (void)opts;
}

/* ---- hooks and custom commands ------------------------------------------ */

EventlogSocketStatus eventlog_socket_register_hook(EventlogSocketHook hook,
                                                   EventlogSocketHookHandler *handler,
                                                   const void *data) {
    if (handler == NULL)
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, EINVAL);
    return es_upstream_status(es_registry_add_hook((int)hook, NULL, handler, data));
}

static EventlogSocketStatus control_status(int r) {
    return r == EVENTLOG_SOCKET_EEXIST ? es_upstream_code(EVENTLOG_SOCKET_ERR_CTL_EXISTS, 0)
                                       : es_upstream_status(r);
}

EventlogSocketStatus
eventlog_socket_control_register_namespace(uint8_t name_len, const char *name,
                                           EventlogSocketControlNamespace **ns_out) {
    if (name == NULL || ns_out == NULL || name_len == 0)
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, EINVAL);
    /* Upstream registers its own namespace first: the name is taken. */
    if (name_len == strlen(ES_CONTROL_UPSTREAM_NAMESPACE) &&
        memcmp(name, ES_CONTROL_UPSTREAM_NAMESPACE, name_len) == 0)
        return es_upstream_code(EVENTLOG_SOCKET_ERR_CTL_EXISTS, 0);
    return control_status(eventlog_socket_register_namespace(name, name_len, ns_out));
}

/* Upstream's NULL for no namespace (ours is ""). */
const char *eventlog_socket_control_strnamespace(EventlogSocketControlNamespace *ns) {
    return ns ? eventlog_socket_namespace_name(ns) : NULL;
}

EventlogSocketStatus eventlog_socket_control_register_command(
    EventlogSocketControlNamespace *ns, EventlogSocketControlCommandId command_id,
    EventlogSocketControlCommandHandler *handler, const void *data) {
    if (handler == NULL)
        return es_upstream_code(EVENTLOG_SOCKET_ERR_SYS, EINVAL);
    return control_status(es_registry_add_command(ns, command_id, NULL, handler, data));
}
