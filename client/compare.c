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
#include "csv.h"
#include "model.h"
#include "opts.h"
#include "session.h"
#include "subcommands.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run {
    struct es_session ses;
    struct es_model *model;
    uint64_t *peak, *sum; /* by the model's label index */
    uint8_t *seen;
    size_t n; /* labels the arrays hold */
    bool oom, ended;
    bool header; /* the eventlog's header arrived */
    int status;  /* 0 complete, 1 cut or interrupted, 2 no eventlog */
    char why[700];
};

struct compare {
    struct run run[2];
    bool stopped;
};

/* A row of the joined table. */
struct row {
    const char *label;
    bool in[2];
    uint64_t peak[2];
    double mean[2];
};

static void compare_usage(FILE *f) {
    fprintf(f, "usage: eventlog-socket compare RUN_A RUN_B [--csv OUT.csv|-]\n"
               "                              [--connect-timeout S] [--retry]\n"
               "Compares the heap profiles of two runs (each a recorded eventlog or a live\n"
               "program, read to its end; run them with +RTS -hT or another -h mode): for\n"
               "each label, its peak and mean residency in A and in B and the difference\n"
               "B - A, sorted by the size of the peak's difference, largest first. A label\n"
               "only one run has is included, with 0 in the other (the RTS leaves a label\n"
               "with no live bytes out of a census) and the note \"only in A\"/\"only in B\".\n"
               "The mean is over the run's censuses, 0 where a census lacks the label.\n"
               "A table on stdout, or with --csv the columns\n"
               "  label,peak_a_bytes,peak_b_bytes,peak_diff_bytes,mean_a_bytes,mean_b_bytes,\n"
               "  mean_diff_bytes,note\n"
               "(- for stdout). Exit status 0 when both streams were complete, 1 when one\n"
               "was cut or had no heap profile, 2 on errors.\n");
}

/* ---- Reading. */

static int run_grow(struct run *r, size_t need) {
    if (need <= r->n)
        return 0;
    size_t n = r->n ? r->n : 64;
    while (n < need)
        n *= 2;
    uint64_t *peak = realloc(r->peak, n * sizeof *peak);
    if (peak)
        r->peak = peak;
    uint64_t *sum = realloc(r->sum, n * sizeof *sum);
    if (sum)
        r->sum = sum;
    uint8_t *seen = realloc(r->seen, n);
    if (seen)
        r->seen = seen;
    if (!peak || !sum || !seen)
        return -1;
    memset(r->peak + r->n, 0, (n - r->n) * sizeof *peak);
    memset(r->sum + r->n, 0, (n - r->n) * sizeof *sum);
    memset(r->seen + r->n, 0, n - r->n);
    r->n = n;
    return 0;
}

/* The census just completed (model->cur) into the sums and peaks. */
static void add_census(struct run *r) {
    const struct es_model_census *c = &r->model->cur;
    if (run_grow(r, r->model->nlabels) != 0) {
        r->oom = true;
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        uint32_t l = c->e[i].label;
        r->seen[l] = 1;
        r->sum[l] += c->e[i].bytes;
        if (c->e[i].bytes > r->peak[l])
            r->peak[l] = c->e[i].bytes;
    }
}

static void on_header(struct es_conn *c, void *ctx) {
    struct run *r = ctx;
    r->header = true;
    es_model_header(r->model, &c->stream.header);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    struct run *r = ctx;
    uint64_t before = r->model->censuses;
    es_model_event(r->model, ev);
    if (r->model->censuses != before)
        add_census(r);
}

static struct compare *the_compare;

static void both_ended(struct compare *cmp) {
    cmp->stopped = true;
    es_session_close(&cmp->run[0].ses);
    es_session_close(&cmp->run[1].ses);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct run *r = ctx;
    r->ended = true;
    if (how == ES_CONN_COMPLETE) {
        es_model_end(r->model);
        r->status = r->model->cut ? 1 : 0;
        snprintf(r->why, sizeof r->why, "%s",
                 r->model->cut ? "cut: the recording was cut" : "complete");
    } else {
        r->status = how == ES_CONN_CUT ? 1 : 2;
        snprintf(r->why, sizeof r->why, "%s%s", how == ES_CONN_CUT ? "cut: " : "", c->error);
    }
    /* A run that gives nothing to compare ends the other too. */
    struct compare *cmp = the_compare;
    if ((cmp->run[0].ended && cmp->run[1].ended) || r->status == 2)
        both_ended(cmp);
}

