/* eventlog_socket_hs_main: what GHC's generated main does, plus marking the
 * library ready once the RTS is up, so a custom C main stays short. */
#include "es_rts.h"

int eventlog_socket_hs_main(int argc, char *argv[], RtsConfig conf, StgClosure *main_closure) {
    hs_init_ghc(&argc, &argv, conf);
    eventlog_socket_ready();

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
