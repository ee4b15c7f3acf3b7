/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_event_names.h"

#include "es_event_types.h"

#include <stddef.h>

const struct es_event_named es_event_names_by_type[ES_EVENT_NAMED] = {
    [ES_EVENT_REQUEST_SEQ_GC] = {"request_seq", ES_FAMILY_GC},
    [ES_EVENT_REQUEST_PAR_GC] = {"request_par", ES_FAMILY_GC},
    [ES_EVENT_GC_START] = {"start", ES_FAMILY_GC},
    [ES_EVENT_GC_WORK] = {"work", ES_FAMILY_GC},
    [ES_EVENT_GC_IDLE] = {"idle", ES_FAMILY_GC},
    [ES_EVENT_GC_DONE] = {"done", ES_FAMILY_GC},
    [ES_EVENT_GC_END] = {"end", ES_FAMILY_GC},
    [ES_EVENT_GC_GLOBAL_SYNC] = {"sync", ES_FAMILY_GC},
    [ES_EVENT_GC_STATS_GHC] = {"stats", ES_FAMILY_GC},

    [ES_EVENT_SPARK_COUNTERS] = {"counters", ES_FAMILY_SPARK},
    [ES_EVENT_SPARK_CREATE] = {"create", ES_FAMILY_SPARK},
    [ES_EVENT_SPARK_DUD] = {"dud", ES_FAMILY_SPARK},
    [ES_EVENT_SPARK_OVERFLOW] = {"overflow", ES_FAMILY_SPARK},
    [ES_EVENT_SPARK_RUN] = {"run", ES_FAMILY_SPARK},
    [ES_EVENT_SPARK_STEAL] = {"steal", ES_FAMILY_SPARK},
    [ES_EVENT_SPARK_FIZZLE] = {"fizzle", ES_FAMILY_SPARK},
    [ES_EVENT_SPARK_GC] = {"gc", ES_FAMILY_SPARK},

    [ES_EVENT_CREATE_THREAD] = {"create", ES_FAMILY_THREAD},
    [ES_EVENT_RUN_THREAD] = {"run", ES_FAMILY_THREAD},
    [ES_EVENT_STOP_THREAD] = {"stop", ES_FAMILY_THREAD},
    [ES_EVENT_THREAD_RUNNABLE] = {"runnable", ES_FAMILY_THREAD},
    [ES_EVENT_MIGRATE_THREAD] = {"migrate", ES_FAMILY_THREAD},
    [ES_EVENT_THREAD_WAKEUP] = {"wakeup", ES_FAMILY_THREAD},
    [ES_EVENT_THREAD_LABEL] = {"label", ES_FAMILY_THREAD},
    [ES_EVENT_CREATE_SPARK_THREAD] = {"create_spark_thread", ES_FAMILY_THREAD},
};

/* The statuses by number. A code is the RTS's constant's name in lower
 * case with words parted by '_' (BlockedOnMVar: blocked_on_mvar), less
 * the "Thread" of ThreadYielding, ThreadBlocked, ThreadFinished and
 * ThreadMigrating; 6 is THREAD_SUSPENDED_FOREIGN_CALL. No status is 14
 * or 15: no why_blocked is 8 or 9. */
static const struct es_stop_status statuses[] = {
    [1] = {"heap_overflow", "heap overflow"},
    [2] = {"stack_overflow", "stack overflow"},
    [3] = {"yielding", "yielding"},
    [ES_STOP_BLOCKED_STATUS] = {"blocked", "blocked"},
    [ES_STOP_FINISHED_STATUS] = {"finished", "finished"},
    [ES_STOP_FOREIGN_STATUS] = {"foreign_call", "in foreign call"},
    [7] = {"blocked_on_mvar", "blocked on MVar"},
    [8] = {"blocked_on_black_hole", "blocked on black hole"},
    [9] = {"blocked_on_read", "blocked on read"},
    [10] = {"blocked_on_write", "blocked on write"},
    [11] = {"blocked_on_delay", "blocked on delay"},
    [12] = {"blocked_on_stm", "blocked on STM"},
    [13] = {"blocked_on_do_proc", "blocked on process"},
    [16] = {"blocked_on_ccall", "blocked in foreign call"},
    [17] = {"blocked_on_ccall_interruptible", "blocked in foreign call"},
    [18] = {"blocked_on_msg_throw_to", "blocked on throwTo"},
    [19] = {"migrating", "migrating"},
    [20] = {"blocked_on_mvar_read", "blocked on MVar (read)"},
    [21] = {"blocked_on_io_completion", "blocked on I/O completion"},
};

const struct es_stop_status *es_event_names_stop_status(unsigned status) {
    if (status >= sizeof statuses / sizeof *statuses || statuses[status].code == NULL)
        return NULL;
    return &statuses[status];
}
