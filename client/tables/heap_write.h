/* SPDX-License-Identifier: BSD-3-Clause */
/* The files `heap` writes (client/tables/heap.c), one census at a time: the
 * RTS's classic .hp format (JOB, DATE, then a sample per census, and the
 * empty sample the RTS ends with; labels as rts/ProfHeap.c prints them),
 * which hp2ps and hp2pretty read, and CSV rows (time_s, label, bytes).
 * Pure functions on a FILE, of the model's census; used by the thread that
 * owns the file (heap's loop). */
#ifndef ES_HEAP_WRITE_H
#define ES_HEAP_WRITE_H

#include "model/model.h"

#include <stdint.h>
#include <stdio.h>

/* The .hp file's head: JOB (the program and, from a profiling RTS, its
 * arguments and RTS options), DATE, the units and an empty first sample. */
void es_heapwrite_hp_begin(FILE *f, const struct es_model *m);
/* One census as a sample (then flushed). */
void es_heapwrite_hp_sample(FILE *f, const struct es_model *m, const struct es_model_census *c);
/* The empty sample at `end` (ns since the start) that ends the file. */
void es_heapwrite_hp_end(FILE *f, uint64_t end);

/* The CSV file's header row. */
void es_heapwrite_csv_begin(FILE *f);
/* One census as rows (then flushed). */
void es_heapwrite_csv_sample(FILE *f, const struct es_model *m, const struct es_model_census *c);

#endif