static void on_signal(void *ctx, int signum) {
    struct compare *cmp = ctx;
    for (int i = 0; i < 2; i++)
        if (!cmp->run[i].ended) {
            cmp->run[i].ended = true;
            cmp->run[i].status = 1;
            snprintf(cmp->run[i].why, sizeof cmp->run[i].why, "%s",
                     signum == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
        }
    both_ended(cmp);
}

/* ---- The join. */

static int by_label(const void *a, const void *b) {
    return strcmp(((const struct row *)a)->label, ((const struct row *)b)->label);
}

static uint64_t absdiff_u(uint64_t a, uint64_t b) {
    return a > b ? a - b : b - a;
}

static int by_difference(const void *pa, const void *pb) {
    const struct row *a = pa, *b = pb;
    uint64_t da = absdiff_u(a->peak[0], a->peak[1]), db = absdiff_u(b->peak[0], b->peak[1]);
    if (da != db)
        return da < db ? 1 : -1;
    double ma = a->mean[1] - a->mean[0], mb = b->mean[1] - b->mean[0];
    ma = ma < 0 ? -ma : ma;
    mb = mb < 0 ? -mb : mb;
    if (ma != mb)
        return ma < mb ? 1 : -1;
    return strcmp(a->label, b->label);
}

/* The rows of both runs, joined by label and sorted; NULL when memory ran
 * out. */
static struct row *join(const struct compare *cmp, size_t *nrows) {
    size_t cap = 0;
    for (int i = 0; i < 2; i++)
        cap += cmp->run[i].model->nlabels;
    struct row *rows = calloc(cap ? cap : 1, sizeof *rows);
    if (rows == NULL)
        return NULL;
    size_t n = 0, na = 0;
    for (int i = 0; i < 2; i++) {
        const struct run *r = &cmp->run[i];
        size_t labels = r->model->nlabels < r->n ? r->model->nlabels : r->n;
        double censuses = (double)(r->model->censuses ? r->model->censuses : 1);
        for (size_t l = 0; l < labels; l++) {
            if (!r->seen[l])
                continue;
            struct row key = {.label = es_model_label(r->model, (uint32_t)l)};
            struct row *to = i == 0 ? NULL : bsearch(&key, rows, na, sizeof *rows, by_label);
            if (to == NULL) {
                to = &rows[n++];
                to->label = key.label;
            }
            to->in[i] = true;
            to->peak[i] = r->peak[l];
            to->mean[i] = (double)r->sum[l] / censuses;
        }
        if (i == 0) {
            qsort(rows, n, sizeof *rows, by_label);
            na = n;
        }
    }
    qsort(rows, n, sizeof *rows, by_difference);
    *nrows = n;
    return rows;
}

static const char *note_of(const struct row *w) {
    return w->in[0] && w->in[1] ? "" : w->in[0] ? "only in A" : "only in B";
}

static void write_csv(FILE *f, const struct row *rows, size_t n) {
    fprintf(f, "label,peak_a_bytes,peak_b_bytes,peak_diff_bytes,mean_a_bytes,mean_b_bytes,"
               "mean_diff_bytes,note\n");
    for (size_t i = 0; i < n; i++) {
        const struct row *w = &rows[i];
        es_csv_str(f, w->label);
        fprintf(f, ",%llu,%llu,%lld,%.1f,%.1f,%.1f,%s\n", (unsigned long long)w->peak[0],
                (unsigned long long)w->peak[1], (long long)w->peak[1] - (long long)w->peak[0],
                w->mean[0], w->mean[1], w->mean[1] - w->mean[0], note_of(w));
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

static void write_text(FILE *f, const struct compare *cmp, const struct row *rows, size_t n) {
    for (int i = 0; i < 2; i++) {
        const struct run *r = &cmp->run[i];
        const struct es_model *m = r->model;
        fprintf(f, "%c: %s (%s%s%llu censuses, %.2f s)\n", "AB"[i], r -> ses.conn->name,
                m->program[0] ? m->program : "", m->program[0] ? ", " : "",
                (unsigned long long)m->censuses, (double)m->now / 1e9);
    }
    fprintf(f, "\n%-*s %10s %10s %11s %10s %10s %11s  %s\n", LABEL_WIDTH, "label", "peak A",
            "peak B", "peak B-A", "mean A", "mean B", "mean B-A", "note");
    for (size_t i = 0; i < n; i++) {
        const struct row *w = &rows[i];
        char label[LABEL_WIDTH + 1], c[6][32];
        snprintf(label, sizeof label, "%s", w->label);
        if (strlen(w->label) > LABEL_WIDTH)
            memcpy(label + LABEL_WIDTH - 3, "...", 3);
        for (char *p = label; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
        es_csv_clean_utf8(label);
        human(c[0], sizeof c[0], (double)w->peak[0], false);
        human(c[1], sizeof c[1], (double)w->peak[1], false);
        human(c[2], sizeof c[2], (double)w->peak[1] - (double)w->peak[0], true);
        human(c[3], sizeof c[3], w->mean[0], false);
        human(c[4], sizeof c[4], w->mean[1], false);
        human(c[5], sizeof c[5], w->mean[1] - w->mean[0], true);
        const char *note = note_of(w);
        fprintf(f, "%-*s %10s %10s %11s %10s %10s %11s%s%s\n", LABEL_WIDTH, label, c[0], c[1], c[2],
                c[3], c[4], c[5], note[0] ? "  " : "", note);
    }
}

/* Why the comparison cannot be made (a message printed), or 0. */
static int check_runs(const struct compare *cmp) {
    int status = 0;
    for (int i = 0; i < 2; i++) {
        const struct run *r = &cmp->run[i];
        const char *name = r->ses.conn->name;
        if (!r->ended) {
            /* The other run failed first. */
            continue;
        } else if (r->status == 2 || !r->header) {
            fprintf(stderr, "eventlog-socket: %s: %s\n", name, r->why[0] ? r->why : "no eventlog");
            status = 2;
        } else if (r->oom || r->model->oom) {
            fprintf(stderr, "eventlog-socket compare: %s: out of memory\n", name);
            status = 2;
        } else if (r->model->censuses == 0) {
            fprintf(stderr,
                    "eventlog-socket: %s: no heap profile in the stream (%s): run the program "
                    "with +RTS -hT (or another -h mode)\n",
                    name, r->why);
            if (status == 0)
                status = 1;
        }
    }
    return status;
}

/* Write the comparison; the exit status. */
static int output(const struct compare *cmp, const char *csv) {
    int status = check_runs(cmp);
    if (status != 0)
        return status;
    size_t n = 0;
    struct row *rows = join(cmp, &n);
    if (rows == NULL) {
        fprintf(stderr, "eventlog-socket compare: out of memory\n");
        return 2;
    }
    FILE *f = csv == NULL || strcmp(csv, "-") == 0 ? stdout : fopen(csv, "w");
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
    for (int i = 0; i < 2; i++) {
        const struct run *r = &cmp->run[i];
        if (r->status != 0) {
            fprintf(stderr, "eventlog-socket: %s: %s: the comparison has its censuses so far\n",
                    r->ses.conn->name, r->why);
            status = 1;
        }
    }
    if (csv)
        fprintf(stderr, "eventlog-socket compare: %zu labels to %s\n", n,
                strcmp(csv, "-") == 0 ? "stdout" : csv);
    return status;
}

int es_compare_main(int argc, char **argv) {
    static struct compare compare;
    struct compare *cmp = &compare;
    the_compare = cmp;
    const char *src[2] = {NULL, NULL}, *csv = NULL;
    for (int i = 0; i < 2; i++) {
        es_session_init(&cmp->run[i].ses);
        cmp->run[i].ses.opt.allow_file = true;
    }
    const struct es_opt opts[] = {
        {"--csv", NULL, ES_OPT_VALUE, &csv, 0, "%s needs a file name (or - for stdout)", NULL},
        {0}};
    const struct es_opts_spec spec = {.cmd = "compare",
                                      .opts = opts,
                                      .conn = &cmp->run[0].ses.opt,
                                      .usage = compare_usage,
                                      .pos = src,
                                      .npos = 2,
                                      .too_many = "two runs only (then %s)"};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    if (src[0] == NULL || src[1] == NULL) {
        compare_usage(stderr);
        return 2;
    }
    cmp->run[1].ses.opt = cmp->run[0].ses.opt;
    for (int i = 0; i < 2 && status < 0; i++) {
        struct run *r = &cmp->run[i];
        r->model = malloc(sizeof *r->model);
        if (r->model == NULL) {
            fprintf(stderr, "eventlog-socket compare: out of memory\n");
            status = 2;
            break;
        }
        es_model_init(r->model);
        struct es_conn_callbacks cb = {
            .on_header = on_header, .on_event = on_event, .on_end = on_end, .ctx = r};
        if (es_session_open(&r->ses, src[i], &cb) != 0) {
            fprintf(stderr, "eventlog-socket: %s: %s\n", r->ses.conn->name, r->ses.conn->error);
            status = 2;
        }
    }
    if (status < 0) {
        es_session_signals(&cmp->run[0].ses, true, on_signal, cmp);
        uv_run(cmp->run[0].ses.loop, UV_RUN_DEFAULT);
    }
    /* Both sessions share the default loop: the second is closed, the
     * first finishes the loop. */
    es_session_close(&cmp->run[1].ses);
    es_session_finish(&cmp->run[0].ses);
    if (status < 0)
        status = output(cmp, csv);
    for (int i = 0; i < 2; i++) {
        struct run *r = &cmp->run[i];
        if (r->model) {
            es_model_destroy(r->model);
            free(r->model);
        }
        free(r->peak);
        free(r->sum);
        free(r->seen);
    }
    return status;
}
