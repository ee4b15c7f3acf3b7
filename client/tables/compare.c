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
 * table on stdout, or CSV with --csv. Runs on one thread, the loop's. */
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

static void write_text(FILE *f, const struct es_join *cmp, const struct es_join_row *rows,
                       size_t n) {
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
    fprintf(f, "\n%-*s %10s %10s %11s %10s %10s %11s  %s\n", LABEL_WIDTH, "label", "peak A",
            "peak B", "peak B-A", "mean A", "mean B", "mean B-A", "note");
    for (size_t i = 0; i < n; i++) {
        const struct es_join_row *w = &rows[i];
        char label[LABEL_WIDTH + 1], c[6][32];
        snprintf(label, sizeof label, "%s", w->label);
        if (strlen(w->label) > LABEL_WIDTH)
            strcpy(label + es_utf8_cut(label, LABEL_WIDTH - 3), "...");
        for (char *p = label; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
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

/* Write the comparison; the exit status. */
static int output(const struct es_join *cmp, const char *csv) {
    int status = es_join_check(cmp);
    if (status != 0)
        return status;
    size_t n = 0;
    struct es_join_row *rows = es_join_rows(cmp, &n);
    if (rows == NULL) {
        fprintf(stderr, "eventlog-socket compare: out of memory\n");
        return 2;
    }
    FILE *f = csv == NULL || strcmp(csv, "-") == 0 ? stdout : es_outfile_fopen(csv, "w");
    if (f == NULL) {
        fprintf(stderr, "eventlog-socket compare: cannot create %s: %s\n", csv, strerror(errno));
        free(rows);
        return 2;
    }
    if (csv)
        write_csv(f, rows, n);
    else
        write_text(f, cmp, rows, n);
    int werr = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
    if (f != stdout && fclose(f) != 0 && werr == 0)
        werr = errno;
    free(rows);
    if (werr) {
        fprintf(stderr, "eventlog-socket compare: cannot write %s: %s\n", csv ? csv : "stdout",
                strerror(werr));
        return 2;
    }
    status = es_join_warn_partial(cmp, "the comparison");
    if (csv)
        fprintf(stderr, "eventlog-socket compare: %zu labels to %s\n", n,
                strcmp(csv, "-") == 0 ? "stdout" : csv);
    es_join_say_gaps(cmp);
    return status;
}

int es_compare_main(int argc, char **argv) {
    static struct es_join compare;
    struct es_join *cmp = &compare;
    es_join_init(cmp, "compare");
    const char *src[2] = {NULL, NULL}, *csv = NULL;
    const struct es_opt opts[] = {{"--csv", NULL, ES_OPT_VALUE, &csv, 0,
                                   "%s needs a file name (or - for stdout)", NULL, false},
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
    if (csv != NULL && !es_outfile_check("compare", NULL, csv))
        status = 2;
    else
        status = es_join_read(cmp, src);
    if (status < 0)
        status = output(cmp, csv);
    es_join_free(cmp);
    return status;
}
