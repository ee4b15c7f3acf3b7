/* SPDX-License-Identifier: BSD-3-Clause */
/* GHC's eventlog event type ids, one name each, so that no file of the
 * library or its client spells an id as a bare number. The numbers are
 * GHC's (rts/include/rts/EventLogFormat.h); they never change meaning
 * between versions, though newer GHCs add types. A stream declares the
 * types it uses in its header (es_header.h), which is what tells their
 * sizes: never assume a type is present because it is named here.
 *
 * Constants, and which of them are definitions; usable from any thread. */
#ifndef ES_EVENT_TYPES_H
#define ES_EVENT_TYPES_H

#include <stdbool.h>
#include <stdint.h>

enum es_event_type {
    ES_EVENT_CREATE_THREAD = 0,
    ES_EVENT_RUN_THREAD = 1,
    ES_EVENT_STOP_THREAD = 2,
    ES_EVENT_THREAD_RUNNABLE = 3,
    ES_EVENT_MIGRATE_THREAD = 4,
    ES_EVENT_THREAD_WAKEUP = 8,
    ES_EVENT_GC_START = 9,
    ES_EVENT_GC_END = 10,
    ES_EVENT_REQUEST_SEQ_GC = 11,
    ES_EVENT_REQUEST_PAR_GC = 12,
    ES_EVENT_CREATE_SPARK_THREAD = 15,
    ES_EVENT_LOG_MSG = 16,
    ES_EVENT_BLOCK_MARKER = 18,
    ES_EVENT_USER_MSG = 19, /* traceEvent: variable size, the message's bytes */
    ES_EVENT_GC_IDLE = 20,
    ES_EVENT_GC_WORK = 21,
    ES_EVENT_GC_DONE = 22,
    ES_EVENT_CAPSET_CREATE = 25,
    ES_EVENT_CAPSET_DELETE = 26,
    ES_EVENT_CAPSET_ASSIGN_CAP = 27,
    ES_EVENT_CAPSET_REMOVE_CAP = 28,
    ES_EVENT_RTS_IDENTIFIER = 29,
    ES_EVENT_PROGRAM_ARGS = 30,
    ES_EVENT_PROGRAM_ENV = 31,
    ES_EVENT_OSPROCESS_PID = 32,
    ES_EVENT_OSPROCESS_PPID = 33,
    ES_EVENT_SPARK_COUNTERS = 34,
    /* Spark events, one per spark (+RTS -lf): no payload, except STEAL's
     * victim capability (u16). */
    ES_EVENT_SPARK_CREATE = 35,
    ES_EVENT_SPARK_DUD = 36,
    ES_EVENT_SPARK_OVERFLOW = 37,
    ES_EVENT_SPARK_RUN = 38,
    ES_EVENT_SPARK_STEAL = 39,
    ES_EVENT_SPARK_FIZZLE = 40,
    ES_EVENT_SPARK_GC = 41,
    ES_EVENT_INTERN_STRING = 42,
    ES_EVENT_WALL_CLOCK_TIME = 43,
    ES_EVENT_THREAD_LABEL = 44,
    ES_EVENT_CAP_CREATE = 45,
    ES_EVENT_CAP_DELETE = 46,
    ES_EVENT_CAP_DISABLE = 47,
    ES_EVENT_CAP_ENABLE = 48,
    ES_EVENT_HEAP_ALLOCATED = 49,
    ES_EVENT_HEAP_SIZE = 50,
    ES_EVENT_HEAP_LIVE = 51,
    ES_EVENT_HEAP_INFO_GHC = 52,
    ES_EVENT_GC_STATS_GHC = 53,
    ES_EVENT_GC_GLOBAL_SYNC = 54,
    ES_EVENT_TASK_CREATE = 55,
    ES_EVENT_TASK_MIGRATE = 56,
    ES_EVENT_TASK_DELETE = 57,
    ES_EVENT_USER_MARKER = 58, /* traceMarker: variable size, the marker's text */
    ES_EVENT_MEM_RETURN = 90,
    ES_EVENT_BLOCKS_SIZE = 91,
    ES_EVENT_HEAP_PROF_BEGIN = 160,
    ES_EVENT_HEAP_PROF_COST_CENTRE = 161,
    ES_EVENT_HEAP_PROF_SAMPLE_BEGIN = 162,
    ES_EVENT_HEAP_PROF_SAMPLE_COST_CENTRE = 163,
    ES_EVENT_HEAP_PROF_SAMPLE_STRING = 164,
    ES_EVENT_HEAP_PROF_SAMPLE_END = 165,
    ES_EVENT_HEAP_BIO_PROF_SAMPLE_BEGIN = 166,
    ES_EVENT_PROF_SAMPLE_COST_CENTRE = 167,
    ES_EVENT_PROF_BEGIN = 168,
    ES_EVENT_IPE = 169, /* info table provenance, GHC >= 9.2 */
    ES_EVENT_USER_BINARY_MSG = 181,
    ES_EVENT_TICKY_COUNTER_DEF = 210, /* GHC >= 9.4 */
    ES_EVENT_TICKY_COUNTER_SAMPLE = 211,
    ES_EVENT_TICKY_BEGIN_SAMPLE = 212,
    /* Not a type: the two bytes FF FF that end the data section. */
    ES_EVENT_END_MARKER = 0xffff,
};

/* The start-up ("definition") events a stream needs to be read from a
 * later point: what the library keeps for late joiners (es_defs.h) and
 * the command keeps for its recordings of a trigger's time
 * (client/flight/ring.h). */
static inline bool es_event_types_is_definition(uint16_t type) {
    switch (type) {
    case ES_EVENT_CAPSET_CREATE:
    case ES_EVENT_CAPSET_DELETE:
    case ES_EVENT_CAPSET_ASSIGN_CAP:
    case ES_EVENT_CAPSET_REMOVE_CAP:
    case ES_EVENT_RTS_IDENTIFIER:
    case ES_EVENT_PROGRAM_ARGS:
    case ES_EVENT_PROGRAM_ENV:
    case ES_EVENT_OSPROCESS_PID:
    case ES_EVENT_OSPROCESS_PPID:
    case ES_EVENT_WALL_CLOCK_TIME:
    case ES_EVENT_THREAD_LABEL:
    case ES_EVENT_CAP_CREATE:
    case ES_EVENT_CAP_DELETE:
    case ES_EVENT_CAP_DISABLE:
    case ES_EVENT_CAP_ENABLE:
    case ES_EVENT_HEAP_INFO_GHC: /* (HEAP_LIVE, next to it, is a measurement) */
    case ES_EVENT_HEAP_PROF_BEGIN:
    case ES_EVENT_HEAP_PROF_COST_CENTRE:
    case ES_EVENT_PROF_BEGIN:
    case ES_EVENT_IPE:               /* info table provenance, GHC >= 9.2 */
    case ES_EVENT_TICKY_COUNTER_DEF: /* GHC >= 9.4 */
        return true;
    default:
        return false;
    }
}

#endif
