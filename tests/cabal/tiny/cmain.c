/* SPDX-License-Identifier: BSD-3-Clause */
/* A custom C main built by cabal against eventlog-socket's installed header. */
#include <Rts.h>
#include <eventlog_socket.h>
#include <stdio.h>

extern StgClosure ZCMain_main_closure;

int main(int argc, char *argv[]) {
    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    conf.rts_opts = "-l";
    conf.rts_hs_main = true;
    conf.eventlog_writer = &SocketEventLogWriter;
    int err = eventlog_socket_init_from_env();
    if (err < 0) {
        fprintf(stderr, "tiny-c-main: %s\n", eventlog_socket_error_message(err));
        return 1;
    }
    return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
}
