/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: arbitrary bytes as the stream `heap` and `top` read,
 * through the library's stream reader into the client's model of the
 * program (client/model/core.c and its families), then every query `top` makes. Whatever the
 * events say, the model keeps its invariants: figures within their bounds,
 * shares between 0 and 1, censuses whose totals are their entries' sum,
 * with one line per label, labels of at most ES_MODEL_LABEL_MAX bytes,
 * bounded tables, text without control characters; and it comes out the
 * same when the reader skims the events it does not read one by one.
 *
 * Input: the stream's bytes, fed in pieces whose sizes follow from the
 * input's length. Build and run with `make fuzz`; `make check` replays the
 * starting inputs. */
#include "format/es_stream.h"
#include "fuzz_check.h"
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

static void on_header(const struct es_header *h, void *ctx) {
    es_model_header(ctx, h);
}

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    es_model_event(ctx, ev);
}

static void on_skip(const struct es_stream_skip *run, void *ctx) {
    es_model_skip(ctx, run);
}

/* The same bytes with the reader skimming what the model does not read
 * one by one (es_stream_skim): the model must come out the same. */
static void check_skim(const struct es_model *m, const uint8_t *data, size_t size) {
    static struct es_model *k;
    if (k == NULL)
        k = malloc(sizeof *k);
    CHECK(k != NULL);
    es_model_init(k);
    struct es_stream s;
    struct es_stream_callbacks cb = {.on_header = on_header, .on_event = on_event, .ctx = k};
    es_stream_init(&s);
    es_stream_skim(&s, k->want, k->window, on_skip);
    size_t pos = 0, step = size % 251 + 1;
    while (pos < size) {
        size_t n = step < size - pos ? step : size - pos;
        if (es_stream_feed(&s, data + pos, n, &cb) != 0)
            break;
        pos += n;
        step = step * 5 % 4093 + 1;
    }
    if (es_stream_finish(&s) == 0)
        es_model_end(k);
    es_stream_destroy(&s);
    CHECK(k->events == m->events && k->now == m->now && k->first_time == m->first_time);
    CHECK(k->block_cap == m->block_cap && k->block_left == m->block_left);
    CHECK(k->gcs == m->gcs && k->gc_ns == m->gc_ns && k->heap_size == m->heap_size &&
          k->allocated == m->allocated && k->censuses == m->censuses && k->ncaps == m->ncaps &&
          es_model_threads(k) == es_model_threads(m) && k->notes_n == m->notes_n &&
          k->snap_n == m->snap_n && k->h.n == m->h.n && k->ended == m->ended);
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++)
        CHECK(k->caps[c].busy_ns == m->caps[c].busy_ns &&
              k->caps[c].allocated == m->caps[c].allocated);
    es_model_destroy(k);
}

static void check_text(const char *s, size_t size) {
    CHECK(memchr(s, 0, size) != NULL);
    for (; *s; s++)
        CHECK((unsigned char)*s >= 0x20 && *s != 0x7f);
}

static void check_census(const struct es_model *m, const struct es_model_census *c) {
    uint64_t sum = 0;
    bool *seen = calloc(m->nlabels ? m->nlabels : 1, sizeof *seen);
    CHECK(seen != NULL);
    for (size_t i = 0; i < c->n; i++) {
        uint32_t l = c->e[i].label;
        CHECK(l < m->nlabels && !seen[l]);
        seen[l] = true;
        const char *text = es_model_label(m, l);
        CHECK(strlen(text) <= ES_MODEL_LABEL_MAX);
        check_text(text, strlen(text) + 1);
        sum += c->e[i].bytes;
    }
    free(seen);
    CHECK(sum == c->total);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct es_model *m;
    if (m == NULL)
        m = malloc(sizeof *m);
    CHECK(m != NULL);
    es_model_init(m);
    struct es_stream s;
    struct es_stream_callbacks cb = {.on_header = on_header, .on_event = on_event, .ctx = m};
    es_stream_init(&s);
    size_t pos = 0, step = size % 251 + 1;
    while (pos < size) {
        size_t n = step < size - pos ? step : size - pos;
        /* A copy of exactly the piece, so a read past it is caught. */
        uint8_t *piece = malloc(n);
        memcpy(piece, data + pos, n);
        int r = es_stream_feed(&s, piece, n, &cb);
        free(piece);
        if (r != 0)
            break;
        pos += n;
        step = step * 5 % 4093 + 1;
    }
    if (es_stream_finish(&s) == 0)
        es_model_end(m);
    es_stream_destroy(&s);
    check_skim(m, data, size);

    CHECK(m->minor_gcs + m->major_gcs == m->gcs);
    CHECK(m->ncaps <= ES_MODEL_MAX_CAPS && m->nlabels <= ES_MODEL_MAX_LABELS);
    CHECK(m->thr.kept <= ES_MODEL_THREADS_KEPT && es_model_threads(m) <= es_model_threads_known(m));
    CHECK(m->s_size.n <= ES_MODEL_SERIES && m->s_live.n <= ES_MODEL_SERIES &&
          m->s_alloc.n <= ES_MODEL_SERIES);
    CHECK(m->now >= m->first_time);
    check_census(m, &m->cur);
    check_census(m, &m->prev);
    check_text(m->program, sizeof m->program);
    check_text(m->args, sizeof m->args);
    check_text(m->rts_id, sizeof m->rts_id);
    check_text(m->ghc_version, sizeof m->ghc_version);
    for (unsigned i = 0; i < ES_MODEL_NOTES; i++)
        check_text(m->notes[i].text, sizeof m->notes[i].text);
    for (uint64_t w = 0; w <= 60000000000ull; w += 60000000000ull) {
        uint64_t p50 = es_model_pause_pct(m, 0.5, w), p99 = es_model_pause_pct(m, 0.99, w);
        CHECK(p50 <= p99 && p99 <= m->pause_max && es_model_pause_max(m, w) <= m->pause_max);
        double g = es_model_gc_share(m, w);
        CHECK(g >= 0 && g <= 1);
        for (unsigned c = 0; c < m->ncaps + 1 && c < ES_MODEL_MAX_CAPS; c++) {
            double share = es_model_cap_share(m, c, w);
            CHECK(share >= 0 && share <= 1);
        }
    }
    size_t idx[16];
    size_t k = es_model_top_entries(m, idx, 16);
    for (size_t i = 0; i + 1 < k; i++)
        CHECK(m->cur.e[idx[i]].bytes >= m->cur.e[idx[i + 1]].bytes);
    es_model_destroy(m);
    return 0;
}
