/* SPDX-License-Identifier: BSD-3-Clause */
/* eventlog_socket_error_message: descriptions of the library's int error
 * codes (upstream's EventlogSocketStatus is described in es_upstream.c). */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <string.h>

const char *eventlog_socket_error_message(int err) {
    switch (err) {
    case 0:
        return "success";
    case EVENTLOG_SOCKET_EINVAL:
        return "invalid argument or configuration value";
    case EVENTLOG_SOCKET_ENOMEM:
        return "out of memory";
    case EVENTLOG_SOCKET_ENAMETOOLONG:
        return "Unix socket path is too long for a socket address (at most 107 bytes)";
    case EVENTLOG_SOCKET_EADDRINUSE:
        return "address already in use (another process is listening there)";
    case EVENTLOG_SOCKET_EALREADY:
        return "eventlog-socket is already serving; it can be started only once";
    case EVENTLOG_SOCKET_EEXIST:
        return "already registered";
    case EVENTLOG_SOCKET_ENOTSUP:
        return "not supported by this GHC version";
    case EVENTLOG_SOCKET_ENOTSOCKET:
        return "the path exists and is not a socket; it was left untouched (choose another path)";
    case EVENTLOG_SOCKET_ENOTCONFIGURED:
        return "no socket configured: set GHC_EVENTLOG_UNIX_PATH, or GHC_EVENTLOG_INET_PORT "
               "(and optionally GHC_EVENTLOG_INET_HOST), or call eventlog_socket_init_*";
    case EVENTLOG_SOCKET_ENOEVENTLOG:
        return "the RTS cannot log events: link the program with -eventlog (GHC before 9.4 "
               "needs it)";
    case EVENTLOG_SOCKET_ESTOPPED:
        return "the eventlog-socket server has stopped";
    case EVENTLOG_SOCKET_ERESOLVE:
        return "the TCP host name could not be resolved";
    case EVENTLOG_SOCKET_EINTR:
        return "interrupted (SIGINT) while waiting for the first client";
    case EVENTLOG_SOCKET_EEVENTLOGOFF:
        return "event logging is off, so there would be no events to stream: run the program "
               "with +RTS -l (link it with -rtsopts, or with -with-rtsopts=-l)";
    }
    if (err < 0 && err > -4096) {
        /* Negated errno from the operating system. glibc's strerror returns
         * static strings for valid errno values, which is all we pass. */
        return strerror(-err);
    }
    return "unknown eventlog-socket error";
}
