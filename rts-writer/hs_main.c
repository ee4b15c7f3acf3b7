/* SPDX-License-Identifier: BSD-3-Clause */
/* eventlog_socket_hs_main (and upstream's eventlog_socket_wrap_hs_main):
 * what GHC's generated main does, plus marking the library ready once the
 * RTS is up (which runs the POST_START hooks before main), so a custom C
 * main stays short. */
#include "es_rts.h"

#include "base/es_log.h"
#include "base/es_signal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* GHC_EVENTLOG_GRACEFUL_SIGTERM: SIGTERM (systemd, docker stop, Kubernetes)
 * ends a program at once by default, bypassing hs_exit: every client's
 * stream is cut without its end marker. The RTS already turns SIGINT into
 * an orderly exit (the main thread gets UserInterrupt, hs_exit runs, a
 * second SIGINT kills), so SIGTERM is made to send SIGINT (kill, which is
 * async-signal-safe). Where the RTS installed no SIGINT handler
 * (--install-signal-handlers=no) SIGINT, and so SIGTERM, still kills. */
static void sigterm_as_sigint(int sig) {
    (void)sig;
    /* To the process, not raise()'s calling thread: the kernel may have
     * handed SIGTERM to a thread that has SIGINT blocked for a moment (the
     * RTS blocks it around its own signal bookkeeping), and if that thread
     * then waits for a lossless client, a SIGINT pending on it alone would
     * wait as long. */
    kill(getpid(), SIGINT);
}

static void install_graceful_sigterm(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sigterm_as_sigint;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0)
        es_log("cannot install the SIGTERM handler: %s", strerror(errno));
}

int eventlog_socket_hs_main(int argc, char *argv[], RtsConfig conf, StgClosure *main_closure) {
    return es_rts_hs_main(argc, argv, conf, main_closure, false);
}

int es_rts_hs_main(int argc, char *argv[], RtsConfig conf, StgClosure *main_closure, bool wait) {
    es_rts_take_exit_hook(&conf);
    hs_init_ghc(&argc, &argv, conf);
    if (es_rts.graceful_sigterm)
        install_graceful_sigterm();
    /* The library sees Ctrl-C too (waits for lossless clients end). */
    es_signal_chain();
    /* The POST_START hooks run in here, on this thread (which holds no
     * capability), before main; flushing starts. */
    eventlog_socket_ready();
    if (wait) {
        es_log("waiting for a client to connect");
        eventlog_socket_wait_for_client();
    }

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
