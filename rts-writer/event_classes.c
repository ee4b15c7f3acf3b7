/* SPDX-License-Identifier: BSD-3-Clause */
/* The RTS's classes of events, switched while the program runs
 * (eventlog_socket_switch_event_classes, and the clients' switches, which
 * come through control.c).
 *
 * The RTS reads one switch per class before posting each event of it:
 * TRACE_sched, TRACE_gc, TRACE_nonmoving_gc, TRACE_spark_sampled,
 * TRACE_spark_full, TRACE_user (rts/Trace.c), set once at start from
 * RtsFlags.TraceFlags (+RTS -l's letters) by initTracing, which also
 * derives TRACE_cap (the capabilities' events: any of scheduler, gc,
 * sparks, user) and, with GC events on, makes the RTS collect the GC
 * statistics (RtsFlags.GcFlags.giveStats) that a GC's end event is posted
 * with. Nothing in the RTS reads RtsFlags.TraceFlags again, except the
 * nonmoving census, which asks RtsFlags.TraceFlags.nonmoving_gc too. So a
 * switch stores what initTracing would have: the class's TRACE_ variable,
 * TRACE_cap, the RtsFlags field (so that GHC.RTS.Flags and the census
 * agree) and, for GC events, the statistics.
 *
 * The variables are not public API. Checked against the sources and the
 * installed libraries of GHC 9.0.2, 9.6.6 and 9.10.3: all seven are
 * global, `int` on 9.0 and `uint8_t` from 9.6 (a store of the wrong width
 * would clobber the next class's), hidden in the static RTS but for
 * TRACE_user (so a static link resolves them; a program linked with
 * -dynamic finds only TRACE_user: its libHSrts exports no other). They are
 * declared weak here, so that such a program still links and loads, and
 * its missing switches are told as such; for any other GHC the library
 * does not know the width and switches nothing.
 *
 * The RTS's readers load them without a lock, as constants; one-byte or
 * aligned four-byte stores cannot tear, so a reader sees the old value or
 * the new one, and a switch takes effect from each reader's next load:
 * the next event of the class, on each capability. An event already in
 * the RTS's buffers is delivered; an interval that straddles the switch
 * may lose its start or its end (a thread's run, a GC), as when logging
 * starts mid-run.
 *
 * Any thread; switches are serialised by the module's lock. */
#include "base/es_log.h"
#include "es_rts.h"
#include "format/es_classes.h"
#include "format/es_notice_text.h"

#include <Rts.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#if __GLASGOW_HASKELL__ >= 906 && __GLASGOW_HASKELL__ <= 910
#define CHECKED 1
typedef uint8_t trace_switch;
#elif __GLASGOW_HASKELL__ < 902
#define CHECKED 1
typedef int trace_switch;
#else
#define CHECKED 0
#endif

#if CHECKED
#define ES_WEAK __attribute__((weak, visibility("default")))
extern trace_switch TRACE_sched ES_WEAK;
extern trace_switch TRACE_gc ES_WEAK;
extern trace_switch TRACE_nonmoving_gc ES_WEAK;
extern trace_switch TRACE_spark_sampled ES_WEAK;
extern trace_switch TRACE_spark_full ES_WEAK;
extern trace_switch TRACE_user ES_WEAK;
extern trace_switch TRACE_cap ES_WEAK;
#define SWITCH(v) (&(v))
#else
typedef int trace_switch; /* never stored */
#define SWITCH(v) NULL
#endif

/* Each class: its bit, its field of RtsFlags.TraceFlags, the RTS's switch
 * (NULL where the program has none). */
