/* SPDX-License-Identifier: BSD-3-Clause */
/* The public API that needs the RTS: readiness (and with it the POST_START
 * hooks), the flush interval, and switching a running RTS over to this
 * library's writer; and the hooks the RTS-free rest of it
 * (cbits/server/es_instance.c) calls. */
#include "es_rts.h"

#include "server/es_instance.h"
#include "base/es_log.h"
#include "control/es_registry.h"
#include "base/es_signal.h"

#include <assert.h>
#include <string.h>

struct es_rts es_rts = {
    .control_lock = PTHREAD_MUTEX_INITIALIZER,
    .flush_lock = PTHREAD_MUTEX_INITIALIZER,
    .flush_ms = -1,
};

/* The RTS's collections so far and its capabilities, for the registry's
 * cost of a handler (es_registry_set_rts). getRTSStats counts collections
 * with or without +RTS -T (which only adds their times). */
static uint64_t collections(void) {
    RTSStats s;
    getRTSStats(&s);
    return s.gcs;
}

static unsigned capabilities(void) {
    return enabled_capabilities;
}

void eventlog_socket_ready(void) {
    es_rts_control_ready();
    /* Live streaming needs periodic flushes, which must stop before hs_exit
     * shuts the RTS down, and the PRE_END hooks run at its beginning: both
     * take the exit hook, which eventlog_socket_hs_main put in before the
     * RTS started, or which goes into the RTS's configuration now. */
    if (es_rts_install_exit_hook())
        es_rts_flush_enable();
    /* The window written at a failing exit, when asked for. */
    es_rts_watch_failure();
    /* The POST_START hooks, here and now (the first time only), then
     * custom command handlers and hooks may run on the library's threads. */
    es_registry_post_start();
    es_registry_set_rts(collections, capabilities);
    es_registry_set_running(true);
}

int eventlog_socket_set_flush_interval_ms(unsigned ms) {
    if (ms > 60000)
        return EVENTLOG_SOCKET_EINVAL;
#if __GLASGOW_HASKELL__ < 902
    if (ms > 0) {
        es_log("GHC %d.%d cannot flush its eventlog buffers; events arrive when a buffer "
               "fills and at exit",
               __GLASGOW_HASKELL__ / 100, __GLASGOW_HASKELL__ % 100);
        return EVENTLOG_SOCKET_ENOTSUP;
    }
#endif
    pthread_mutex_lock(&es_rts.flush_lock);
    es_rts.flush_ms = (int)ms;
    pthread_mutex_unlock(&es_rts.flush_lock);
    es_rts_flush_update();
    return 0;
}

int es_rts_can_switch(void) {
    if (eventLogStatus() == EVENTLOG_NOT_SUPPORTED)
        return EVENTLOG_SOCKET_ENOEVENTLOG;
    /* Without -l no event class is enabled (they are chosen once, at
     * start-up): startEventLogging would succeed and the clients would
     * get a header and nothing else. A log stopped by the program itself
     * after starting with -l may be restarted. */
    if (eventLogStatus() != EVENTLOG_RUNNING && RtsFlags.TraceFlags.tracing != TRACE_EVENTLOG)
        return EVENTLOG_SOCKET_EEVENTLOGOFF;
    return 0;
}

int es_rts_switch_writer(bool wait) {
    int r = 0;
    /* No periodic flush may run while event logging stops and starts. */
    pthread_mutex_lock(&es_rts.flush_lock);
    r = es_rts_can_switch();
    if (r == 0) {
        if (eventLogStatus() == EVENTLOG_RUNNING)
            endEventLogging();
        if (!startEventLogging(&SocketEventLogWriter))
            r = EVENTLOG_SOCKET_ENOEVENTLOG;
    }
    pthread_mutex_unlock(&es_rts.flush_lock);
    if (r < 0) {
        struct es_server *s = es_instance_detach();
        es_server_stop(s);
        es_server_free(s);
        return r;
    }
    /* The POST_START hooks run here, before the caller (startWith) goes on;
     * so do the exit hook and flushing. */
    eventlog_socket_ready();
    /* The library sees Ctrl-C too (waits for lossless clients, or for the
     * first client, end). */
    es_signal_chain();
    if (!wait)
        return 0;
    es_log("waiting for a client to connect");
    return eventlog_socket_wait_for_client();
}

/* The refusals of es_rts_can_switch come before anything listens, so no
 * "listening on" line (which scripts wait for) precedes them. */
int eventlog_socket_start_unix(const char *path, bool wait) {
    int r = es_rts_can_switch();
    if (r == 0)
        r = eventlog_socket_init_unix(path);
    return r < 0 ? r : es_rts_switch_writer(wait);
}

int eventlog_socket_start_tcp(const char *host, const char *port, bool wait) {
    int r = es_rts_can_switch();
    if (r == 0)
        r = eventlog_socket_init_tcp(host, port);
    return r < 0 ? r : es_rts_switch_writer(wait);
}

static void set_graceful_sigterm(bool on) {
    es_rts.graceful_sigterm = on;
}

/* Before GHC 9.4 an RTS linked without -eventlog cannot log events: its
 * eventLogStatus() says EVENTLOG_NOT_SUPPORTED (a constant there; in an
 * RTS that can, a plain read of a flag), so it may be asked before
 * hs_init_ghc, as a C main's init_* call does. */
static bool rts_can_log(void) {
    return eventLogStatus() != EVENTLOG_NOT_SUPPORTED;
}

const struct es_instance_hooks es_instance_hooks = {
    .on_command = es_rts_on_command,
    .set_flush_interval_ms = eventlog_socket_set_flush_interval_ms,
    .set_graceful_sigterm = set_graceful_sigterm,
    .rts_can_log = rts_can_log,
    .event_classes = es_rts_event_classes,
};
