/* SPDX-License-Identifier: BSD-3-Clause */
/* Two runs read side by side and joined label by label
 * (client/tables/join.h). Runs on one thread, the loop's. */
#include "join.h"

#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Reading. */

static int run_grow(struct es_join_run *r, size_t need) {
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
static void add_census(struct es_join_run *r) {
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
    struct es_join_run *r = ctx;
    r->header = true;
    es_model_header(r->model, &c->stream.header);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    struct es_join_run *r = ctx;
    uint64_t before = r->model->censuses;
    es_model_event(r->model, ev);
    if (r->model->censuses != before)
        add_census(r);
}

static struct es_join *the_cmp;

static void both_ended(struct es_join *cmp) {
    cmp->stopped = true;
    es_session_close(&cmp->run[0].ses);
    es_session_close(&cmp->run[1].ses);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct es_join_run *r = ctx;
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
    if (r->status == 1)
        es_conn_add_gaps(&c->info, r->why, sizeof r->why);
    /* A run that gives nothing to compare ends the other too. */
    struct es_join *cmp = the_cmp;
    if ((cmp->run[0].ended && cmp->run[1].ended) || r->status == 2)
        both_ended(cmp);
}

static void on_signal(void *ctx, int signum) {
    struct es_join *cmp = ctx;
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
    return strcmp(((const struct es_join_row *)a)->label, ((const struct es_join_row *)b)->label);
}

static uint64_t absdiff_u(uint64_t a, uint64_t b) {
    return a > b ? a - b : b - a;
}

static int by_difference(const void *pa, const void *pb) {
    const struct es_join_row *a = pa, *b = pb;
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
struct es_join_row *es_join_rows(const struct es_join *cmp, size_t *nrows) {
    size_t cap = 0;
    for (int i = 0; i < 2; i++)
        cap += cmp->run[i].model->nlabels;
    struct es_join_row *rows = calloc(cap ? cap : 1, sizeof *rows);
    if (rows == NULL)
        return NULL;
    size_t n = 0, na = 0;
    for (int i = 0; i < 2; i++) {
        const struct es_join_run *r = &cmp->run[i];
        size_t labels = r->model->nlabels < r->n ? r->model->nlabels : r->n;
        double censuses = (double)(r->model->censuses ? r->model->censuses : 1);
        for (size_t l = 0; l < labels; l++) {
            if (!r->seen[l])
                continue;
            struct es_join_row key = {.label = es_model_label(r->model, (uint32_t)l)};
            struct es_join_row *to =
                i == 0 ? NULL : bsearch(&key, rows, na, sizeof *rows, by_label);
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

const char *es_join_note(const struct es_join_row *w) {
    return w->in[0] && w->in[1] ? "" : w->in[0] ? "only in A" : "only in B";
}

/* Why the comparison cannot be made (a message printed), or 0. */
int es_join_check(const struct es_join *cmp) {
    int status = 0;
    for (int i = 0; i < 2; i++) {
        const struct es_join_run *r = &cmp->run[i];
        const char *name = r->ses.conn->name;
        if (!r->ended) {
            /* The other run failed first. */
            continue;
        } else if (r->status == 2 || !r->header) {
            fprintf(stderr, "eventlog-socket: %s: %s\n", name, r->why[0] ? r->why : "no eventlog");
            status = 2;
        } else if (r->oom || r->model->oom) {
            fprintf(stderr, "eventlog-socket %s: %s: out of memory\n", cmp->cmd, name);
            status = 2;
        } else if (r->model->censuses == 0 && r->model->no_flush && !r->model->ended) {
            /* GHC 9.0 sends its heap samples at exit: -hT may well be on. */
            fprintf(stderr,
                    "eventlog-socket: %s: no heap profile in the stream (%s): %s, and the "
                    "stream ends before the program's exit\n",
                    name, r->why, ES_MODEL_GHC90_NOTE);
            if (status == 0)
                status = 1;
        } else if (r->model->censuses == 0 && r->model->heap_prof) {
            /* Profiling was on, the run ended before its first census: an
             * empty profile, compared as one. */
            const struct es_model *m = r->model;
            fprintf(stderr,
                    "eventlog-socket: %s: heap profiling started (by %s, a census every %.3g s) "
                    "but no census reached the stream (%s) in its %.3g s: compared as an empty "
                    "profile\n",
                    name, es_model_breakdown_name(m->breakdown), (double)m->heap_interval_ns / 1e9,
                    r->why, (double)m->now / 1e9);
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
/* ---- The runs. */

void es_join_init(struct es_join *cmp, const char *cmd) {
    memset(cmp, 0, sizeof *cmp);
    cmp->cmd = cmd;
    for (int i = 0; i < 2; i++) {
        es_session_init(&cmp->run[i].ses);
        cmp->run[i].ses.opt.allow_file = true;
    }
}

int es_join_read(struct es_join *cmp, const char *src[2]) {
    assert(src[0] != NULL && src[1] != NULL);
    the_cmp = cmp;
    cmp->run[1].ses.opt = cmp->run[0].ses.opt;
    int status = -1;
    for (int i = 0; i < 2 && status < 0; i++) {
        struct es_join_run *r = &cmp->run[i];
        r->model = malloc(sizeof *r->model);
        if (r->model == NULL) {
            fprintf(stderr, "eventlog-socket %s: out of memory\n", cmp->cmd);
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
    return status;
}

int es_join_warn_partial(const struct es_join *cmp, const char *what) {
    int status = 0;
    for (int i = 0; i < 2; i++) {
        const struct es_join_run *r = &cmp->run[i];
        if (r->status != 0) {
            fprintf(stderr, "eventlog-socket: %s: %s: %s has its censuses so far\n",
                    r->ses.conn->name, r->why, what);
            status = 1;
        }
    }
    return status;
}

void es_join_say_gaps(const struct es_join *cmp) {
    for (int i = 0; i < 2; i++) {
        const struct es_join_run *r = &cmp->run[i];
        const struct es_conn_info *in = &r->ses.conn->info;
        if (r->status != 0 || in->drop_notices == 0)
            continue;
        char words[400];
        es_conn_complete_words(in, words, sizeof words);
        fprintf(stderr, "eventlog-socket: %s: %s\n", r->ses.conn->name, words);
    }
}

void es_join_free(struct es_join *cmp) {
    for (int i = 0; i < 2; i++) {
        struct es_join_run *r = &cmp->run[i];
        if (r->model) {
            es_model_destroy(r->model);
            free(r->model);
            r->model = NULL;
        }
        free(r->peak);
        free(r->sum);
        free(r->seen);
        r->peak = r->sum = NULL;
        r->seen = NULL;
    }
}
