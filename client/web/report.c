/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket report FILE -o OUT.html`: the page of `serve` rendered
 * once from a recording (or a program, up to its exit) into one
 * self-contained HTML file: the stream read with es_conn into the model,
 * written out with es_webjson, inlined into the page with its scripts
 * (client/web/page.h). With two runs, client/web/report_two.c writes the page.
 * Runs on one thread, the libuv loop's. */
#include "model/model.h"
#include "opts.h"
#include "source/session.h"
#include "subcommands.h"
#include "page.h"
#include "json.h"
#include "flame.h"
#include "source/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report {
    struct es_model *model;
    struct es_webflame flame;
    bool want[ES_MAX_EVENT_TYPES]; /* the model's, and the profile's start */
    struct es_session ses;
    enum es_conn_end how;
    bool header;
};

static void rep_header(struct es_conn *c, void *ctx) {
    struct report *r = ctx;
    r->header = true;
    es_model_header(r->model, &c->stream.header);
}

static void rep_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    struct report *r = ctx;
    es_model_event(r->model, ev);
    es_webflame_event(&r->flame, ev);
}

static void rep_skip(struct es_conn *c, const struct es_stream_skip *run, void *ctx) {
    (void)c;
    es_model_skip(((struct report *)ctx)->model, run);
}

static void rep_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct report *r = ctx;
    (void)c;
    r->how = how;
    if (how == ES_CONN_COMPLETE)
        es_model_end(r->model);
}

/* Read the whole stream into the model. Returns 0, or 2 after a message. */
static int read_all(struct report *r, const char *in) {
    memcpy(r->want, r->model->want, sizeof r->want);
    r->want[ES_EVENT_PROF_BEGIN] = true; /* the flame graph's tick */
    struct es_conn_callbacks cb = {.on_header = rep_header,
                                   .on_event = rep_event,
                                   .on_end = rep_end,
                                   .ctx = r,
                                   .want = r->want,
                                   .window = r->model->window,
                                   .on_skip = rep_skip};
    if (es_session_start(&r->ses, "report", in, &cb, false, NULL) != 0)
        return 2;
    es_session_run(&r->ses);
    if (!r->header) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", r->ses.conn->name, r->ses.conn->error);
        return 2;
    }
    return 0;
}

/* Write the page with the model's state to `out`. Returns 0, or 2 after a
 * message. */
static int write_page(struct report *r, const char *out) {
    const struct es_conn *c = r->ses.conn;
    /* Whole, unless the stream was cut, or ends with the end marker that
     * record added after a cut (its cut notice, client/source/blocks.h). */
    bool whole = r->how == ES_CONN_COMPLETE && !r->model->cut;
    char cut[300];
    snprintf(cut, sizeof cut, "the recording was cut: %s", r->model->cut_why);
    struct es_webjson_status st = {
        .state = whole ? "exited" : "file",
        .source = c->name,
        .error = whole           ? ""
                 : r->model->cut ? cut
                                 : c->error,
        .bytes = c->info.bytes,
        .flame = &r->flame,
    };
    struct es_httpbuf json = {0}, html = {0};
    es_model_extend_to_now(r->model);
    es_webjson_state(&json, r->model, &st, NULL);
    es_webpage_inline(&html, &json);
    int status = 0;
    FILE *f = json.oom || html.oom ? NULL : es_outfile_fopen(out, "wb");
    if (f == NULL || fwrite(html.p, 1, html.len, f) != html.len || fclose(f) != 0) {
        fprintf(stderr, "eventlog-socket report: cannot write %s: %s\n", out,
                json.oom || html.oom ? "out of memory" : strerror(errno));
        status = 2;
    } else {
        /* After drop notices, the same words as record's (es_conn_add_gaps). */
        char said[1000];
        snprintf(said, sizeof said, "%llu censuses, %llu GCs -> %s%s",
                 (unsigned long long)r->model->censuses, (unsigned long long)r->model->gcs, out,
                 whole ? "" : " (the eventlog was cut)");
        es_conn_add_gaps(&c->info, said, sizeof said);
        fprintf(stderr, "eventlog-socket report: %s: %s\n", c->name, said);
    }
    es_httpbuf_free(&json);
    es_httpbuf_free(&html);
    return status;
}

int es_report_main(int argc, char **argv) {
    static struct report rep;
    struct report *r = &rep;
    const char *in[2] = {NULL, NULL}, *out = NULL;
    es_session_init(&r->ses);
    r->ses.opt.allow_file = true;
    const struct es_opt opts[] = {{"-o", NULL, ES_OPT_VALUE, &out, 0, NULL, NULL, true}, {0}};
    const struct es_opts_spec spec = {.cmd = "report",
                                      .opts = opts,
                                      .conn = &r->ses.opt,
                                      .pos = in,
                                      .npos = 2,
                                      .required = 1,
                                      .pos_names = (const char *[]){"FILE|ADDR"},
                                      .too_many = "two runs at most (%s, ..., then %s)",
                                      .pos_first = true};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    /* Checked before any source is read (a live program is read to its
     * exit); the file itself is written at the end. */
    if (!es_outfile_check("report", NULL, out))
        return 2;
    if (in[1] != NULL)
        return es_report_two(in, out, &r->ses.opt);
    r->how = ES_CONN_FAILED;
    r->model = malloc(sizeof *r->model);
    if (r->model == NULL) {
        fprintf(stderr, "eventlog-socket report: out of memory\n");
        return 2;
    }
    es_model_init(r->model);
    es_webflame_init(&r->flame);
    status = read_all(r, in[0]);
    if (status == 0)
        status = write_page(r, out);
    es_webflame_destroy(&r->flame);
    es_model_destroy(r->model);
    free(r->model);
    return status;
}
