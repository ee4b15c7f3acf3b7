/* SPDX-License-Identifier: BSD-3-Clause */
/* The RTS side of the control commands, in one place: a command that acts
 * on the program (its row in cbits/format/es_commands.h) arrives here from
 * the server's loop thread (es_rts_on_command, the instance's on_command),
 * waits for eventlog_socket_ready if the program is not ready yet (the
 * last of each kind; switches of event classes composed), and goes by its
 * row's target to the heap profiler, the cost-centre profiler or the
 * event classes' switches (event_classes.c). The two entry points (es_rts_on_command,
 * es_rts_control_ready) take es_rts.control_lock; everything they call
 * here runs with it held. */

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

/* Why the GHC 9.0 path may write RTS globals from the library's threads.
 *
 * On 9.0 the stores below come from the thread that runs a command (the
 * library's loop thread, or the one calling eventlog_socket_ready), never a
 * capability owner, with es_rts.control_lock held, so our own stores are
 * serialised. RTS threads read the same variables without a lock. Checked
 * against GHC's rts/Proftimer.c of that era and the machine code of the
 * installed 9.0.2 libHSrts_thr_l.a (Proftimer, Schedule, Timer, Itimer):
 *
 * - The RTS itself writes these from a thread that owns no capability: its
 *   ticker is a pthread (rts/posix/itimer/Pthread.c) whose handle_tick()
 *   calls handleProfTick(), which reloads the countdown from
 *   RtsFlags.ProfFlags.heapProfileIntervalTicks and sets
 *   performHeapProfile = true with a plain store. Ours are the same kind of
 *   access. The later public requestHeapCensus() (9.2+, for any thread) is
 *   just RELAXED_STORE(&performHeapProfile, true), and the later timer code
 *   uses relaxed accesses too: GHC needs them untorn, not ordered, and a
 *   relaxed store of a bool is the same single byte store as ours.
 * - Neither can tear: performHeapProfile is a bool (one-byte stores and
 *   loads), heapProfileIntervalTicks an aligned uint32_t (RtsFlags+0x11c),
 *   both single-copy atomic on every platform GHC 9.0 targets. Each RTS
 *   reader loads once and acts on that value, the old one or ours. Both are
 *   objects of another library, so the compiler emits each of our stores
 *   exactly once.
 * - A census request is a flag, not data: schedule() tests it after every
 *   thread run (a memory load each time), and scheduleDoGC() samples it
 *   once, runs the GC with the census, then clears it only if it had seen
 *   it set. A request that lands between that sample and the clear is
 *   folded into the census that has just run, as the ticker's own requests
 *   are; none is lost otherwise.
 * - A stop stores interval 0, then do_heap_prof_ticks = false
 *   (stopHeapProfTimer). schedule() calls startHeapProfTimer() before and
 *   stopHeapProfTimer() after every thread run, from each capability. A
 *   start that loaded the old interval just before our store can set
 *   do_heap_prof_ticks = true just after our stop; then the ticker, seeing
 *   interval 0, requests a census on each tick, until the next return of
 *   any capability to its scheduler (at the latest when a GC stops them
 *   all), which clears the global do_heap_prof_ticks before the census is
 *   taken; every later start sees interval 0 and stays off. Those requests
 *   fold into one flag: at most one census follows a stop. The same single
 *   extra census can come from a tick that falls between our two stores.
 * - A start restores the interval, then sets do_heap_prof_ticks; a
 *   scheduler's concurrent stop may clear it, and its next start re-arms it
 *   because the interval is non-zero again: that is the RTS's own pattern.
 * - Both variables are static storage, so a store after hs_exit is harmless.
 */

/* Cost-centre (time) profiling. startProfTimer/stopProfTimer (rts/prof/CCS.h, public in every
 * GHC 9.x) only set the flag the RTS's tick handler reads before it attributes a tick to the
 * running cost-centre stacks and posts a PROF_SAMPLE_COST_CENTRE event, so any thread may call
 * them. In an RTS built without profiling they do nothing; rts_isProfiled() tells the two apart at
 * run time, since this library is compiled once and linked into profiled and plain programs alike.
 */
#include "base/es_log.h"
#include "es_rts.h"
#include "format/es_classes.h"

#include <Rts.h>
#include <assert.h>

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

/* Heap profiling commands. Without a heap profiling mode (-h) they do
 * nothing, and the first one says so in a log line. */