static const struct {
    unsigned bit;
    bool *flag;
    trace_switch *sw;
} classes[ES_CLASSES_COUNT] = {
    {EVENTLOG_SOCKET_EVENTS_SCHEDULER, &RtsFlags.TraceFlags.scheduler, SWITCH(TRACE_sched)},
    {EVENTLOG_SOCKET_EVENTS_GC, &RtsFlags.TraceFlags.gc, SWITCH(TRACE_gc)},
    {EVENTLOG_SOCKET_EVENTS_NONMOVING_GC, &RtsFlags.TraceFlags.nonmoving_gc,
     SWITCH(TRACE_nonmoving_gc)},
    {EVENTLOG_SOCKET_EVENTS_SPARKS_SAMPLED, &RtsFlags.TraceFlags.sparks_sampled,
     SWITCH(TRACE_spark_sampled)},
    {EVENTLOG_SOCKET_EVENTS_SPARKS_FULL, &RtsFlags.TraceFlags.sparks_full,
     SWITCH(TRACE_spark_full)},
    {EVENTLOG_SOCKET_EVENTS_USER, &RtsFlags.TraceFlags.user, SWITCH(TRACE_user)},
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The classes whose switch this program has, and why the others are not. */
static unsigned switchable(const char **why) {
#if CHECKED
    unsigned m = 0;
    for (int i = 0; i < ES_CLASSES_COUNT; i++)
        if (classes[i].sw != NULL && &TRACE_cap != NULL)
            m |= classes[i].bit;
    *why = m == EVENTLOG_SOCKET_EVENTS_ALL
               ? NULL
               : "the RTS keeps its switches to itself in a program linked with -dynamic: link it "
                 "statically";
    return m;
#else
    *why = "this library was built with a GHC whose RTS switches it was not checked against "
           "(9.0, 9.6 to 9.10 are)";
    return 0;
#endif
}

/* The classes on now: the RTS's switches where it has them, else what
 * +RTS -l set (RtsFlags). Under the lock. */
static unsigned classes_on(void) {
    unsigned on = 0;
    for (int i = 0; i < ES_CLASSES_COUNT; i++) {
        bool now = classes[i].sw != NULL ? __atomic_load_n(classes[i].sw, __ATOMIC_RELAXED) != 0
                                         : *classes[i].flag;
        on |= now ? classes[i].bit : 0;
    }
    return on;
}

/* Store `now` into the RTS's switches, as initTracing would have set them
 * at start. Under the lock, every class switchable. */
static void store(unsigned now) {
#if CHECKED
    /* A GC's end event is posted with its statistics: collect them first
     * (what +RTS -lg makes initTracing do; cheap, and never printed). */
    if ((now & EVENTLOG_SOCKET_EVENTS_GC) != 0 && RtsFlags.GcFlags.giveStats == NO_GC_STATS)
        RtsFlags.GcFlags.giveStats = COLLECT_GC_STATS;
    for (int i = 0; i < ES_CLASSES_COUNT; i++) {
        bool on = (now & classes[i].bit) != 0;
        *classes[i].flag = on;
        __atomic_store_n(classes[i].sw, (trace_switch)on, __ATOMIC_RELAXED);
    }
    /* The capabilities' events go with every class but the nonmoving
     * census's. */
    bool cap = (now & ~EVENTLOG_SOCKET_EVENTS_NONMOVING_GC) != 0;
    __atomic_store_n(&TRACE_cap, (trace_switch)cap, __ATOMIC_RELAXED);
#else
    (void)now;
#endif
}

int es_rts_event_classes(unsigned *on, unsigned *can, const char **why) {
    pthread_mutex_lock(&lock);
    unsigned m = switchable(why);
    *on = classes_on();
    pthread_mutex_unlock(&lock);
    *can = m;
    return m == 0 ? EVENTLOG_SOCKET_ENOTSUP : 0;
}

int es_rts_switch_classes(unsigned on, unsigned off, const char *by) {
    if (((on | off) & ~EVENTLOG_SOCKET_EVENTS_ALL) != 0 || (on & off) != 0)
        return EVENTLOG_SOCKET_EINVAL;
    const char *why;
    pthread_mutex_lock(&lock);
    unsigned can = switchable(&why);
    if (((on | off) & ~can) != 0) {
        pthread_mutex_unlock(&lock);
        char names[128];
        es_classes_words(names, sizeof names, (on | off) & ~can);
        es_log("event classes not switched (asked by %s): %s cannot be switched here: %s", by,
               names, why);
        return EVENTLOG_SOCKET_ENOTSUP;
    }
    unsigned was = classes_on(), now = (was | on) & ~off;
    store(now);
    pthread_mutex_unlock(&lock);
    /* Every client's stream says so, where the switch falls among the
     * blocks (a gap is then never taken for an idle program). */
    struct es_server *s = es_instance_server();
    if (s != NULL && !atomic_load(&es_rts.forked) && es_server_pid(s) == getpid()) {
        char text[512];
        es_notice_text_classes_switched(text, sizeof text, was, now, by);
        /* Stamped with the RTS's own clock where it can be read: on GHC
         * 9.0 the blocks so far may be seconds behind. */
        uint64_t at;
        if (es_rts_now(&at))
            es_server_post_text_at(s, at, text);
        else
            es_server_post_text(s, text);
    }
    return 0;
}

int eventlog_socket_event_classes(unsigned *on, unsigned *switchable_out) {
    unsigned a, b;
    const char *why;
    int r = es_rts_event_classes(&a, &b, &why);
    if (on != NULL)
        *on = a;
    if (switchable_out != NULL)
        *switchable_out = b;
    return r;
}

int eventlog_socket_switch_event_classes(unsigned on, unsigned off) {
    pthread_mutex_lock(&es_rts.control_lock);
    bool ready = es_rts.ready;
    pthread_mutex_unlock(&es_rts.control_lock);
    if (!ready)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    return es_rts_switch_classes(on, off, "the program");
}
