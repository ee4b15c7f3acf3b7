/* SPDX-License-Identifier: BSD-3-Clause */
/* The words the command writes for GHC's events and for STOP_THREAD's
 * statuses, in one table each, so that every output spells them alike:
 * `table`'s event and status columns (client/tables/rows.c), the model's
 * thread states (client/model/threads.c) and through it `top`, `serve`
 * and `report`. docs/command.md ("Tables for dataframes") and
 * eventlog-socket(1) list the same words.
 *
 * Constant tables; any thread. */
#ifndef ES_EVENT_NAMES_H
#define ES_EVENT_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The families whose events `table` writes a row for, one name each. */
enum es_event_family {
    ES_FAMILY_NONE,
    ES_FAMILY_GC,     /* the collections: request_seq ... stats */
    ES_FAMILY_SPARK,  /* SPARK_COUNTERS and +RTS -lf's spark events */
    ES_FAMILY_THREAD, /* the scheduler's thread events */
};

/* The table es_event_names_of reads, by type: every event named has a type
 * below ES_EVENT_NAMED (GHC's numbers for them are all below 64). */
#define ES_EVENT_NAMED 64
struct es_event_named {
    const char *name;
    enum es_event_family family;
};
extern const struct es_event_named es_event_names_by_type[ES_EVENT_NAMED];

/* Event type `type`'s name within `family` ("start" for GC_START in
 * ES_FAMILY_GC, "create" for CREATE_THREAD in ES_FAMILY_THREAD), or NULL
 * when it is not one of that family's. Inline: `table` asks for every
 * event of the stream. */
static inline const char *es_event_names_of(unsigned type, enum es_event_family family) {
    if (type >= ES_EVENT_NAMED || family == ES_FAMILY_NONE ||
        es_event_names_by_type[type].family != family)
        return NULL;
    return es_event_names_by_type[type].name;
}

/* What a STOP_THREAD status leaves the thread doing. GHC's statuses
 * (rts/include/rts/EventLogFormat.h): 1 to 5 the scheduler's return codes
 * (heap or stack overflow, yield, blocked, finished), 6 a foreign call,
 * and 6 plus its why_blocked (rts/include/rts/Constants.h) for a thread
 * that blocked. */
enum es_stop_kind {
    ES_STOP_RUNNABLE, /* back in a run queue: an overflow, a yield */
    ES_STOP_BLOCKED,
    ES_STOP_FOREIGN, /* in a foreign call */
    ES_STOP_FINISHED,
    ES_STOP_KINDS
};
#define ES_STOP_BLOCKED_STATUS  4 /* never posted: a blocked thread posts 6 + why */
#define ES_STOP_FINISHED_STATUS 5
#define ES_STOP_FOREIGN_STATUS  6

struct es_stop_status {
    const char *code;  /* `table`'s status column: "blocked_on_mvar" */
    const char *words; /* the views' thread state: "blocked on MVar" */
};

/* Status `status`'s entry, or NULL for a number GHC does not define. */
const struct es_stop_status *es_event_names_stop_status(unsigned status);

/* What status `status` leaves the thread doing (defined or not: above 6
 * is blocked, on what unknown). Inline: the model asks at every stop. */
static inline enum es_stop_kind es_event_names_stop_kind(unsigned status) {
    /* The common ones first: an overflow or a yield, then a block. */
    if (status < ES_STOP_BLOCKED_STATUS)
        return ES_STOP_RUNNABLE;
    if (status > ES_STOP_FOREIGN_STATUS)
        return ES_STOP_BLOCKED;
    return status == ES_STOP_FINISHED_STATUS  ? ES_STOP_FINISHED
           : status == ES_STOP_FOREIGN_STATUS ? ES_STOP_FOREIGN
                                              : ES_STOP_BLOCKED;
}

#endif