static void heap_control(uint8_t cmd) {
    /* Guarded by control_lock, which every caller holds. */
    static bool told;
    /* control() sends it the heap commands only. */
    assert(cmd == EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS);
    if (!heap_profiling_enabled()) {
        /* No -h mode: nothing to start, stop or sample. */
        es_log_once(&told, "heap profiling commands are ignored: the program runs without a "
                           "heap profiling mode (+RTS -h...)");
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
        es_rts_census_gc();
        break;
    default:
        break;
    }
}

/* ---- cost-centre profiling ----------------------------------------------- */

/* Cost-centre profiling commands. In a program built without profiling
 * they do nothing, and the first one says so. */
static void cost_centre_control(uint8_t cmd) {
    /* control() sends it these two only. */
    assert(cmd == EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING);
    if (!rts_isProfiled()) {
        static bool told; /* guarded by control_lock, which every caller holds */
        es_log_once(&told, "cost-centre profiling commands are ignored: the program is not "
                           "built with profiling (ghc -prof)");
        return;
    }
    if (cmd == EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING)
        startProfTimer();
    else if (cmd == EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING)
        stopProfTimer();
}

/* ---- one command, by its row --------------------------------------------- */

/* Apply `cmd` to the RTS now, by its row's target. */
static void control(uint8_t cmd) {
    const struct es_commands_row *row = es_commands_find(cmd);
    /* The connection's own commands stay in the server (es_reader.c). */
    assert(row != NULL && row->scope == ES_COMMANDS_PROGRAM);
    switch (row->target) {
    case ES_COMMANDS_TO_HEAP_PROFILER:
        heap_control(cmd);
        break;
    case ES_COMMANDS_TO_COST_CENTRE_PROFILER:
        cost_centre_control(cmd);
        break;
    case ES_COMMANDS_TO_EVENT_CLASSES: {
        unsigned m = cmd & row->arg_mask;
        bool on = row->code == EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON;
        es_rts_switch_classes(on ? m : 0, on ? 0 : m, "a client");
        break;
    }
    default:
        assert(false && "a program's command with a connection's target");
        break;
    }
}

/* Whether a command of some kind waits for eventlog_socket_ready (asserts
 * only: inline, so that a build without them does not warn). */
static inline bool any_pending(void) {
    for (int k = 0; k < ES_COMMANDS_GATES; k++)
        if (es_rts.pending[k] != 0)
            return true;
    return (es_rts.pending_on | es_rts.pending_off) != 0;
}

/* A switch of event classes before the program is ready: composed with
 * those before it, so that they act as they would one after the other. */
static void hold_classes(const struct es_commands_row *row, uint8_t cmd) {
    es_classes_compose(&es_rts.pending_on, &es_rts.pending_off,
                       row->code == EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON,
                       (uint8_t)(cmd & row->arg_mask));
}

void es_rts_on_command(uint8_t cmd, void *ctx) {
    (void)ctx;
    const struct es_commands_row *row = es_commands_find(cmd);
    /* The connection's own commands stay in the server (es_reader.c). */
    assert(row != NULL && row->scope == ES_COMMANDS_PROGRAM && row->gate >= 0);
    pthread_mutex_lock(&es_rts.control_lock);
    if (es_rts.ready) {
        /* What waited for readiness was applied then (eventlog_socket_ready). */
        assert(!any_pending());
        control(cmd);
    } else if (row->target == ES_COMMANDS_TO_EVENT_CLASSES) {
        hold_classes(row, cmd); /* switches compose */
    } else {
        es_rts.pending[row->gate] = cmd; /* the last of its kind wins */
    }
    pthread_mutex_unlock(&es_rts.control_lock);
}

void es_rts_control_ready(void) {
    pthread_mutex_lock(&es_rts.control_lock);
    if (!es_rts.ready) {
        es_rts.ready = true;
        for (int k = 0; k < ES_COMMANDS_GATES; k++) {
            if (es_rts.pending[k] != 0)
                control(es_rts.pending[k]);
            es_rts.pending[k] = 0;
        }
        if ((es_rts.pending_on | es_rts.pending_off) != 0)
            es_rts_switch_classes(es_rts.pending_on, es_rts.pending_off, "a client");
        es_rts.pending_on = es_rts.pending_off = 0;
    }
    pthread_mutex_unlock(&es_rts.control_lock);
}
