/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket compare RUN_A RUN_B [--csv OUT|-]`: two runs' heap
 * profiles side by side, label by label: each label's peak and mean
 * residency in A and in B and the difference (B - A), sorted by the size of
 * the peak's difference, largest first; a label that only one run has is
 * included, with 0 for the other (the RTS leaves a label with no live bytes
 * out of a census) and a note. The mean is over the run's censuses, a
 * census without the label counting 0. Both runs are read at once on one
 * loop (two sessions, each a recording or a live program to its end), each
 * into its own model; the censuses are summed as they complete. A readable
 * table on stdout, or CSV with --csv. When both runs streamed cost-centre
 * samples, the table starts with their time profiles side by side: each
 * cost centre's share of the samples, self and total, in A and in B, the
 * largest change first (--time: only those, and --time --csv all of them as
 * CSV). When both runs have spans, their labels follow: each label's count,
 * p50, p99 and how many failed in A and in B, the largest change of p99
 * first (--spans: only those, and --spans --csv all of them as CSV). Runs
 * on one thread, the loop's. */
#include "join.h"
#include "csv.h"
#include "opts.h"
#include "format/es_utf8.h"
#include "source/outfile.h"
#include "subcommands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void write_csv(FILE *f, const struct es_join_row *rows, size_t n) {
    fprintf(f, "label,peak_a_bytes,peak_b_bytes,peak_diff_bytes,mean_a_bytes,mean_b_bytes,"
               "mean_diff_bytes,note\n");
    for (size_t i = 0; i < n; i++) {
        const struct es_join_row *w = &rows[i];
        es_csv_str(f, w->label);
        fprintf(f, ",%llu,%llu,%lld,%.1f,%.1f,%.1f,%s\n", (unsigned long long)w->peak[0],
                (unsigned long long)w->peak[1], (long long)w->peak[1] - (long long)w->peak[0],
                w->mean[0], w->mean[1], w->mean[1] - w->mean[0], es_join_note(w));
    }
}

/* Bytes for people: "512 B", "3.4 KiB", "12.0 MiB", "1.5 GiB"; with a sign
 * when `sign`. */
static void human(char *out, size_t size, double v, bool sign) {
    const char *s = sign ? (v < 0 ? "-" : v > 0 ? "+" : "") : "";
    double a = v < 0 ? -v : v;
    if (a < 1024)
        snprintf(out, size, "%s%.0f B", s, a);
    else if (a < 1024.0 * 1024)
        snprintf(out, size, "%s%.1f KiB", s, a / 1024);
    else if (a < 1024.0 * 1024 * 1024)
        snprintf(out, size, "%s%.1f MiB", s, a / (1024.0 * 1024));
    else
        snprintf(out, size, "%s%.2f GiB", s, a / (1024.0 * 1024 * 1024));
}

#define LABEL_WIDTH 44

/* `s` for a column of LABEL_WIDTH: cut with "..." when longer (between
 * two characters), and with `blank` its control characters as spaces (the
 * labels'; the cost centres' names are written as they are). */
static void fit_label(char out[LABEL_WIDTH + 1], const char *s, bool blank) {
    snprintf(out, LABEL_WIDTH + 1, "%s", s);
    if (strlen(s) > LABEL_WIDTH)
        strcpy(out + es_utf8_cut(out, LABEL_WIDTH - 3), "...");
    for (char *p = out; blank && *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
}

/* --- the time profiles --- */

#define TIME_ROWS 20 /* the text's table; CSV has them all */

static void write_time_csv(FILE *f, const struct es_join *cmp, const struct es_join_cost *costs,
                           size_t n) {
    fprintf(f, "cost_centre,self_a_samples,self_b_samples,self_a_pct,self_b_pct,self_diff_pct,"
               "total_a_pct,total_b_pct,total_diff_pct,note\n");
    for (size_t i = 0; i < n; i++) {
        const struct es_join_cost *c = &costs[i];
        double pct[4];
        es_join_cost_pcts(cmp, c, pct);
        double sa = pct[0], sb = pct[1], ta = pct[2], tb = pct[3];
        es_csv_str(f, c->name);
        fprintf(f, ",%llu,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%s\n", (unsigned long long)c->self[0],
                (unsigned long long)c->self[1], sa, sb, sb - sa, ta, tb, tb - ta,
                es_join_cost_note(c));
    }
}

static void write_time_text(FILE *f, const struct es_join *cmp, const struct es_join_cost *costs,
                            size_t n) {
    fprintf(f,
            "\nTime profile: %llu samples in A, %llu in B; shares of each run's samples, the "
            "largest changes of self time first\n",
            (unsigned long long)cmp->run[0].prof->samples,
            (unsigned long long)cmp->run[1].prof->samples);
    fprintf(f, "%-*s %8s %8s %9s %8s %8s %9s  %s\n", LABEL_WIDTH, "cost centre", "self A", "self B",
            "self B-A", "total A", "total B", "total B-A", "note");
    for (size_t i = 0; i < n && i < TIME_ROWS; i++) {
        const struct es_join_cost *c = &costs[i];
        char name[LABEL_WIDTH + 1];
        fit_label(name, c->name, false);
        double pct[4];
        es_join_cost_pcts(cmp, c, pct);
        double sa = pct[0], sb = pct[1], ta = pct[2], tb = pct[3];
        const char *note = es_join_cost_note(c);
        fprintf(f, "%-*s %7.1f%% %7.1f%% %+8.1f%% %7.1f%% %7.1f%% %+8.1f%%%s%s\n", LABEL_WIDTH,
                name, sa, sb, sb - sa, ta, tb, tb - ta, note[0] ? "  " : "", note);
    }
    if (n > TIME_ROWS)
        fprintf(f, "(%zu more cost centres: --time --csv - lists them all)\n", n - TIME_ROWS);
}

/* --- the spans --- */

#define SPAN_ROWS 20

static const char *span_note(const struct es_join_span *s) {
    return s->in[0] == NULL ? "only in B" : s->in[1] == NULL ? "only in A" : "";
}

static void write_spans_csv(FILE *f, const struct es_join_span *sp, size_t n) {
    fprintf(f, "label,count_a,count_b,p50_a_s,p50_b_s,p99_a_s,p99_b_s,max_a_s,max_b_s,failed_a,"
               "failed_b,note\n");
    for (size_t i = 0; i < n; i++) {
        const struct es_join_span *s = &sp[i];
        es_csv_str(f, s->label);
        for (int k = 0; k < 2; k++)
            fprintf(f, ",%llu", (unsigned long long)(s->in[k] ? s->in[k]->count : 0));
        /* Empty where a run has no such span (or no percentile). */
        double t[6];
        es_join_span_times(s, t);
        for (int k = 0; k < 6; k++)
            if (t[k] >= 0)
                fprintf(f, ",%.9f", t[k]);
            else
                fputs(",", f);
        for (int k = 0; k < 2; k++)
            fprintf(f, ",%llu", (unsigned long long)(s->in[k] ? s->in[k]->failed : 0));
        fprintf(f, ",%s\n", span_note(s));
    }
}

/* A duration for people ("-" for none): 812us, 41.3ms, 2.50s. */
static void span_ms(char *out, size_t size, double s) {
    if (s < 0)
        snprintf(out, size, "-");
    else if (s < 0.001)
        snprintf(out, size, "%.0fus", s * 1e6);
    else if (s < 10)
        snprintf(out, size, "%.1fms", s * 1e3);
    else
        snprintf(out, size, "%.2fs", s);
}

static void write_spans_text(FILE *f, const struct es_join *cmp, const struct es_join_span *sp,
                             size_t n) {
    fprintf(f, "\nSpans: %llu in A, %llu in B; per label, the largest change of p99 first\n",
            (unsigned long long)cmp->run[0].model->spans.match->spans,
            (unsigned long long)cmp->run[1].model->spans.match->spans);
    fprintf(f, "%-*s %8s %8s %9s %9s %9s %9s %8s %8s  %s\n", LABEL_WIDTH, "label", "count A",
            "count B", "p50 A", "p50 B", "p99 A", "p99 B", "failed A", "failed B", "note");
    for (size_t i = 0; i < n && i < SPAN_ROWS; i++) {
        const struct es_join_span *s = &sp[i];
        char label[LABEL_WIDTH + 1], d[4][16];
        fit_label(label, s->label, true);
        double t[6];
        es_join_span_times(s, t);
        for (int k = 0; k < 4; k++)
            span_ms(d[k], sizeof d[k], t[k]);
        const char *note = span_note(s);
        fprintf(f, "%-*s %8llu %8llu %9s %9s %9s %9s %8llu %8llu%s%s\n", LABEL_WIDTH, label,
                (unsigned long long)(s->in[0] ? s->in[0]->count : 0),
                (unsigned long long)(s->in[1] ? s->in[1]->count : 0), d[0], d[1], d[2], d[3],
                (unsigned long long)(s->in[0] ? s->in[0]->failed : 0),
                (unsigned long long)(s->in[1] ? s->in[1]->failed : 0), note[0] ? "  " : "", note);
    }
    if (n > SPAN_ROWS)
        fprintf(f, "(%zu more labels: --spans --csv - lists them all)\n", n - SPAN_ROWS);
}

/* What one comparison holds: the heap's rows, the time profiles' cost
 * centres, the spans' labels (each NULL when not shown). */
struct tables {
    struct es_join_row *rows;
    struct es_join_cost *costs;
    struct es_join_span *spans;
    size_t n, ncosts, nspans;
};

static void write_text(FILE *f, const struct es_join *cmp, const struct tables *t) {
    for (int i = 0; i < 2; i++) {
        const struct es_join_run *r = &cmp->run[i];
        const struct es_model *m = r->model;
        /* A run without its name (started from Haskell on GHC 9.0) says
         * why rather than leaving it out. */
        fprintf(f, "%c: %s (%s, %llu censuses, %.2f s)\n", 'A' + i, r->ses.conn->name,
                m->program[0]            ? m->program
                : es_model_late_start(m) ? "program not named in the eventlog: started from Haskell"
                                         : "program not named in the eventlog",
                (unsigned long long)m->censuses, (double)m->now / 1e9);
    }
    if (t->costs != NULL)
        write_time_text(f, cmp, t->costs, t->ncosts);
    if (t->spans != NULL)
        write_spans_text(f, cmp, t->spans, t->nspans);
    if (t->rows == NULL)
        return;
    fprintf(f, "\n%-*s %10s %10s %11s %10s %10s %11s  %s\n", LABEL_WIDTH, "label", "peak A",
            "peak B", "peak B-A", "mean A", "mean B", "mean B-A", "note");
    for (size_t i = 0; i < t->n; i++) {
        const struct es_join_row *w = &t->rows[i];
        char label[LABEL_WIDTH + 1], c[6][32];
        fit_label(label, w->label, true);
        human(c[0], sizeof c[0], (double)w->peak[0], false);
        human(c[1], sizeof c[1], (double)w->peak[1], false);
        human(c[2], sizeof c[2], (double)w->peak[1] - (double)w->peak[0], true);
        human(c[3], sizeof c[3], w->mean[0], false);
        human(c[4], sizeof c[4], w->mean[1], false);
        human(c[5], sizeof c[5], w->mean[1] - w->mean[0], true);
        const char *note = es_join_note(w);
        fprintf(f, "%-*s %10s %10s %11s %10s %10s %11s%s%s\n", LABEL_WIDTH, label, c[0], c[1], c[2],
                c[3], c[4], c[5], note[0] ? "  " : "", note);
    }
}

static void tables_free(struct tables *t) {
    free(t->rows);
    es_join_costs_free(t->costs, t->ncosts);
    free(t->spans);
}

/* What --time, --spans or neither asks for; 0, or 2 after a message. */
static int tables_make(struct tables *t, const struct es_join *cmp, enum es_join_want want,
                       bool csv) {
    bool heap = cmp->have_heap && want != ES_JOIN_TIME && want != ES_JOIN_SPANS;
    bool time = cmp->have_time && (want == ES_JOIN_TIME || (!csv && want != ES_JOIN_SPANS));
    bool spans = cmp->have_spans && (want == ES_JOIN_SPANS || (!csv && want != ES_JOIN_TIME));
    if (heap)
        t->rows = es_join_rows(cmp, &t->n);
    if (time)
        t->costs = es_join_costs(cmp, &t->ncosts);
    if (spans)
        t->spans = es_join_spans(cmp, &t->nspans);
    if ((heap && t->rows == NULL) || (time && t->costs == NULL) || (spans && t->spans == NULL)) {
        fprintf(stderr, "eventlog-socket compare: out of memory\n");
        tables_free(t);
        return 2;
    }
    return 0;
}

/* Write the comparison; the exit status. */
static int output(struct es_join *cmp, const char *csv, enum es_join_want want) {
    int status = es_join_check(cmp, want == ES_JOIN_EITHER && csv ? ES_JOIN_HEAP : want);
    if (status != 0)
        return status;
    struct tables t = {0};
    if (tables_make(&t, cmp, want, csv != NULL) != 0)
        return 2;
    FILE *f = csv == NULL || strcmp(csv, "-") == 0 ? stdout : es_outfile_fopen(csv, "w");
    if (f == NULL) {
        fprintf(stderr, "eventlog-socket compare: cannot create %s: %s\n", csv, strerror(errno));
        tables_free(&t);
        return 2;
    }
    if (csv && want == ES_JOIN_TIME)
        write_time_csv(f, cmp, t.costs, t.ncosts);
    else if (csv && want == ES_JOIN_SPANS)
        write_spans_csv(f, t.spans, t.nspans);
    else if (csv)
        write_csv(f, t.rows, t.n);
    else
        write_text(f, cmp, &t);
    int werr = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
    if (f != stdout && fclose(f) != 0 && werr == 0)
        werr = errno;
    tables_free(&t);
    if (werr) {
        fprintf(stderr, "eventlog-socket compare: cannot write %s: %s\n", csv ? csv : "stdout",
                strerror(werr));
        return 2;
    }
    status = es_join_warn_partial(cmp, "the comparison");
    if (csv)
        fprintf(stderr, "eventlog-socket compare: %zu %s to %s\n",
                want == ES_JOIN_TIME    ? t.ncosts
                : want == ES_JOIN_SPANS ? t.nspans
                                        : t.n,
                want == ES_JOIN_TIME    ? "cost centres"
                : want == ES_JOIN_SPANS ? "span labels"
                                        : "labels",
                strcmp(csv, "-") == 0 ? "stdout" : csv);
    es_join_say_gaps(cmp);
    return status;
}

int es_compare_main(int argc, char **argv) {
    static struct es_join compare;
    struct es_join *cmp = &compare;
    es_join_init(cmp, "compare");
    const char *src[2] = {NULL, NULL}, *csv = NULL;
    bool time_only = false, spans_only = false;
    const struct es_opt opts[] = {{"--csv", NULL, ES_OPT_VALUE, &csv, 0,
                                   "%s needs a file name (or - for stdout)", NULL, false},
                                  {"--time", NULL, ES_OPT_FLAG, &time_only, 0, NULL, NULL, false},
                                  {"--spans", NULL, ES_OPT_FLAG, &spans_only, 0, NULL, NULL, false},
                                  {0}};
    const struct es_opts_spec spec = {.cmd = "compare",
                                      .opts = opts,
                                      .conn = &cmp->run[0].ses.opt,
                                      .pos = src,
                                      .npos = 2,
                                      .required = 2,
                                      .pos_names = (const char *[]){"RUN_A", "RUN_B"},
                                      .too_many = "two runs only (then %s)"};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    /* The output is checked before the runs are read (a live one to its
     * exit), and written only once both are. */
    if (time_only && spans_only) {
        fprintf(stderr, "eventlog-socket compare: --time or --spans, not both\n");
        status = 2;
    } else if (csv != NULL && !es_outfile_check("compare", NULL, csv))
        status = 2;
    else
        status = es_join_read(cmp, src);
    if (status < 0)
        status = output(cmp, csv,
                        time_only    ? ES_JOIN_TIME
                        : spans_only ? ES_JOIN_SPANS
                                     : ES_JOIN_EITHER);
    es_join_free(cmp);
    return status;
}
