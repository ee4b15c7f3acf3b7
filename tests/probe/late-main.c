/* A C main that starts the RTS with its usual eventlog writer (the file
 * writer, with -l), so the probe's "start-unix" command can switch a running
 * program over to eventlog-socket. */
#include <Rts.h>

#include "eventlog_socket.h"

extern StgClosure ZCMain_main_closure;

int main(int argc, char *argv[]) {
    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    conf.rts_opts = "-l";
    conf.rts_hs_main = true;
    return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
}
