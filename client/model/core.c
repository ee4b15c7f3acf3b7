/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's core (client/model/impl.h lists its files): every event goes
 * to the handler its type has in the table below, after the work every
 * event shares: stream time, and which capability's block it is in. */
#include "impl.h"
#include "history.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Event types past this have no handler. */
#define HANDLED_TYPES 256

static es_model_handler *const handlers[HANDLED_TYPES] = {
    /* threads.c (passing RUN_ and STOP_THREAD on to caps.c) */
    [ES_EVENT_CREATE_THREAD] = es_model_on_thread_create,
    [ES_EVENT_RUN_THREAD] = es_model_on_thread_run,
    [ES_EVENT_STOP_THREAD] = es_model_on_thread_stop,
    [ES_EVENT_THREAD_RUNNABLE] = es_model_on_thread_runnable,
    [ES_EVENT_MIGRATE_THREAD] = es_model_on_thread_moved,
    [ES_EVENT_THREAD_WAKEUP] = es_model_on_thread_moved,
    [ES_EVENT_THREAD_LABEL] = es_model_on_thread_label,
    /* caps.c */
    [ES_EVENT_CAP_CREATE] = es_model_on_cap_create,
    /* gc.c */
    [ES_EVENT_GC_START] = es_model_on_gc_start,
    [ES_EVENT_GC_END] = es_model_on_gc_end,
    [ES_EVENT_GC_STATS_GHC] = es_model_on_gc_stats,
    [ES_EVENT_HEAP_INFO_GHC] = es_model_on_heap_info,
    [ES_EVENT_HEAP_SIZE] = es_model_on_heap_size,
    [ES_EVENT_HEAP_LIVE] = es_model_on_heap_live,
    [ES_EVENT_HEAP_ALLOCATED] = es_model_on_heap_allocated,
    /* program.c */
    [ES_EVENT_RTS_IDENTIFIER] = es_model_on_rts_identifier,
    [ES_EVENT_PROGRAM_ARGS] = es_model_on_program_args,
    [ES_EVENT_OSPROCESS_PID] = es_model_on_pid,
    [ES_EVENT_WALL_CLOCK_TIME] = es_model_on_wall_clock,
    [ES_EVENT_CAPSET_CREATE] = es_model_on_capset_create,
    /* notes.c */
    [ES_EVENT_USER_MARKER] = es_model_on_user_marker,
    [ES_EVENT_USER_MSG] = es_model_on_user_msg,
    /* census.c */
    [ES_EVENT_HEAP_PROF_BEGIN] = es_model_on_heap_prof_begin,
    [ES_EVENT_HEAP_PROF_COST_CENTRE] = es_model_on_cost_centre,
    [ES_EVENT_HEAP_PROF_SAMPLE_BEGIN] = es_model_on_sample_begin,
    [ES_EVENT_HEAP_BIO_PROF_SAMPLE_BEGIN] = es_model_on_sample_begin,
    [ES_EVENT_HEAP_PROF_SAMPLE_STRING] = es_model_on_sample_string,
    [ES_EVENT_HEAP_PROF_SAMPLE_COST_CENTRE] = es_model_on_sample_cost_centre,
    [ES_EVENT_HEAP_PROF_SAMPLE_END] = es_model_on_sample_end,
    [ES_EVENT_IPE] = es_model_on_ipe,
    /* costs.c */
    [ES_EVENT_PROF_SAMPLE_COST_CENTRE] = es_model_on_prof_sample,
    /* sparks.c */
    [ES_EVENT_SPARK_COUNTERS] = es_model_on_spark_counters,
    [ES_EVENT_SPARK_CREATE] = es_model_on_spark_create,
    [ES_EVENT_SPARK_DUD] = es_model_on_spark_dud,
    [ES_EVENT_SPARK_OVERFLOW] = es_model_on_spark_overflow,
    [ES_EVENT_SPARK_RUN] = es_model_on_spark_run,
    [ES_EVENT_SPARK_STEAL] = es_model_on_spark_steal,
    [ES_EVENT_SPARK_FIZZLE] = es_model_on_spark_fizzle,
    [ES_EVENT_SPARK_GC] = es_model_on_spark_gc,
};

/* The window a skimming reader may skip events in: the model's state
 * before the next event depends on their times only through `now`, until
 * one starts a new second (second_passed) or comes before the first. Set
 * where either bound changes, not per event. */
static void set_window(struct es_model *m) {
    m->window[0] = m->first_time;
    m->window[1] = m->events ? m->next_second : 0;
}

/* Once per second of stream time (checked without a division, since it
 * runs for every event, the first included): the capabilities' snapshot,
 * and the heap series carried through quiet seconds. */
static inline void second_passed(struct es_model *m) {
    if (m->now < m->next_second)
        return;
    uint64_t sec = m->now / NS_PER_S;
    m->next_second = (sec + 1) * NS_PER_S;
    set_window(m);
    if (m->figures_only)
        return;
    es_model_snapshot(m);
    es_model_series_extend(&m->s_size, sec, true);
    es_model_series_extend(&m->s_live, sec, true);
    es_model_series_extend(&m->s_alloc, sec, false);
}

/* The current block is capability `cap`'s (ES_GLOBAL_CAP: the global
 * buffer's, whose events count as capability 0's), `left` bytes more. */
static void enter_block(struct es_model *m, uint16_t cap, uint64_t left) {
    m->block_cap = cap;
    m->block_left = left;
    uint16_t c = cap == ES_GLOBAL_CAP ? 0 : cap;
    m->block_rec = c < ES_MODEL_MAX_CAPS ? &m->caps[c] : NULL;
}

