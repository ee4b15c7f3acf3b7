/* SPDX-License-Identifier: BSD-3-Clause */
/* Two runs read side by side and joined label by label, and cost centre by
 * cost centre (client/tables/join.h). Runs on one thread, the loop's. */
#include "join.h"

#include <assert.h>
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
    es_prof_event(r->prof, ev);
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

/* The signal alone: `why` tells run 0's gaps, which are not run 1's. */
static void on_signal(void *ctx, int signum, const char *why) {
    struct es_join *cmp = ctx;
    (void)why;
    for (int i = 0; i < 2; i++)
        if (!cmp->run[i].ended) {
            cmp->run[i].ended = true;
            cmp->run[i].status = 1;
            snprintf(cmp->run[i].why, sizeof cmp->run[i].why, "%s", es_conn_signal_name(signum));
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

/* A read error or memory run out in either run: 2 after a message, or 0. */
static int read_errors(const struct es_join *cmp) {
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
        } else if (r->oom || r->model->oom || r->prof->oom) {
            fprintf(stderr, "eventlog-socket %s: %s: out of memory\n", cmp->cmd, name);
            status = 2;
        }
    }
    return status;
}

/* Whether run `r` has a heap profile to compare (an empty one counts);
 * with `say`, why not, on stderr. */
static bool heap_ok(const struct es_join_run *r, bool say) {
    const struct es_model *m = r->model;
    const char *name = r->ses.conn->name;
    if (m->censuses > 0)
        return true;
    if (m->no_flush && !m->ended) {
        /* GHC 9.0 sends its heap samples at exit: -hT may well be on. */
        if (say)
            fprintf(stderr,
                    "eventlog-socket: %s: no heap profile in the stream (%s): %s, and the "
                    "stream ends before the program's exit\n",
                    name, r->why, ES_MODEL_GHC90_NOTE);
        return false;
    }
    if (m->heap_prof) {
        /* Profiling was on, the run ended before its first census: an
         * empty profile, compared as one. */
        if (say)
            fprintf(stderr,
                    "eventlog-socket: %s: heap profiling started (by %s, a census every %.3g s) "
                    "but no census reached the stream (%s) in its %.3g s: compared as an empty "
                    "profile\n",
                    name, es_model_breakdown_name(m->breakdown), (double)m->heap_interval_ns / 1e9,
                    r->why, (double)m->now / 1e9);
        return true;
    }
    if (say)
        fprintf(stderr,
                "eventlog-socket: %s: no heap profile in the stream (%s): run the program "
                "with +RTS -hT (or another -h mode)\n",
                name, r->why);
    return false;
}

/* How many spans run `r` ended. */
static uint64_t spans_of(const struct es_join_run *r) {
    const struct es_spans *x = r->model->spans.match;
    return x != NULL ? x->spans : 0;
}

int es_join_check(struct es_join *cmp, enum es_join_want want) {
    int status = read_errors(cmp);
    if (status != 0)
        return status;
    cmp->have_time = cmp->run[0].prof->samples > 0 && cmp->run[1].prof->samples > 0;
    cmp->have_heap = heap_ok(&cmp->run[0], false) && heap_ok(&cmp->run[1], false);
    cmp->have_spans = spans_of(&cmp->run[0]) > 0 && spans_of(&cmp->run[1]) > 0;
    if (want == ES_JOIN_SPANS && !cmp->have_spans) {
        for (int i = 0; i < 2; i++)
            if (spans_of(&cmp->run[i]) == 0)
                fprintf(stderr,
                        "eventlog-socket: %s: no spans in the stream (%s): mark them with "
                        "withSpan (GHC.Eventlog.Socket) or traceEventIO \"START label\" ... "
                        "\"STOP label\" in one thread (docs/spans.md)\n",
                        cmp->run[i].ses.conn->name, cmp->run[i].why);
        return 1;
    }
    if (want == ES_JOIN_SPANS)
        return 0;
    if (want == ES_JOIN_TIME && !cmp->have_time) {
        for (int i = 0; i < 2; i++)
            if (cmp->run[i].prof->samples == 0)
                fprintf(stderr,
                        "eventlog-socket: %s: no cost-centre samples in the stream (%s): build "
                        "the program with -prof and run it with +RTS -p (or start profiling "
                        "with eventlog-socket profile ADDR)\n",
                        cmp->run[i].ses.conn->name, cmp->run[i].why);
        return 1;
    }
    /* The heap's messages: asked for the heap, or for either and neither
     * is there (an empty profile's note is said in any case). */
    bool other = cmp->have_time || cmp->have_spans;
    bool heap_wanted = want == ES_JOIN_HEAP || (want == ES_JOIN_EITHER && !other);
    for (int i = 0; i < 2 && (heap_wanted || cmp->have_heap); i++)
        if (!heap_ok(&cmp->run[i], true))
            status = 1;
    if (status != 0 && want == ES_JOIN_HEAP && cmp->have_time)
        fprintf(stderr,
                "eventlog-socket %s: both runs have cost-centre samples: --time compares "
                "their time profiles\n",
                cmp->cmd);
    if (want == ES_JOIN_EITHER && !cmp->have_heap && other) {
        /* Time profiles or spans alone; one run with a heap profile and
         * one without is told (the other was likely meant to have one). */
        bool h0 = heap_ok(&cmp->run[0], false), h1 = heap_ok(&cmp->run[1], false);
        for (int i = 0; i < 2 && h0 != h1; i++)
            heap_ok(&cmp->run[i], true);
        status = 0;
    }
    return status;
}

