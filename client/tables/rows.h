/* SPDX-License-Identifier: BSD-3-Clause */
/* The rows of `eventlog-socket table` (client/tables/table.c) for the kinds read
 * straight from the events, one row per event: gc, heap, markers, sparks,
 * threads, profile, spans (census comes from the model's censuses, in table.c). Each kind
 * has a header row and a writer that is given every event with the
 * capability of its block (profile: of the sample's own field); it writes a
 * row for the events of its kind and
 * ignores the rest. Payloads are read field by field against their length:
 * a short or garbled event is skipped and counted, never over-read.
 *
 * docs/command.md's "Tables for dataframes" lists the columns;
 * es_rows_columns gives them for --help. Used by the loop thread, one es_rows per table. */
#ifndef ES_ROWS_H
#define ES_ROWS_H

#include "format/es_events.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum es_rows_kind {
    ES_ROWS_GC,
    ES_ROWS_HEAP,
    ES_ROWS_CENSUS,
    ES_ROWS_MARKERS,
    ES_ROWS_SPARKS,
    ES_ROWS_THREADS,
    ES_ROWS_PROFILE,
    ES_ROWS_SPANS,
    ES_ROWS_KINDS
};

/* No capability: the event is in the RTS's global block, or in none. */
#define ES_ROWS_NO_CAP (-1)

struct es_rows_gc_cap; /* rows.c: a capability's GC intervals */
struct es_prof;        /* client/profile/prof.h: the cost centres' names */
struct es_spans;       /* client/spans/spans.h: START/STOP matched per thread */

struct es_rows {
    enum es_rows_kind kind;
    FILE *out;
    uint64_t rows;             /* rows written, the header not counted */
    uint64_t garbled;          /* events of the kind too short to read */
    struct es_rows_gc_cap *gc; /* by capability, ES_ROWS_MAX_CAPS (gc only) */
    struct es_prof *prof;      /* profile only */
    struct es_spans *spans;    /* spans only: a row at each span's STOP */
};

/* The kind named `name` ("gc", ...), or -1. */
int es_rows_kind(const char *name);
/* Its name, and its columns as the header row has them. */
const char *es_rows_kind_name(enum es_rows_kind k);
const char *es_rows_columns(enum es_rows_kind k);
/* What to do when a stream gave no rows of kind `k` (a hint, one line). */
const char *es_rows_hint(enum es_rows_kind k);

/* Set up for kind `k` writing to `out` and write the header row. Returns 0,
 * or -1 out of memory. */
int es_rows_init(struct es_rows *t, enum es_rows_kind k, FILE *out);
/* An event, on capability `cap` (ES_ROWS_NO_CAP: none). */
void es_rows_event(struct es_rows *t, const struct es_event *ev, int cap);
/* The end of the stream: write the rows still held back. */
void es_rows_finish(struct es_rows *t);
void es_rows_destroy(struct es_rows *t);

#endif
