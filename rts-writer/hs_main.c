/* eventlog_socket_hs_main: what GHC's generated main does, plus marking the
 * library ready once the RTS is up, so a custom C main stays short. */
#include "es_rts.h"

#include "es_log.h"
#include "es_registry.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* GHC_EVENTLOG_GRACEFUL_SIGTERM: SIGTERM (systemd, docker stop, Kubernetes)
 * ends a program at once by default, bypassing hs_exit: every client's
 * stream is cut without its end marker. The RTS already turns SIGINT into
 * an orderly exit (the main thread gets UserInterrupt, hs_exit runs, a
 * second SIGINT kills), so SIGTERM is made to raise SIGINT, which is
 * async-signal-safe. Where the RTS installed no SIGINT handler
 * (--install-signal-handlers=no) SIGINT, and so SIGTERM, still kills. */
static void sigterm_as_sigint(int sig) {
    (void)sig;
    raise(SIGINT);
}

static void install_graceful_sigterm(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sigterm_as_sigint;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0)
        es_log("cannot install the SIGTERM handler: %s", strerror(errno));
}

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

int eventlog_socket_hs_main(int argc, char *argv[], RtsConfig conf, StgClosure *main_closure) {
    atomic_store(&exit_hook_installed, true);
    user_exit_hook = conf.onExitHook;
    conf.onExitHook = exit_hook;
    hs_init_ghc(&argc, &argv, conf);
    if (es_rts.graceful_sigterm)
        install_graceful_sigterm();
    eventlog_socket_ready();
    es_rts_flush_enable();

    Capability *cap = rts_lock();
    rts_evalLazyIO(&cap, main_closure, NULL);
    SchedulerStatus status = rts_getSchedStatus(cap);
    rts_unlock(cap);

    int code;
    switch (status) {
    case Killed:
        errorBelch("main thread exited (uncaught exception)");
        code = EXIT_KILLED;
        break;
    case Interrupted:
        errorBelch("interrupted");
        code = EXIT_INTERRUPTED;
        break;
    case HeapExhausted:
        code = EXIT_HEAPOVERFLOW;
        break;
    case Success:
        code = EXIT_SUCCESS;
        break;
    default:
        /* GHC's own main would barf() here; this library never aborts. */
        errorBelch("main thread completed with unexpected status %d", (int)status);
        code = EXIT_FAILURE;
        break;
    }
    shutdownHaskellAndExit(code, 0);
}
