/* SPDX-License-Identifier: BSD-3-Clause */
/* Cost-centre (time) profiling control, and es_rts_control, which sends
 * each control command to the code that applies it.
 *
 * startProfTimer/stopProfTimer (rts/prof/CCS.h, public in every GHC 9.x)
 * only set the flag the RTS's tick handler reads before it attributes a
 * tick to the running cost-centre stacks and posts a PROF_SAMPLE_COST_CENTRE
 * event, so any thread may call them. In an RTS built without profiling
 * they do nothing; rts_isProfiled() tells the two apart at run time, since
 * this library is compiled once and linked into profiled and plain programs
 * alike. */
#include "base/es_log.h"
#include "es_rts.h"

#include <Rts.h>
#include <assert.h>

void es_rts_cost_centre_control(uint8_t cmd) {
    /* es_rts_control sends it these two only. */
    assert(cmd == EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING);
    if (!rts_isProfiled()) {
        static bool told; /* guarded by control_lock, which every caller holds */
        if (!told)
            es_log("cost-centre profiling commands are ignored: the program is not built "
                   "with profiling (ghc -prof)");
        told = true;
        return;
    }
    if (cmd == EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING)
        startProfTimer();
    else if (cmd == EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING)
        stopProfTimer();
}

void es_rts_control(uint8_t cmd) {
    switch (cmd) {
    case EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING:
    case EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING:
    case EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS:
        es_rts_heap_control(cmd);
        break;
    case EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING:
    case EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING:
        es_rts_cost_centre_control(cmd);
        break;
    default:
        break;
    }
}
