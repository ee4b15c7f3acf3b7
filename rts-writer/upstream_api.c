/* SPDX-License-Identifier: BSD-3-Clause */
/* Upstream eventlog-socket 0.1.3's C API, the part that needs the RTS:
 * starting in a running RTS, declaring the RTS ready, and its C main
 * helper; each on top of the library's own function (the rest is
 * cbits/upstream/es_upstream.c). */
#include "es_rts.h"

#include "base/es_log.h"
#include "upstream/es_upstream.h"

#include <stdlib.h>

EventlogSocketStatus eventlog_socket_start(const EventlogSocketAddr *addr,
                                           const EventlogSocketOpts *opts) {
    /* Refused before anything listens (no "listening on" line first). */
    int r = es_rts_can_switch();
    if (r < 0)
        return es_upstream_status(r);
    EventlogSocketStatus st = eventlog_socket_init(addr, opts);
    if (st.ess_status_code != EVENTLOG_SOCKET_OK)
        return st;
    return es_upstream_status(es_rts_switch_writer(opts != NULL && opts->eso_wait));
}

EventlogSocketStatus eventlog_socket_signal_ghc_rts_ready(void) {
    eventlog_socket_ready();
    return es_upstream_status(0);
}

void eventlog_socket_wrap_hs_main(int argc, char *argv[], RtsConfig conf, StgClosure *main_closure,
                                  const EventlogSocketAddr *addr, const EventlogSocketOpts *opts) {
    EventlogSocketStatus st = eventlog_socket_init(addr, opts);
    if (st.ess_status_code != EVENTLOG_SOCKET_OK) {
        char *why = eventlog_socket_strerror(st);
        es_log("cannot stream the eventlog: %s; the program runs without streaming",
               why ? why : "out of memory");
        free(why);
    }
    conf.eventlog_writer = &EventLogSocketWriter;
    es_rts_hs_main(argc, argv, conf, main_closure,
                   st.ess_status_code == EVENTLOG_SOCKET_OK && opts != NULL && opts->eso_wait);
}
