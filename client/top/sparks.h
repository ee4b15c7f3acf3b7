/* SPDX-License-Identifier: BSD-3-Clause */
/* The sparks block of `eventlog-socket top` (client/top/sparks.c): what
 * became of the program's sparks (par), in all and per capability, the
 * sparks in the pools and the rate at which they are created, from the
 * model's spark counters (client/model/sparks.c). The lines are formatted
 * apart from the drawing, so a test can read them without a terminal.
 * Loop thread only (the model's). */
#ifndef ES_TOP_SPARKS_H
#define ES_TOP_SPARKS_H

#include "model/model.h"

#include <stddef.h>

/* Lines of the block at most, and their length. */
#define ES_TOP_SPARK_LINES 8
#define ES_TOP_SPARK_LEN   160

/* Fill up to `max` (<= ES_TOP_SPARK_LINES) lines: a header and the
 * program's totals, then a line per capability as long as they fit (the
 * rest counted on the last), then the spark events (+RTS -lf) when there
 * are some; a single line when there are no sparks. Under 90 columns
 * (`cols`) the table's headings are shortened and its columns narrowed,
 * so that every line but the events' fits 80. Returns how many. */
size_t es_top_sparks_lines(const struct es_model *m, char lines[][ES_TOP_SPARK_LEN], size_t max,
                           int cols);

/* Draw them from line `y` on, at most `max`; returns the next free line.
 * Between initscr and endwin. */
int es_top_sparks_draw(const struct es_model *m, int y, size_t max);

#endif
