/* SPDX-License-Identifier: BSD-3-Clause */
/* The hook that hs_exit calls first, on every way out of the program:
 * periodic flushing and lossless waits must end before the RTS shuts down.
 * Put in by eventlog_socket_hs_main before the RTS starts, or afterwards
 * into the RTS's own configuration for a program that GHC's main started
 * (eventlog_socket_start_*). Its own file so that both of those, in
 * hs_main.c and api.c, depend on it and not on each other. */
#include "es_rts.h"

#include "control/es_registry.h"

#include <stdatomic.h>

/* The program's own exit hook, called after ours. */
static void (*user_exit_hook)(void);

/* Whether exit_hook is in place (set once). */
static atomic_bool exit_hook_installed;

/* The RTS's own copy of the RtsConfig that hs_init_ghc was given, whose
 * onExitHook hs_exit calls. It is not in GHC's public headers: the static
 * RTS defines it (hidden from 9.4 on, which a static link still resolves),
 * the shared RTS does not export it. Weak, so that a program linked with
 * -dynamic still links and runs, just without periodic flushes. */
extern RtsConfig rtsConfig __attribute__((weak));

/* The RTS calls this first thing in hs_exit, on every way out (main
 * returning, exitWith, an uncaught exception): periodic flushing must end
 * before the RTS starts shutting down. */
static void exit_hook(void) {
    /* From now on no program thread waits for a lossless client longer
     * than the linger time: exit must not hang on a client. */
    struct es_server *s = es_instance_server();
    if (s != NULL)
        es_server_exiting(s);
    /* PRE_END hooks first, while the stream still flows; then no custom
     * handler may call into the RTS any more. */
    es_registry_quiesce(1000);
    es_rts_flush_disable();
    if (user_exit_hook != NULL)
        user_exit_hook();
}

void es_rts_take_exit_hook(RtsConfig *conf) {
    atomic_store(&exit_hook_installed, true);
    user_exit_hook = conf->onExitHook;
    conf->onExitHook = exit_hook;
}

bool es_rts_install_exit_hook(void) {
    if (atomic_load(&exit_hook_installed))
        return true;
    if (&rtsConfig == NULL)
        return false;
    if (atomic_exchange(&exit_hook_installed, true))
        return true;
    user_exit_hook = rtsConfig.onExitHook;
    rtsConfig.onExitHook = exit_hook;
    return true;
}
