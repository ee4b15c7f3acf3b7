/* SPDX-License-Identifier: BSD-3-Clause */
/* A C main written against upstream eventlog-socket 0.1.3's eventlog_socket.h
 * only: it compiles only if every declaration of that header a program can
 * call or name is here, at its type (declarations() below).
 *
 * It registers hooks (POST_START calls the Haskell side's hs_post_start,
 * PRE_END its hs_pre_end) and a custom command, reads the socket from the
 * environment, and runs the Haskell program (CMain.hs) the way
 * COMPAT_ENTRY says: "wrap" (default) through eventlog_socket_wrap_hs_main,
 * "manual" through eventlog_socket_init, EventLogSocketWriter,
 * eventlog_socket_signal_ghc_rts_ready, eventlog_socket_wait and the RTS
 * API, upstream's fine-grained way. */
#include <Rts.h>
#include <eventlog_socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern StgClosure ZCMain_main_closure;

/* The Haskell side's foreign exports (CMain.hs). */
extern void hs_post_start(void);
extern void hs_pre_end(void);

static const int hook_tag = 42;

static void on_post_start(const void *data) {
    if (data != &hook_tag)
        fprintf(stderr, "upstream-c-main: the hook got the wrong data pointer\n");
    hs_post_start();
}

static void on_pre_end(const void *data) {
    (void)data;
    hs_pre_end();
}

static void on_command(const EventlogSocketControlNamespace *const ns,
                       const EventlogSocketControlCommandId id, const void *data) {
    (void)ns;
    (void)id;
    (void)data;
}

/* Upstream's declarations at upstream's types: a mismatch does not compile. */
static int declarations(void) {
    EventlogSocketStatus (*start)(const EventlogSocketAddr *, const EventlogSocketOpts *) =
        eventlog_socket_start;
    EventlogSocketStatus (*from_env)(EventlogSocketAddr *, EventlogSocketOpts *) =
        eventlog_socket_from_env;
    EventlogSocketStatus (*init)(const EventlogSocketAddr *, const EventlogSocketOpts *) =
        eventlog_socket_init;
    void (*wrap)(int, char *[], RtsConfig, StgClosure *, const EventlogSocketAddr *,
                 const EventlogSocketOpts *) = eventlog_socket_wrap_hs_main;
    char *(*describe)(EventlogSocketStatus) = eventlog_socket_strerror;
    void (*addr_free)(EventlogSocketAddr *) = eventlog_socket_addr_free;
    void (*opts_init)(EventlogSocketOpts *) = eventlog_socket_opts_init;
    void (*opts_free)(EventlogSocketOpts *) = eventlog_socket_opts_free;
    EventlogSocketStatus (*statuses[4])(void) = {
        eventlog_socket_signal_ghc_rts_ready, eventlog_socket_wait, eventlog_socket_worker_status,
        eventlog_socket_control_status};
    EventlogSocketStatus (*register_hook)(EventlogSocketHook, EventlogSocketHookHandler *,
                                          const void *) = eventlog_socket_register_hook;
    const char *(*strnamespace)(EventlogSocketControlNamespace *) =
        eventlog_socket_control_strnamespace;
    EventlogSocketStatus (*register_namespace)(uint8_t, const char *,
                                               EventlogSocketControlNamespace **) =
        eventlog_socket_control_register_namespace;
    EventlogSocketStatus (*register_command)(EventlogSocketControlNamespace *,
                                             EventlogSocketControlCommandId,
                                             EventlogSocketControlCommandHandler *, const void *) =
        eventlog_socket_control_register_command;
    const EventLogWriter *writer = &EventLogSocketWriter;
    EventlogSocketHookHandler *hook_handler = on_pre_end;
    EventlogSocketControlCommandHandler *command_handler = on_command;

    EventlogSocketStatusCode codes[] = {EVENTLOG_SOCKET_OK,
                                        EVENTLOG_SOCKET_ERR_RTS_NOSUPPORT,
                                        EVENTLOG_SOCKET_ERR_RTS_FAIL,
                                        EVENTLOG_SOCKET_ERR_ENV_NOADDR,
                                        EVENTLOG_SOCKET_ERR_ENV_TOOLONG,
                                        EVENTLOG_SOCKET_ERR_ENV_NOHOST,
                                        EVENTLOG_SOCKET_ERR_ENV_NOPORT,
                                        EVENTLOG_SOCKET_ERR_CTL_NOSUPPORT,
                                        EVENTLOG_SOCKET_ERR_CTL_EXISTS,
                                        EVENTLOG_SOCKET_ERR_GAI,
                                        EVENTLOG_SOCKET_ERR_SYS};
    EventlogSocketTag tags[] = {EVENTLOG_SOCKET_UNIX, EVENTLOG_SOCKET_INET};
    EventlogSocketHook hooks[] = {EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING,
                                  EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING};
    EventlogSocketUnixAddr unix_addr = {.esa_unix_path = NULL};
    EventlogSocketInetAddr inet_addr = {.esa_inet_host = NULL, .esa_inet_port = NULL};
    EventlogSocketAddr addr = {.esa_tag = EVENTLOG_SOCKET_INET, .esa_inet_addr = inet_addr};
    addr.esa_unix_addr = unix_addr;
    EventlogSocketOpts opts = {.eso_wait = false, .eso_sndbuf = 0, .eso_linger = 0};
    EventlogSocketStatus status = {.ess_status_code = EVENTLOG_SOCKET_OK, .ess_error_code = 0};
    EventlogSocketControlCommandId id = 255;
    const char *vars[] = {EVENTLOG_SOCKET_ENV_UNIX_PATH, EVENTLOG_SOCKET_ENV_INET_HOST,
                          EVENTLOG_SOCKET_ENV_INET_PORT, EVENTLOG_SOCKET_ENV_WAIT};
    int version = EVENTLOG_SOCKET_CONTROL_PROTOCOL_VERSION;

    void *used[] = {(void *)&start,
                    (void *)&from_env,
                    (void *)&init,
                    (void *)&wrap,
                    (void *)&describe,
                    (void *)&addr_free,
                    (void *)&opts_init,
                    (void *)&opts_free,
                    (void *)statuses,
                    (void *)&register_hook,
                    (void *)&strnamespace,
                    (void *)&register_namespace,
                    (void *)&register_command,
                    (void *)&writer,
                    (void *)&hook_handler,
                    (void *)&command_handler,
                    (void *)codes,
                    (void *)tags,
                    (void *)hooks,
                    (void *)&addr,
                    (void *)&opts,
                    (void *)&status,
                    (void *)&id,
                    (void *)vars};
    return (int)(sizeof used / sizeof used[0]) + version + (int)opts.eso_wait;
}

