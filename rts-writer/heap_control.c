/* Heap profiling control for every supported GHC. The APIs differ:
 *
 * GHC >= 9.2 declares startHeapProfTimer, stopHeapProfTimer and
 * requestHeapCensus in rts/prof/Heap.h. They only set flags, so any thread
 * may call them.
 *
 * GHC 9.0 has no such header. startHeapProfTimer/stopHeapProfTimer and the
 * flag performHeapProfile exist as hidden symbols of the static RTS (so this
 * links statically only). Its scheduler calls startHeapProfTimer() before
 * running each Haskell thread, which re-arms the timer whenever
 * RtsFlags.ProfFlags.heapProfileIntervalTicks is non-zero; a stop therefore
 * only sticks if the interval is zeroed first, and start restores it. */
#include "es_log.h"
#include "es_rts.h"

#include <Rts.h>

#if __GLASGOW_HASKELL__ >= 902
#include <rts/prof/Heap.h>
#else
extern void startHeapProfTimer(void);
extern void stopHeapProfTimer(void);
extern bool performHeapProfile;

/* The interval in ticks saved by a stop, restored by a start. */
static uint32_t saved_interval_ticks;
#endif

static bool heap_profiling_enabled(void) {
    return RtsFlags.ProfFlags.doHeapProfile != 0;
}

void es_rts_heap_control(uint8_t cmd) {
    /* Guarded by control_lock, which every caller holds. */
    static bool told;
    if (!heap_profiling_enabled()) {
        /* No -h mode: nothing to start, stop or sample. */
        if (!told)
            es_log("heap profiling commands are ignored: the program runs without a heap "
                   "profiling mode (+RTS -h...)");
        told = true;
        return;
    }
    switch (cmd) {
    case EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING:
#if __GLASGOW_HASKELL__ < 902
        if (RtsFlags.ProfFlags.heapProfileIntervalTicks == 0 && saved_interval_ticks != 0)
            RtsFlags.ProfFlags.heapProfileIntervalTicks = saved_interval_ticks;
#endif
        startHeapProfTimer();
        break;
    case EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING:
#if __GLASGOW_HASKELL__ < 902
        if (RtsFlags.ProfFlags.heapProfileIntervalTicks != 0)
            saved_interval_ticks = RtsFlags.ProfFlags.heapProfileIntervalTicks;
        RtsFlags.ProfFlags.heapProfileIntervalTicks = 0;
#endif
        stopHeapProfTimer();
        break;
    case EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS:
#if __GLASGOW_HASKELL__ >= 902
        requestHeapCensus();
#else
        performHeapProfile = true;
#endif
        break;
    default:
        break;
    }
}