/* The stream holds every capability's events from the latest start of a
 * capability's first block in it on (es_model_counted_from): a client
 * that joined a running GHC 9.0 program gets, at its exit, an idle
 * capability's buffer begun at the program's start beside a busy one's
 * begun after the join. */
static void first_block(struct es_model *m, uint32_t cap, uint64_t t) {
    if (cap >= ES_MODEL_MAX_CAPS || m->caps[cap].first_block != 0)
        return;
    m->caps[cap].first_block = t;
    if (t > m->cap_blocks_from)
        m->cap_blocks_from = t;
}

/* A block marker: the events that follow, up to its size, are its
 * capability's (a marker too short to say is the global buffer's). */
static void block_marker(struct es_model *m, const struct es_event *ev) {
    struct es_block_fields b;
    bool whole = es_payload_block(ev, &b);
    enter_block(m, b.cap, b.size > ev->len ? b.size - ev->len : 0);
    if (whole && b.cap != ES_GLOBAL_CAP) {
        es_model_see_cap(m, b.cap);
        first_block(m, b.cap, ev->time ? ev->time : 1);
    }
}

/* The capability of the block the event is in; outside any block, none is
 * known. */
static inline struct es_model_cap *block_cap(struct es_model *m, const struct es_event *ev) {
    if (m->block_left >= ev->len)
        m->block_left -= ev->len;
    else if (m->block_cap != ES_GLOBAL_CAP || m->block_left != 0)
        enter_block(m, ES_GLOBAL_CAP, 0);
    return m->block_rec;
}

void es_model_event(struct es_model *m, const struct es_event *ev) {
    struct es_model_ev e = {es_payload_of(ev), ev->time, NULL};
    if (m->events++ == 0 || e.t < m->first_time) {
        m->first_time = e.t;
        set_window(m);
    }
    if (e.t > m->now)
        m->now = e.t;
    second_passed(m);
    if (ev->type == ES_EVENT_BLOCK_MARKER) {
        block_marker(m, ev);
        return;
    }
    e.cap = block_cap(m, ev);
    switch (ev->type) {
    case ES_EVENT_RUN_THREAD:
    case ES_EVENT_STOP_THREAD:
    case ES_EVENT_USER_MSG:
    case ES_EVENT_USER_MARKER:
    case ES_EVENT_USER_BINARY_MSG:
        es_model_spans_event(m, ev, m->block_cap == ES_GLOBAL_CAP ? -1 : (int)m->block_cap);
        break;
    default:
        break;
    }
    es_model_handler *h = ev->type < HANDLED_TYPES ? handlers[ev->type] : NULL;
    if (h != NULL)
        h(m, &e);
}

/* What es_model_event does for each event of the run, summed: it has no
 * handler, is no block marker, and its time neither starts a second nor
 * comes before the first event. Block accounting: the events lie back to
 * back, so they fit in the current block exactly when their sum does; if
 * not, one of them left it, and from then on every event was outside. */
void es_model_skip(struct es_model *m, const struct es_stream_skip *run) {
    assert(m->events > 0 && run->min_time >= m->first_time && run->max_time < m->next_second);
    m->events += run->events;
    if (run->max_time > m->now)
        m->now = run->max_time;
    if (m->block_left >= run->bytes)
        m->block_left -= run->bytes;
    else
        enter_block(m, ES_GLOBAL_CAP, 0);
}

void es_model_header(struct es_model *m, const struct es_header *hdr) {
    /* The sizes were used by the reader; the header also says the GHC. */
    enter_block(m, ES_GLOBAL_CAP, 0);
    m->no_flush = es_model_header_no_flush(hdr);
}

void es_model_end(struct es_model *m) {
    if (m->spans.match != NULL)
        es_spans_settle(m->spans.match);
    es_model_caps_end(m);
    es_model_threads_end(m);
    m->ended = true;
}

void es_model_init(struct es_model *m) {
    memset(m, 0, sizeof *m);
    m->generations = 2;
    enter_block(m, ES_GLOBAL_CAP, 0);
    es_model_history_init(&m->h);
    for (unsigned t = 0; t < HANDLED_TYPES && t < ES_MAX_EVENT_TYPES; t++)
        m->want[t] = handlers[t] != NULL;
    m->want[ES_EVENT_BLOCK_MARKER] = true;
    m->want[ES_EVENT_USER_BINARY_MSG] = true; /* opentelemetry-haskell's spans */
    set_window(m);
    es_model_spans_init(m);
}

void es_model_figures_only(struct es_model *m) {
    assert(m->events == 0);
    m->figures_only = true;
    /* Markers go only to the history's list (the notices are messages)
     * and to the spans (spans.c), which a marker may begin or end: still
     * read. */
    /* Info tables' names are for people: the exposition's labels are the
     * addresses (es_model_on_ipe keeps none of them). */
    m->want[ES_EVENT_IPE] = false;
    /* es_model_tl_at's cached bucket covers all time: the events that
     * write to the timeline write to one bucket no one reads, without a
     * test of their own. */
    m->h.at_i = 0;
    m->h.at_lo = 0;
    m->h.at_hi = UINT64_MAX;
}

void es_model_destroy(struct es_model *m) {
    es_model_census_free(m);
    es_model_costs_free(m);
    es_model_spans_free(m);
    es_model_ipe_free(m);
    es_model_threads_free(m);
    es_model_history_free(&m->h);
    es_model_sparks_free(m);
    memset(m, 0, sizeof *m);
}

void es_model_reset(struct es_model *m) {
    bool figures_only = m->figures_only;
    es_model_destroy(m);
    es_model_init(m);
    if (figures_only)
        es_model_figures_only(m);
}
