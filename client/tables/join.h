/* SPDX-License-Identifier: BSD-3-Clause */
/* Two runs' heap profiles read side by side and joined label by label, and
 * their time profiles cost centre by cost centre, for
 * `compare` (client/tables/compare.c, text and CSV) and `report RUN_A RUN_B`
 * (client/web/report_two.c, an HTML page). Both runs are read at once on one
 * loop (two sessions, each a recording or a live program to its end), each
 * into its own model; each label's peak and the sum of its bytes are kept
 * as the censuses complete. The join gives one row per label of either run
 * (0 for the run that lacks it: the RTS leaves a label with no live bytes
 * out of a census), the mean over the run's censuses, sorted by the size of
 * the peak's difference, largest first; the spans label by label (each
 * model's summary). Runs on one thread, the loop's. */
#ifndef ES_JOIN_H
#define ES_JOIN_H

#include "model/model.h"
#include "profile/prof.h"
#include "source/session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct es_join_run {
    struct es_session ses;
    struct es_model *model;
    struct es_prof *prof; /* the run's cost-centre samples */
    uint64_t *peak, *sum; /* by the model's label index */
    uint8_t *seen;
    size_t n; /* labels the arrays hold */
    bool oom, ended;
    bool header; /* the eventlog's header arrived */
    int status;  /* 0 complete, 1 cut or interrupted, 2 no eventlog */
    char why[700];
};

struct es_join {
    const char *cmd; /* "compare" or "report", for messages */
    struct es_join_run run[2];
    bool stopped;
    /* Set by es_join_check: what both runs have to compare. */
    bool have_heap, have_time, have_spans;
};

/* What es_join_check is asked for. */
enum es_join_want {
    ES_JOIN_HEAP,   /* the heap profiles (an error without them) */
    ES_JOIN_TIME,   /* the time profiles (an error without them) */
    ES_JOIN_SPANS,  /* the spans (an error without them) */
    ES_JOIN_EITHER, /* whichever both runs have (an error without any) */
};

/* A span label of either run: its summary in each (NULL for the run
 * without it; the model's, valid while the runs are). */
struct es_join_span {
    const char *label;
    const struct es_model_span_label *in[2];
};

/* A cost centre of either run's time profile: its samples as the innermost
 * frame (self) and anywhere on the stack (total, once per sample), by the
 * name `profile` gives the frame. */
struct es_join_cost {
    char *name;
    uint64_t self[2], total[2];
};

/* A row of the joined table. */
struct es_join_row {
    const char *label; /* the model's: valid while the runs are */
    bool in[2];
    uint64_t peak[2];
    double mean[2];
};

/* Ready the sessions (recordings allowed); their options are in
 * cmp->run[0].ses.opt, for es_opts_parse. */
void es_join_init(struct es_join *cmp, const char *cmd);
/* Read both runs to their ends (or the first failure, or a signal).
 * Returns -1 when both were read, else 2 after a message. */
int es_join_read(struct es_join *cmp, const char *src[2]);
/* Why the comparison cannot be made (a message printed: 2 for an error, 1
 * for a run without what `want` asks), or 0; sets have_heap and have_time. */
int es_join_check(struct es_join *cmp, enum es_join_want want);
/* The cost centres of both runs' time profiles, joined by name and sorted
 * by the change in their share of self samples, largest first; NULL when
 * memory ran out. Freed with es_join_costs_free. */
struct es_join_cost *es_join_costs(const struct es_join *cmp, size_t *ncosts);
void es_join_costs_free(struct es_join_cost *costs, size_t n);
/* "", "only in A" or "only in B". */
const char *es_join_cost_note(const struct es_join_cost *c);
/* A cost's share (0 to 1) of run `i`'s samples, self or total. */
double es_join_share(const struct es_join *cmp, uint64_t samples, int i);
/* Its shares in per cent: self in A, self in B, total in A, total in B. */
void es_join_cost_pcts(const struct es_join *cmp, const struct es_join_cost *c, double pct[4]);
/* The span labels of both runs, joined by label and sorted by the change
 * of their p99, largest first, those of one run last; NULL when memory
 * ran out or neither has spans. */
struct es_join_span *es_join_spans(const struct es_join *cmp, size_t *n);
/* A joined label's durations in seconds, in the order compare --spans
 * --csv and report's page give them: p50 in A, in B, p99 in A, in B, max
 * in A, in B; -1 where a run lacks the label (or a percentile). */
void es_join_span_times(const struct es_join_span *s, double t[6]);
/* The rows of both runs, joined by label and sorted; NULL when memory ran
 * out. */
struct es_join_row *es_join_rows(const struct es_join *cmp, size_t *nrows);
/* "", "only in A" or "only in B". */
const char *es_join_note(const struct es_join_row *w);
/* A message for each run that was cut or interrupted; 1 if one was, else 0. */
int es_join_warn_partial(const struct es_join *cmp, const char *what);
/* For each complete run with drop notices, the line record ends with:
 * "NAME: with gaps: ...; the program's end marker arrived" (a cut run's
 * why says its gaps already). */
void es_join_say_gaps(const struct es_join *cmp);
void es_join_free(struct es_join *cmp);

#endif
