/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket table KIND SOURCE --csv OUT|-`: the eventlog as a table
 * that a dataframe reads in one call (pandas.read_csv, polars.read_csv,
 * R's read.csv): a header row, then one row per event of the kind (gc,
 * heap, markers, sparks, threads: client/tables/rows.c), or per label of
 * each heap census (census: from the model, as `heap --csv`). Times are
 * the stream's own, seconds since the program's RTS started, exact to the
 * nanosecond. SOURCE is a recording or a live address; rows are written as
 * the events arrive (flushed after each read from a live program), in the
 * stream's order. Runs on one thread, the libuv loop's. */
#include "model/model.h"
#include "opts.h"
#include "source/session.h"
#include "subcommands.h"
#include "rows.h"

#include "format/es_payload.h"
#include "csv.h"
#include "source/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct table {
    struct es_session ses;
    struct es_rows rows;
    /* Every event of a census; the library's notices alone for the other
     * kinds (a cut notice, the event classes switched off: said at the
     * end). */
    struct es_model *model;
    const char *out_path;
    FILE *out;
    uint16_t block_cap;  /* capability of the current block, ES_GLOBAL_CAP: none */
    uint64_t block_left; /* its bytes not yet read */
    int kind;            /* enum es_rows_kind */
    bool out_failed;     /* the output could not be opened at the header */
    bool stopped;
    int status;
};

static void write_census(struct table *t) {
    const struct es_model *m = t->model;
    const struct es_model_census *c = &m->cur;
    for (size_t i = 0; i < c->n; i++) {
        es_csv_time(t->out, c->time);
        fputc(',', t->out);
        es_csv_str(t->out, es_model_label(m, c->e[i].label));
        fprintf(t->out, ",%llu\n", (unsigned long long)c->e[i].bytes);
        t->rows.rows++;
    }
}

/* Close the output; 0 or the errno of a failed write. */
static int close_out(struct table *t) {
    int werr = 0;
    if (t->out == NULL)
        return 0;
    if ((fflush(t->out) != 0 || ferror(t->out)))
        werr = errno ? errno : EIO;
    if (t->out != stdout && fclose(t->out) != 0 && werr == 0)
        werr = errno;
    t->out = NULL;
    return werr;
}

static void stop(struct table *t, int status, const char *why) {
    if (t->stopped)
        return;
    t->stopped = true;
    t->status = status;
    es_session_close(&t->ses);
    const struct es_conn *c = t->ses.conn;
    if (t->out)
        es_rows_finish(&t->rows);
    int werr = close_out(t);
    if (c->stream.header.len == 0 || t->out_failed) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, why);
        return;
    }
    if (werr) {
        fprintf(stderr, "eventlog-socket: %s: cannot write %s: %s\n", c->name, t->out_path,
                strerror(werr));
        t->status = 2;
        return;
    }
    enum es_rows_kind k = t->rows.kind;
    const char *to = strcmp(t->out_path, "-") == 0 ? "stdout" : t->out_path;
    if (status == 2) {
        fprintf(stderr, "eventlog-socket: %s: %s (the %llu rows before it are in %s)\n", c->name,
                why, (unsigned long long)t->rows.rows, to);
        return;
    }
    fprintf(stderr, "eventlog-socket: %s: %llu rows of %s to %s: %s\n", c->name,
            (unsigned long long)t->rows.rows, es_rows_kind_name(k), to, why);
    if (t->rows.garbled)
        fprintf(stderr, "eventlog-socket: %s: %llu %s events too short to read were left out\n",
                c->name, (unsigned long long)t->rows.garbled, es_rows_kind_name(k));
    char gaps[400];
    if (es_model_classes_words(t->model, gaps, sizeof gaps))
        fprintf(stderr,
                "eventlog-socket: %s: %s (switched while it ran: rows of those classes are "
                "missing there, the program was not idle)\n",
                c->name, gaps);
    if (t->rows.rows == 0 && status == 0)
        fprintf(stderr, "eventlog-socket: hint: no %s events in the stream: %s\n",
                es_rows_kind_name(k), es_rows_hint(k));
    else if (t->rows.rows == 0)
        fprintf(stderr,
                "eventlog-socket: hint: no %s events arrived before the end (a program on GHC "
                "9.0 sends them in 2 MiB steps and at its exit; %s)\n",
                es_rows_kind_name(k), es_rows_hint(k));
}

static void stop(struct table *t, int status, const char *why);

/* The output is created once the source has proved to be an eventlog (it
 * was checked before connecting), so a source that is not one leaves no
 * file behind. */
static void on_header(struct es_conn *c, void *ctx) {
    struct table *t = ctx;
    if (t->model)
        es_model_header(t->model, &c->stream.header);
    t->out = strcmp(t->out_path, "-") == 0 ? stdout : es_outfile_fopen(t->out_path, "w");
    if (t->out == NULL) {
        char why[600];
        snprintf(why, sizeof why, "cannot create %s: %s", t->out_path, strerror(errno));
        t->out_failed = true;
        stop(t, 2, why);
    } else if (es_rows_init(&t->rows, (enum es_rows_kind)t->kind, t->out) != 0) {
        t->out_failed = true;
        stop(t, 2, "out of memory");
    }
}

/* The capability of the block `ev` is in (the model follows blocks the
 * same way, client/model/core.c). */
static int event_cap(struct table *t, const struct es_event *ev) {
    if (ev->type == ES_EVENT_BLOCK_MARKER) {
        /* A marker too short to say is the global buffer's. */
        struct es_block_fields b;
        es_payload_block(ev, &b);
        t->block_cap = b.cap;
        t->block_left = b.size > ev->len ? b.size - ev->len : 0;
        return ES_ROWS_NO_CAP;
    }
    if (t->block_left >= ev->len) {
        t->block_left -= ev->len;
    } else {
        t->block_left = 0;
        t->block_cap = ES_GLOBAL_CAP;
    }
    return t->block_cap == ES_GLOBAL_CAP ? ES_ROWS_NO_CAP : t->block_cap;
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    struct table *t = ctx;
    if (t->out == NULL)
        return;
    int cap = event_cap(t, ev);
    if (t->kind == ES_ROWS_CENSUS) {
        uint64_t before = t->model->censuses;
        es_model_event(t->model, ev);
        if (t->model->censuses != before)
            write_census(t);
        return;
    }
    if (ev->type == ES_EVENT_USER_MSG)
        es_model_event(t->model, ev);
    if (ev->type != ES_EVENT_BLOCK_MARKER)
        es_rows_event(&t->rows, ev, cap);
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    (void)data;
    (void)n;
    struct table *t = ctx;
    /* A live program's rows are readable as they come (tail -f). */
    if (!c->is_file && t->out)
        fflush(t->out);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct table *t = ctx;
    char why[1000];
    if (how == ES_CONN_COMPLETE && t->kind == ES_ROWS_CENSUS)
        es_model_end(t->model);
    /* A recording whose end marker record added after a cut
     * (client/source/blocks.h) says so in its cut notice. */
    const char *cut = how == ES_CONN_COMPLETE && t->model->cut ? t->model->cut_why : NULL;
    int status = es_conn_end_words(c, how, cut, why, sizeof why);
    stop(t, status, why);
}

static void on_signal(void *ctx, int signum, const char *why) {
    (void)signum;
    stop(ctx, 1, why);
}

/* Parse the command line into `t`; -1 to go on, else the exit status. */
static int parse(struct table *t, int argc, char **argv, const char **src, int *kind) {
    const char *pos[2] = {NULL, NULL};
    const struct es_opt opts[] = {{"--csv", NULL, ES_OPT_VALUE, &t->out_path, 0,
                                   "%s needs a file name (or - for stdout)", NULL, true},
                                  {0}};
    const struct es_opts_spec spec = {.cmd = "table",
                                      .opts = opts,
                                      .conn = &t->ses.opt,
                                      .pos = pos,
                                      .npos = 2,
                                      .required = 2,
                                      .pos_names = (const char *[]){"KIND", "ADDR|FILE"},
                                      .too_many = "one kind and one source only (then %s)"};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    *kind = es_rows_kind(pos[0]);
    if (*kind < 0) {
        fprintf(stderr, "eventlog-socket table: no kind %s:", pos[0]);
        for (int k = 0; k < ES_ROWS_KINDS; k++)
            fprintf(stderr, "%s %s",
                    k == 0                  ? ""
                    : k + 1 < ES_ROWS_KINDS ? ","
                                            : " or",
                    es_rows_kind_name((enum es_rows_kind)k));
        fputc('\n', stderr);
        return 2;
    }
    *src = pos[1];
    return -1;
}

int es_table_main(int argc, char **argv) {
    static struct table table;
    struct table *t = &table;
    es_session_init(&t->ses);
    t->ses.opt.allow_file = true;
    t->block_cap = ES_GLOBAL_CAP;
    const char *src = NULL;
    int kind = 0;
    int status = parse(t, argc, argv, &src, &kind);
    if (status >= 0)
        return status;
    t->model = malloc(sizeof *t->model);
    if (t->model == NULL) {
        fprintf(stderr, "eventlog-socket table: out of memory\n");
        return 2;
    }
    es_model_init(t->model);
    t->kind = kind;
    if (!es_outfile_check("table", NULL, t->out_path)) {
        status = 2;
    } else {
        struct es_conn_callbacks cb = {.on_header = on_header,
                                       .on_event = on_event,
                                       .on_bytes = on_bytes,
                                       .on_end = on_end,
                                       .ctx = t};
        status = es_session_start(&t->ses, NULL, src, &cb, true, on_signal);
        if (status == 0) {
            es_session_run(&t->ses);
            status = t->status;
        }
    }
    close_out(t);
    es_rows_destroy(&t->rows);
    es_model_destroy(t->model);
    free(t->model);
    return status;
}
