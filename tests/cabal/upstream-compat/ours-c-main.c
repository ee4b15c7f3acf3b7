/* SPDX-License-Identifier: BSD-3-Clause */
/* upstream-c-main's program (CMain.hs) through this package's own C API:
 * eventlog_socket_init_from_env and eventlog_socket_hs_main, hooks by
 * eventlog_socket_add_hook. */
#include <Rts.h>
#include <eventlog_socket.h>
#include <stdio.h>

extern StgClosure ZCMain_main_closure;

/* The Haskell side's foreign exports (CMain.hs). */
extern void hs_post_start(void);
extern void hs_pre_end(void);

static void on_post_start(void *data) {
    (void)data;
    hs_post_start();
}

static void on_pre_end(void *data) {
    (void)data;
    hs_pre_end();
}

int main(int argc, char *argv[]) {
    int err;
    if ((err = eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING,
                                        on_post_start, NULL)) < 0 ||
        (err = eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING, on_pre_end,
                                        NULL)) < 0 ||
        (err = eventlog_socket_init_from_env()) < 0) {
        fprintf(stderr, "ours-c-main: %s\n", eventlog_socket_error_message(err));
        return 1;
    }
    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    conf.rts_opts = "-l";
    conf.rts_hs_main = true;
    conf.eventlog_writer = &SocketEventLogWriter;
    return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
}
