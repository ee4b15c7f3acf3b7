/* The workload's C main: eventlog-socket when GHC_EVENTLOG_UNIX_PATH (or
 * _INET_PORT) is set, otherwise the RTS's own writers (so the same binary
 * measures "no eventlog" and "file writer" too). Event logging is on only
 * when the command line says +RTS -l. */
#include <Rts.h>
#include <stdio.h>
#include <stdlib.h>

#include "eventlog_socket.h"

extern StgClosure ZCMain_main_closure;

int main(int argc, char *argv[]) {
    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    conf.rts_hs_main = true;
    if (getenv("GHC_EVENTLOG_UNIX_PATH") || getenv("GHC_EVENTLOG_INET_PORT")) {
        int err = eventlog_socket_init_from_env();
        if (err < 0) {
            fprintf(stderr, "workload: %s\n", eventlog_socket_strerror(err));
            return 1;
        }
        conf.eventlog_writer = &SocketEventLogWriter;
    }
    return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
}
