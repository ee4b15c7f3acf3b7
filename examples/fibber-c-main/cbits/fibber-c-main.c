/* SPDX-License-Identifier: BSD-3-Clause */
/* A custom C main that streams the program's eventlog over a socket.
 *
 * The socket comes from the environment: GHC_EVENTLOG_UNIX_PATH, or
 * GHC_EVENTLOG_INET_PORT (and GHC_EVENTLOG_INET_HOST); GHC_EVENTLOG_WAIT=1
 * holds the program until a client connects. Event logging (-l) is on, and
 * RTS options are accepted, so `+RTS -hT -i0.1 -RTS` adds heap samples. */
#include <Rts.h>
#include <stdio.h>

#include "eventlog_socket.h"

extern StgClosure ZCMain_main_closure;

int main(int argc, char *argv[]) {
    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    conf.rts_opts_suggestions = true;
    conf.rts_opts = "-l";                         /* event logging on */
    conf.rts_hs_main = true;                      /* as GHC's own main sets it */
    conf.eventlog_writer = &SocketEventLogWriter; /* ... through us */

    int err = eventlog_socket_init_from_env(); /* or _init_unix / _init_tcp */
    if (err < 0) {
        fprintf(stderr, "%s: cannot stream the eventlog: %s\n", argv[0],
                eventlog_socket_error_message(err));
        return 1;
    }
    return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
}