/* Print the status's description and exit, unless it is OK. */
static void check(EventlogSocketStatus status, const char *what) {
    if (status.ess_status_code == EVENTLOG_SOCKET_OK)
        return;
    char *message = eventlog_socket_strerror(status);
    fprintf(stderr, "upstream-c-main: %s: %s\n", what, message ? message : "?");
    free(message);
    exit(1);
}

int main(int argc, char *argv[]) {
    if (declarations() != 24) {
        fprintf(stderr, "upstream-c-main: declarations() changed\n");
        return 1;
    }
    check(eventlog_socket_register_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING,
                                        on_post_start, &hook_tag),
          "register_hook");
    check(
        eventlog_socket_register_hook(EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING, on_pre_end, NULL),
        "register_hook");
    EventlogSocketControlNamespace *ns = NULL;
    check(eventlog_socket_control_register_namespace(strlen("compat"), "compat", &ns),
          "register_namespace");
    check(eventlog_socket_control_register_command(ns, 1, on_command, NULL), "register_command");

    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    conf.rts_opts = "-l";

    EventlogSocketAddr addr = {0};
    EventlogSocketOpts opts = {0};
    eventlog_socket_opts_init(&opts);
    check(eventlog_socket_from_env(&addr, &opts), "from_env");

    const char *entry = getenv("COMPAT_ENTRY");
    if (entry == NULL || strcmp(entry, "wrap") == 0) {
        eventlog_socket_wrap_hs_main(argc, argv, conf, &ZCMain_main_closure, &addr, &opts);
        return 1; /* not reached */
    }

    check(eventlog_socket_init(&addr, &opts), "init");
    conf.eventlog_writer = &EventLogSocketWriter;
    hs_init_ghc(&argc, &argv, conf);
    check(eventlog_socket_signal_ghc_rts_ready(), "signal_ghc_rts_ready");
    if (opts.eso_wait)
        check(eventlog_socket_wait(), "wait");
    Capability *cap = rts_lock();
    rts_evalLazyIO(&cap, &ZCMain_main_closure, NULL);
    SchedulerStatus status = rts_getSchedStatus(cap);
    rts_unlock(cap);
    check(eventlog_socket_worker_status(), "worker_status");
    check(eventlog_socket_control_status(), "control_status");
    eventlog_socket_addr_free(&addr);
    eventlog_socket_opts_free(&opts);
    hs_exit();
    return status == Success ? 0 : 1;
}
