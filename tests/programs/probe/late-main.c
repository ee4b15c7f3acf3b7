/* SPDX-License-Identifier: BSD-3-Clause */
/* A C main that starts the RTS with its usual eventlog writer (the file
 * writer, with -l), so the probe's "start-unix" command can switch a running
 * program over to eventlog-socket. With PROBE_NO_L=1 in the environment
 * the RTS starts without -l, as a Haskell program built without
 * -with-rtsopts=-l runs. */
#include <Rts.h>

#include <stdlib.h>

#include "eventlog_socket.h"

extern StgClosure ZCMain_main_closure;

int main(int argc, char *argv[]) {
    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    const char *no_l = getenv("PROBE_NO_L");
    conf.rts_opts = no_l != NULL && no_l[0] == '1' ? NULL : "-l";
    conf.rts_hs_main = true;
    return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
}
