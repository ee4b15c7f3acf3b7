/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket heap ADDR|FILE (--hp OUT.hp | --csv OUT.csv)`: the heap
 * profile out of an eventlog, live or recorded: the censuses
 * (HEAP_PROF_SAMPLE_*) in the RTS's classic .hp format, which hp2ps and
 * hp2pretty read, and/or as CSV rows (time, label, bytes). Each census is
 * written and flushed as soon as it is complete, and the .hp file is ended
 * properly however the run stops (end of stream, Ctrl-C), so it is usable
 * at any moment. This file reads the stream and decides when to write and
 * stop; heap_write.c writes the two formats. Runs on one thread, the libuv
 * loop's. */
#include "heap_write.h"
#include "model/model.h"
#include "opts.h"
#include "source/heapmode.h"
#include "source/session.h"
#include "subcommands.h"
#include "source/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct heap {
    struct es_session ses;
    struct es_model *model;
    const char *hp_path, *csv_path;
    FILE *hp, *csv;
    bool hp_started;
    uint64_t written; /* censuses written */
    uint64_t last_time;
    bool stopped;
    bool mode_told; /* the note on a mode the eventlog cannot carry is out */
    int status;
    struct es_heapmode hm; /* whether a heap profile can come at all */
    bool told_ghc90;
    bool opened; /* open_outputs ran */
};

static FILE *open_out(const char *path);

/* The output files are created with the first census (or at the end of a
 * stream that has a heap profile), so a stream without one leaves none.
 * False after saying why one cannot be created. */
static bool open_outputs(struct heap *h) {
    if (h->opened)
        return h->hp != NULL || h->csv != NULL;
    h->opened = true;
    if ((h->hp_path && (h->hp = open_out(h->hp_path)) == NULL) ||
        (h->csv_path && (h->csv = open_out(h->csv_path)) == NULL))
        return false;
    if (h->csv)
        es_heapwrite_csv_begin(h->csv);
    return true;
}

static void stop(struct heap *h, int status, const char *why);

/* Once, at the end, when a retainer or biographical profile gave no
 * sample (es_model_breakdown_lack). */
static void tell_mode(struct heap *h) {
    const struct es_model *m = h->model;
    const char *lack = es_model_breakdown_lack(m->breakdown, m->nlabels > 0);
    if (h->mode_told || !m->heap_prof || lack == NULL)
        return;
    h->mode_told = true;
    fprintf(stderr, "eventlog-socket: %s: %s\n", h->ses.conn->name, lack);
}

static void hp_start(struct heap *h) {
    if (h->hp == NULL || h->hp_started)
        return;
    es_heapwrite_hp_begin(h->hp, h->model);
    h->hp_started = true;
}

static void write_census(struct heap *h) {
    if (!open_outputs(h)) {
        stop(h, 2, "cannot create the output file");
        return;
    }
    const struct es_model *m = h->model;
    const struct es_model_census *c = &m->cur;
    if (h->hp) {
        hp_start(h);
        es_heapwrite_hp_sample(h->hp, m, c);
    }
    if (h->csv)
        es_heapwrite_csv_sample(h->csv, m, c);
    if (c->time > h->last_time)
        h->last_time = c->time;
    h->written++;
}

/* The stream had no heap profile: say why, and what to do, in words that
 * fit the source (a file or a program) and the way it ended. */
static void no_profile(struct heap *h, const char *why) {
    const struct es_conn *c = h->ses.conn;
    const char *where = c->is_file ? "this eventlog" : "the stream";
    if (h->model->no_flush && !h->model->ended && es_heapmode_verdict(&h->hm) != ES_HEAPMODE_OFF)
        /* GHC 9.0 sends its samples (and HEAP_PROF_BEGIN) at exit. */
        fprintf(stderr,
                "eventlog-socket: %s: no heap profile in %s (%s): %s, and %s before the "
                "program's exit; nothing written\n",
                c->name, where, why, ES_MODEL_GHC90_NOTE,
                c->is_file ? "this recording ends" : "the stream stopped");
    else
        fprintf(stderr,
                "eventlog-socket: %s: no heap profile in %s (%s): run the program with "
                "+RTS -hT (or another -h mode); nothing written\n",
                c->name, where, why);
    if (h->status == 0)
        h->status = 1;
}

static void stop(struct heap *h, int status, const char *why) {
    if (h->stopped)
        return;
    h->stopped = true;
    h->status = status;
    es_session_close(&h->ses);
    const struct es_conn *c = h->ses.conn;
    /* A source that never gave a whole header (not an eventlog, a server
     * that is not ours): the reason is the whole story. */
    bool have_header = c->stream.header.len > 0;
    if (!have_header || (status == 2 && h->written == 0)) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, why);
        return;
    }
    tell_mode(h);
    const struct es_model *m = h->model;
    bool profile = m->heap_prof || h->written > 0 || es_heapmode_verdict(&h->hm) == ES_HEAPMODE_ON;
    if (!profile) {
        /* Nothing written, no file created. */
        no_profile(h, why);
        return;
    }
    if (status != 2 && !open_outputs(h) && h->status != 2)
        h->status = 2;
    /* The .hp file ends like the RTS ends it: an empty sample at the end. */
    if (h->hp) {
        hp_start(h);
        es_heapwrite_hp_end(h->hp, h->model->now > h->last_time ? h->model->now : h->last_time);
    }
    int werr = 0;
    FILE *files[2] = {h->hp, h->csv};
    for (int i = 0; i < 2; i++)
        if (files[i] && (fflush(files[i]) != 0 || ferror(files[i])) && werr == 0)
            werr = errno ? errno : EIO;
    if (h->hp && h->hp != stdout && fclose(h->hp) != 0 && werr == 0)
        werr = errno;
    if (h->csv && h->csv != stdout && fclose(h->csv) != 0 && werr == 0)
        werr = errno;
    h->hp = h->csv = NULL;
    if (werr) {
        fprintf(stderr, "eventlog-socket: %s: cannot write the heap profile: %s\n", c->name,
                strerror(werr));
        h->status = 2;
        return;
    }
    char to[1100];
    snprintf(to, sizeof to, "%s%s%s", h->hp_path ? h->hp_path : "",
             h->hp_path && h->csv_path ? " and " : "", h->csv_path ? h->csv_path : "");
    fprintf(stderr, "eventlog-socket: %s: %llu heap samples to %s: %s\n", c->name,
            (unsigned long long)h->written, to, why);
}

static void on_header(struct es_conn *c, void *ctx) {
    struct heap *h = ctx;
    es_model_header(h->model, &c->stream.header);
    es_heapmode_header(&h->hm, &c->stream.header, c->is_file ? 0 : c->peer_pid);
}

/* Live: stop as soon as the stream (or on GHC 9.0 the server's process)
 * says no heap profile can come; on 9.0 say when it will. */
static void judge_live(struct heap *h) {
    const struct es_conn *c = h->ses.conn;
    if (c->is_file || h->stopped)
        return;
    enum es_heapmode_verdict v = es_heapmode_verdict(&h->hm);
    if (v == ES_HEAPMODE_OFF && h->written == 0 && !h->model->heap_prof) {
        stop(h, 1, "the program runs without a heap profiling mode");
        return;
    }
    if (h->hm.no_flush && !h->told_ghc90) {
        h->told_ghc90 = true;
        fprintf(stderr,
                "eventlog-socket: %s: %s: the heap profile is written when the program "
                "exits\n",
                c->name, ES_MODEL_GHC90_NOTE);
    }
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    struct heap *h = ctx;
    uint64_t before = h->model->censuses;
    es_model_event(h->model, ev);
    es_heapmode_event(&h->hm, ev);
    if (h->model->censuses != before)
        write_census(h);
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    (void)c;
    (void)data;
    (void)n;
    judge_live(ctx);
}

static void on_skip(struct es_conn *c, const struct es_stream_skip *run, void *ctx) {
    (void)c;
    es_model_skip(((struct heap *)ctx)->model, run);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct heap *h = ctx;
    char why[1000];
    if (how == ES_CONN_COMPLETE)
        es_model_end(h->model);
    const char *cut = how == ES_CONN_COMPLETE && h->model->cut ? h->model->cut_why : NULL;
    int status = es_conn_end_words(c, how, cut, why, sizeof why);
    stop(h, status, why);
}

static void on_signal(void *ctx, int signum, const char *why) {
    (void)signum;
    stop(ctx, 1, why);
}

static FILE *open_out(const char *path) {
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = es_outfile_fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "eventlog-socket heap: cannot create %s: %s\n", path, strerror(errno));
    return f;
}

int es_heap_main(int argc, char **argv) {
    static struct heap heap;
    struct heap *h = &heap;
    es_session_init(&h->ses);
    h->ses.opt.allow_file = true;
    const char *src = NULL;
    const struct es_opt opts[] = {
        {"--hp", NULL, ES_OPT_VALUE, &h->hp_path, 0, "%s needs a file name", NULL, true},
        {"--csv", NULL, ES_OPT_VALUE, &h->csv_path, 0, "%s needs a file name", NULL, true},
        {0}};
    const struct es_opts_spec spec = {.cmd = "heap",
                                      .opts = opts,
                                      .conn = &h->ses.opt,
                                      .pos = &src,
                                      .npos = 1,
                                      .required = 1,
                                      .pos_names = (const char *[]){"ADDR|FILE"},
                                      .too_many = "one source only (%s, then %s)",
                                      .pos_first = true};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    if (h->hp_path && h->csv_path && strcmp(h->hp_path, "-") == 0 &&
        strcmp(h->csv_path, "-") == 0) {
        fprintf(stderr, "eventlog-socket heap: --hp and --csv cannot both be stdout\n");
        return 2;
    }
    h->model = malloc(sizeof *h->model);
    if (h->model == NULL) {
        fprintf(stderr, "eventlog-socket heap: out of memory\n");
        return 2;
    }
    es_model_init(h->model);
    /* Checked up front; the files are created only once there is a heap
     * profile to write. */
    if ((h->hp_path && !es_outfile_check("heap", NULL, h->hp_path)) ||
        (h->csv_path && !es_outfile_check("heap", NULL, h->csv_path)))
        return 2;

    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_bytes = on_bytes,
                                   .on_end = on_end,
                                   .ctx = h,
                                   .want = h->model->want,
                                   .window = h->model->window,
                                   .on_skip = on_skip};
    if (es_session_start(&h->ses, NULL, src, &cb, true, on_signal) != 0)
        return 2;
    es_session_run(&h->ses);
    es_model_destroy(h->model);
    free(h->model);
    return h->status;
}