/* ---- The time profiles, cost centre by cost centre. */

/* Each cost centre's self and total samples in `p`, by id, in *slots
 * counters (MAIN's, the empty stack's, the last). False when memory ran
 * out. */
static bool cost_counts(const struct es_prof *p, uint64_t **self, uint64_t **total, size_t *slots) {
    size_t n = (size_t)p->ncc + 1;
    for (size_t i = 0; i < p->nframes; i++)
        if (p->frames[i] >= n - 1)
            n = (size_t)p->frames[i] + 2;
    *slots = n;
    *self = calloc(n, sizeof **self);
    *total = calloc(n, sizeof **total);
    if (*self == NULL || *total == NULL)
        return false;
    size_t main_slot = n - 1;
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint64_t c = p->stacks[s].samples;
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, s, &depth);
        if (c == 0)
            continue;
        (*self)[depth ? ids[depth - 1] : main_slot] += c;
        (*total)[main_slot] += c; /* MAIN is under every stack */
        for (uint32_t i = 0; i < depth; i++) {
            bool again = false; /* a recursive frame counts once */
            for (uint32_t k = 0; k < i && !again; k++)
                again = ids[k] == ids[i];
            if (!again)
                (*total)[ids[i]] += c;
        }
    }
    return true;
}

static int cost_by_name(const void *a, const void *b) {
    return strcmp(((const struct es_join_cost *)a)->name, ((const struct es_join_cost *)b)->name);
}

static const struct es_join *sort_cmp; /* es_join_costs' sort: one thread */

static double self_change(const struct es_join_cost *c) {
    double d = es_join_share(sort_cmp, c->self[1], 1) - es_join_share(sort_cmp, c->self[0], 0);
    return d < 0 ? -d : d;
}

static int cost_by_change(const void *pa, const void *pb) {
    const struct es_join_cost *a = pa, *b = pb;
    double da = self_change(a), db = self_change(b);
    if (da != db)
        return da < db ? 1 : -1;
    return strcmp(a->name, b->name);
}

const char *es_join_cost_note(const struct es_join_cost *c) {
    return c->total[0] && c->total[1] ? "" : c->total[0] ? "only in A" : "only in B";
}

void es_join_cost_pcts(const struct es_join *cmp, const struct es_join_cost *c, double pct[4]) {
    for (int i = 0; i < 2; i++) {
        pct[i] = 100 * es_join_share(cmp, c->self[i], i);
        pct[2 + i] = 100 * es_join_share(cmp, c->total[i], i);
    }
}

double es_join_share(const struct es_join *cmp, uint64_t samples, int i) {
    uint64_t all = cmp->run[i].prof->samples;
    return all ? (double)samples / (double)all : 0;
}

/* Run `i`'s cost centres into the rows (`*n` so far, the first `na` of
 * them run A's, sorted by name). False when memory ran out. */
static bool add_costs(const struct es_join *cmp, int i, struct es_join_cost *rows, size_t *n,
                      size_t na) {
    const struct es_prof *p = cmp->run[i].prof;
    uint64_t *self, *total;
    size_t slots;
    bool ok = cost_counts(p, &self, &total, &slots);
    char buf[600];
    for (size_t id = 0; ok && id < slots; id++) {
        if (total[id] == 0 && self[id] == 0)
            continue;
        const char *name =
            id == slots - 1 ? "MAIN" : es_prof_name(p, (uint32_t)id, buf, sizeof buf);
        struct es_join_cost key = {.name = (char *)name};
        struct es_join_cost *to =
            i == 0 ? NULL : bsearch(&key, rows, na, sizeof *rows, cost_by_name);
        if (to == NULL) {
            to = &rows[(*n)++];
            to->name = strdup(name);
            ok = to->name != NULL;
        }
        to->self[i] += self[id];
        to->total[i] += total[id];
    }
    free(self);
    free(total);
    return ok;
}

