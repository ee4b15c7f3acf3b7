/* SPDX-License-Identifier: BSD-3-Clause */
/* Spans: the program's own intervals, from the markers it posts. A span
 * begins with a user message or marker "START label" and ends with "STOP
 * label" (ghc-events-analyse's convention: traceEventIO or traceMarkerIO),
 * both posted by one Haskell thread; a "FAIL label" before its STOP marks
 * it failed (what withSpan posts when an exception ends it; protocol.md,
 * "Spans"): the thread an event belongs to is the
 * one its capability runs then (RUN_THREAD and STOP_THREAD, the scheduler
 * class of +RTS -l). A STOP ends the innermost open span of its label in
 * its thread; the spans open in a thread when it begins one are its
 * parents (the innermost is its parent). A STOP with no START in its
 * thread is counted, never paired across threads. Without scheduler events
 * the thread is unknown and spans are matched per capability. A span of C
 * code (eventlog_socket_span_begin/_end: the library's notice, in the
 * global block, es_notice_text_span) is matched in its OS thread, whose
 * notices come in the order it posted them.
 *
 * Events come in the stream's order, not time order: GHC 9.0 hands over a
 * capability's buffer when it fills, so a STOP posted on one capability
 * may come before its START from another. A STOP with no START open in
 * its thread is counted as unmatched and kept; when the block of a START
 * of its label with an earlier time ends (the next event is another
 * capability's, or es_spans_settle), the innermost such START ends at it
 * (and the count goes down).
 *
 * Memory is bounded: ES_SPANS_MAX_OPEN open spans per thread and
 * ES_SPANS_MAX_THREADS threads with open spans; past them a START is
 * counted and left out; ES_SPANS_MAX_PENDING STOPs kept in all. A thread that finishes drops its
 * open spans (counted). Labels are cut at ES_SPANS_LABEL_MAX bytes.
 *
 * Pure, single-threaded (the reader's loop thread): each completed span is
 * handed to a callback at its STOP. */
#ifndef ES_SPANS_H
#define ES_SPANS_H

#include "format/es_events.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ES_SPANS_LABEL_MAX   200
#define ES_SPANS_MAX_OPEN    64
#define ES_SPANS_MAX_THREADS 65536
#define ES_SPANS_MAX_CAPS    1024
/* STOPs kept for a START still to come, in all threads (spans.c). */
#define ES_SPANS_MAX_PENDING 4096
#define ES_SPANS_DIRTY       64

/* A completed span. */
struct es_span {
    const char *label;  /* NUL-terminated, at most ES_SPANS_LABEL_MAX bytes */
    const char *parent; /* the enclosing span's label, "" for none */
    uint32_t thread;    /* 0: unknown (no scheduler events), or a span of C code */
    uint32_t os_thread; /* a span of C code: its OS thread's id; else 0 */
    int cap;            /* the capability of its START, -1 for none */
    uint64_t start, end;
    unsigned depth; /* 0 for a span with no parent */
    bool failed;
};

typedef void es_spans_done(const struct es_span *s, void *ctx);

struct es_spans_open; /* spans.c: one thread's open spans */

struct es_spans {
    es_spans_done *done;
    void *ctx;
    uint32_t running[ES_SPANS_MAX_CAPS]; /* each capability's thread, 0: none */
    struct es_spans_open *threads;       /* a hash table of `slots`, by thread key */
    size_t slots, used;
    /* Counts, for what the views say. */
    uint64_t spans;     /* completed */
    uint64_t unmatched; /* STOPs and FAILs with no START open in their thread */
    uint64_t dropped;   /* STARTs left out: too many open */
    uint64_t abandoned; /* open spans of threads that finished */
    uint64_t garbled;   /* scheduler events too short to read */
    size_t pending;     /* STOPs kept for a START still to come */
    int block_cap;      /* the capability of the events read last (-2: none) */
    /* Threads that opened a START while STOPs of theirs wait: settled
     * when the block ends (past ES_SPANS_DIRTY of them: all threads). */
    uint64_t dirty[ES_SPANS_DIRTY];
    unsigned ndirty;
    bool oom;
};

void es_spans_init(struct es_spans *sp, es_spans_done *done, void *ctx);
void es_spans_destroy(struct es_spans *sp);
/* An event on capability `cap` (-1: none, as the global block's). */
void es_spans_event(struct es_spans *sp, const struct es_event *ev, int cap);
/* The earliest start of the open spans labelled `label` (`len` bytes),
 * UINT64_MAX for none: what a watcher keeps for a span still running. */
uint64_t es_spans_oldest_open(const struct es_spans *sp, const char *label, size_t len);

enum es_spans_kind { ES_SPANS_NONE, ES_SPANS_START, ES_SPANS_STOP, ES_SPANS_FAIL };

/* Pair the waiting STOPs with the STARTs read since (at the stream's end:
 * its last block has ended). */
void es_spans_settle(struct es_spans *sp);

/* Whether the text is a span's START, STOP or FAIL: its label in *label,
 * *len (a label ends at a NUL; an empty one is none). */
enum es_spans_kind es_spans_parse(const uint8_t *text, size_t n, const uint8_t **label,
                                  size_t *len);

#endif
