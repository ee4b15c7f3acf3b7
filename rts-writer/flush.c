/* SPDX-License-Identifier: BSD-3-Clause */
/* Periodic RTS flushes, for a live stream on GHC >= 9.2.
 *
 * The RTS hands a capability's events to the writer only when its buffer
 * fills, unless something flushes. The RTS's own --eventlog-flush-interval
 * stops while the program is idle, exactly when a quiet program's last
 * events are waiting; so while clients are connected the loop thread calls
 * flushEventLog(NULL) itself, every flush interval, or less often when
 * every capability hands its buffers over by itself (es_pace.h).
 *
 * flushEventLog must never run inside a writer callback (it is called from
 * the loop thread's timer, never from one), concurrently with
 * startEventLogging/endEventLogging, or once hs_exit has begun (GHC #27082,
 * GHC #26573). Flushing is therefore only allowed between
 * eventlog_socket_hs_main's start (or a switch by eventlog_socket_start_*)
 * and the onExitHook installed then, which the RTS calls first thing in
 * hs_exit; each flush runs under flush_lock, so
 * disabling waits for a flush in progress. The thread calling hs_exit holds
 * no capability then (a safe foreign call, or after rts_unlock), so the
 * flush's stop-the-world can finish while it waits.
 *
 * GHC 9.0 has no public flush: nothing here does anything. */
#include "es_rts.h"

#include "base/es_config.h"

#if __GLASGOW_HASKELL__ >= 902
static bool on_flush_timer(void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&es_rts.flush_lock);
    bool allowed = es_rts.flush_allowed;
    if (allowed)
        flushEventLog(NULL);
    pthread_mutex_unlock(&es_rts.flush_lock);
    return allowed;
}

static unsigned interval_ms(void) {
    return es_rts.flush_ms < 0 ? ES_DEFAULT_FLUSH_MS : (unsigned)es_rts.flush_ms;
}

/* Heap profile samples go to the RTS's global buffer, which only a flush
 * hands over: while the program samples its heap (a -h mode), every
 * interval flushes, or the samples would arrive up to
 * ES_PACE_MAX_INTERVALS late. */
static bool paced(void) {
    return RtsFlags.ProfFlags.doHeapProfile == 0;
}
#endif

void es_rts_flush_update(void) {
#if __GLASGOW_HASKELL__ >= 902
    struct es_server *s = es_instance_server();
    pthread_mutex_lock(&es_rts.flush_lock);
    bool allowed = es_rts.flush_allowed;
    pthread_mutex_unlock(&es_rts.flush_lock);
    if (s != NULL)
        es_server_set_flush(s, allowed ? on_flush_timer : NULL, NULL, allowed ? interval_ms() : 0,
                            paced());
#endif
}

/* A census is taken during a major GC, which an idle program (all its
 * threads waiting) does not do until it wakes up: a census asked for at 2 s
 * came at 5 s in a program sleeping in threadDelay. So the loop thread runs
 * the major GC itself, right after the request, which the GC then serves.
 * It costs nothing extra in a busy program: the census needed a major GC
 * anyway, and the request is consumed by this one. Same rules as a flush:
 * only between eventlog_socket_hs_main's start and hs_exit, never
 * concurrently with starting or ending event logging. */
void es_rts_census_gc(void) {
    pthread_mutex_lock(&es_rts.flush_lock);
    if (es_rts.flush_allowed)
        hs_perform_gc();
    pthread_mutex_unlock(&es_rts.flush_lock);
}

void es_rts_flush_enable(void) {
    pthread_mutex_lock(&es_rts.flush_lock);
    es_rts.flush_allowed = true;
    pthread_mutex_unlock(&es_rts.flush_lock);
    es_rts_flush_update();
}

void es_rts_flush_disable(void) {
    pthread_mutex_lock(&es_rts.flush_lock);
    es_rts.flush_allowed = false;
    pthread_mutex_unlock(&es_rts.flush_lock);
    es_rts_flush_update();
}