struct es_join_cost *es_join_costs(const struct es_join *cmp, size_t *ncosts) {
    size_t cap = 2;
    for (int i = 0; i < 2; i++)
        cap += (size_t)cmp->run[i].prof->ncc + cmp->run[i].prof->nframes + 1;
    struct es_join_cost *rows = calloc(cap, sizeof *rows);
    if (rows == NULL)
        return NULL;
    size_t n = 0;
    bool ok = add_costs(cmp, 0, rows, &n, 0);
    /* Run A's names once each (one name may stand for two ids only in a
     * hostile stream: their counts are summed). */
    qsort(rows, n, sizeof *rows, cost_by_name);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (kept > 0 && strcmp(rows[kept - 1].name, rows[i].name) == 0) {
            rows[kept - 1].self[0] += rows[i].self[0];
            rows[kept - 1].total[0] += rows[i].total[0];
            free(rows[i].name);
            continue;
        }
        rows[kept++] = rows[i];
    }
    n = kept;
    ok = ok && add_costs(cmp, 1, rows, &n, kept);
    if (!ok) {
        es_join_costs_free(rows, n);
        return NULL;
    }
    sort_cmp = cmp;
    qsort(rows, n, sizeof *rows, cost_by_change);
    *ncosts = n;
    return rows;
}

void es_join_costs_free(struct es_join_cost *costs, size_t n) {
    for (size_t i = 0; costs && i < n; i++)
        free(costs[i].name);
    free(costs);
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
        r->prof = malloc(sizeof *r->prof);
        if (r->model == NULL || r->prof == NULL) {
            free(r->model);
            free(r->prof);
            r->model = NULL;
            r->prof = NULL;
            fprintf(stderr, "eventlog-socket %s: out of memory\n", cmp->cmd);
            status = 2;
            break;
        }
        es_model_init(r->model);
        es_prof_init(r->prof);
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
        if (r->prof) {
            es_prof_destroy(r->prof);
            free(r->prof);
            r->prof = NULL;
        }
        free(r->peak);
        free(r->sum);
        free(r->seen);
        r->peak = r->sum = NULL;
        r->seen = NULL;
    }
}

/* ---- The spans, label by label. */

static const struct es_model_span_label *find_span(const struct es_model *m, const char *label) {
    const struct es_model_span_label *l;
    for (size_t i = 0; (l = es_model_span_label_at(m, i)) != NULL; i++)
        if (strcmp(l->label, label) == 0)
            return l;
    return NULL;
}

void es_join_span_times(const struct es_join_span *s, double t[6]) {
    for (int k = 0; k < 2; k++) {
        const struct es_model_span_label *l = s->in[k];
        t[k] = l ? es_model_span_quantile(l, 0.5) : -1;
        t[2 + k] = l ? es_model_span_quantile(l, 0.99) : -1;
        t[4 + k] = l ? (double)l->max_ns / 1e9 : -1;
    }
}

/* The change of a label's p99 from A to B, in seconds; -1 for a label of
 * one run (sorted last). */
static double p99_change(const struct es_join_span *s) {
    if (s->in[0] == NULL || s->in[1] == NULL)
        return -1;
    double d = es_model_span_quantile(s->in[1], 0.99) - es_model_span_quantile(s->in[0], 0.99);
    return d < 0 ? -d : d;
}

static int by_change(const void *a, const void *b) {
    double x = p99_change(a), y = p99_change(b);
    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(((const struct es_join_span *)a)->label, ((const struct es_join_span *)b)->label);
}

struct es_join_span *es_join_spans(const struct es_join *cmp, size_t *n) {
    const struct es_model *m[2] = {cmp->run[0].model, cmp->run[1].model};
    size_t cap = 0;
    for (int i = 0; i < 2; i++)
        cap += m[i]->spans.labels != NULL ? m[i]->spans.n + 1 : 0;
    *n = 0;
    struct es_join_span *out = cap ? calloc(cap, sizeof *out) : NULL;
    if (out == NULL)
        return NULL;
    const struct es_model_span_label *l;
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; (l = es_model_span_label_at(m[i], k)) != NULL; k++) {
            if (i == 1 && find_span(m[0], l->label) != NULL)
                continue;
            out[*n].label = l->label;
            out[*n].in[i] = l;
            out[*n].in[1 - i] = find_span(m[1 - i], l->label);
            (*n)++;
        }
    qsort(out, *n, sizeof *out, by_change);
    return out;
}
