/* The rows of `eventlog-socket table` (client/tables/table.c) for the kinds read
 * straight from the events, one row per event: gc, heap, markers, sparks,
 * threads (census comes from the model's censuses, in table.c). Each kind
 * has a header row and a writer that is given every event with the
 * capability of its block; it writes a row for the events of its kind and
 * ignores the rest. Payloads are read field by field against their length:
 * a short or garbled event is skipped and counted, never over-read.
 *
 * docs/command.md's "Tables for dataframes" lists the columns;
 * es_table_columns gives them for --help. Used by the loop thread, one es_table_rows per table. */
#ifndef ES_TABLE_ROWS_H
#define ES_TABLE_ROWS_H

#include "format/es_events.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum es_table_kind {
    ES_TABLE_GC,
    ES_TABLE_HEAP,
    ES_TABLE_CENSUS,
    ES_TABLE_MARKERS,
    ES_TABLE_SPARKS,
    ES_TABLE_THREADS,
    ES_TABLE_KINDS
};

/* No capability: the event is in the RTS's global block, or in none. */
#define ES_TABLE_NO_CAP (-1)

struct es_table_gc_cap; /* table_rows.c: a capability's GC intervals */

struct es_table_rows {
    enum es_table_kind kind;
    FILE *out;
    uint64_t rows;              /* rows written, the header not counted */
    uint64_t garbled;           /* events of the kind too short to read */
    struct es_table_gc_cap *gc; /* by capability, ES_TABLE_MAX_CAPS (gc only) */
};

/* The kind named `name` ("gc", ...), or -1. */
int es_table_kind(const char *name);
/* Its name, and its columns as the header row has them. */
const char *es_table_kind_name(enum es_table_kind k);
const char *es_table_columns(enum es_table_kind k);
/* What to do when a stream gave no rows of kind `k` (a hint, one line). */
const char *es_table_hint(enum es_table_kind k);

/* Set up for kind `k` writing to `out` and write the header row. Returns 0,
 * or -1 out of memory. */
int es_table_rows_init(struct es_table_rows *t, enum es_table_kind k, FILE *out);
/* An event, on capability `cap` (ES_TABLE_NO_CAP: none). */
void es_table_rows_event(struct es_table_rows *t, const struct es_event *ev, int cap);
/* The end of the stream: write the rows still held back. */
void es_table_rows_finish(struct es_table_rows *t);
void es_table_rows_destroy(struct es_table_rows *t);

#endif
