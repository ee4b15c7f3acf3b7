/* SPDX-License-Identifier: BSD-3-Clause */
/* `record --trigger CONDITION`: the conditions a watcher fires on, read
 * from the command line and judged event by event (the events a skimming
 * reader hands out one by one: es_triggers_want):
 *
 *   gc-pause>DURATION   a capability's GC took longer (GC_START to GC_END)
 *   heap-size>SIZE      the heap grew past it (HEAP_SIZE)
 *   live>SIZE           live bytes after a major GC past it (HEAP_LIVE)
 *   marker~PATTERN      a marker (traceMarker) matches the extended regex
 *   message~PATTERN     a message of the program's (traceEvent) matches
 *   span:LABEL>DURATION a span LABEL (client/spans/spans.h: START/STOP
 *                       in one thread) took longer, judged at its STOP
 *   exit-failure        the RTS reported an error (the library's error
 *                       notice: an uncaught exception, an exhausted heap)
 *                       or the stream ended without its end marker
 *
 * Pure (no I/O); the watcher's loop thread. */
#ifndef ES_TRIGGER_H
#define ES_TRIGGER_H

#include "format/es_events.h"
#include "spans/spans.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ES_TRIGGERS_MAX 16
/* A capability number past this is not followed (GC pauses). */
#define ES_TRIGGER_CAPS 256

enum es_trigger_kind {
    ES_TRIGGER_GC_PAUSE,
    ES_TRIGGER_HEAP_SIZE,
    ES_TRIGGER_LIVE,
    ES_TRIGGER_MARKER,
    ES_TRIGGER_MESSAGE,
    ES_TRIGGER_EXIT_FAILURE,
    ES_TRIGGER_SPAN,
};

struct es_trigger {
    enum es_trigger_kind kind;
    const char *text;   /* as written */
    uint64_t threshold; /* ns or bytes */
    regex_t re;         /* MARKER, MESSAGE */
    const char *label;  /* SPAN: within text, `label_len` bytes */
    size_t label_len;
};

/* What fired: which condition, at what program time (and from when, for
 * a condition that spans a time: its file should begin there if it can),
 * and a sentence. */
struct es_firing {
    const struct es_trigger *by;
    uint64_t time, from;
    char what[300];
};

struct es_triggers {
    struct es_trigger t[ES_TRIGGERS_MAX];
    unsigned n;
    uint64_t gc_start[ES_TRIGGER_CAPS]; /* per capability: its GC's start, 0: none */
    bool error_seen;                    /* the library's error notice came */
    struct es_spans *spans;             /* with a span condition: the matcher */
    struct es_firing span_fired;        /* what the matcher's last span fired */
    bool span_firing;
    uint64_t open_at, open_oldest; /* es_triggers_keep_from's last look */
};

/* Add the condition `text` (kept, not copied). Returns 0, or -1 with a
 * message for the user in `err` (also when out of memory). */
int es_triggers_add(struct es_triggers *ts, const char *text, char *err, size_t size);
void es_triggers_free(struct es_triggers *ts);

/* The event types the conditions look at (ES_MAX_EVENT_TYPES flags, for
 * es_conn_callbacks.want): block markers and the library's notices
 * (USER_MSG) always. */
void es_triggers_want(const struct es_triggers *ts, bool *want);

/* An event of capability `cap` (its block's; 0xffff: the global buffer):
 * true with *out filled when a condition holds. */
bool es_triggers_event(struct es_triggers *ts, const struct es_event *ev, uint16_t cap,
                       struct es_firing *out);

/* What the watcher keeps: from program time `from` (--before before the
 * latest event), or from the start of the earliest open span a span
 * condition watches, if earlier, so that a slow span's file can begin at
 * its start. Looks at the open spans at most every `every` ns of program
 * time: a span opened since began after the last look. */
uint64_t es_triggers_keep_from(struct es_triggers *ts, uint64_t from, uint64_t every);

/* The stream ended (`cut`: without its end marker) at program time
 * `time`: true with *out filled when exit-failure holds and has not fired
 * at the error notice already (`fired_at_error`). */
bool es_triggers_end(struct es_triggers *ts, bool cut, uint64_t time, bool fired_at_error,
                     struct es_firing *out);

#endif
