/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's model of a program (client/model/core.c and its families), fed by the library's
 * stream reader: on the recorded fixtures it finds the program, GHC
 * version, threads, GCs and markers that ghc-events found (the .expect
 * files); cut streams never crash it; skimming the events it does not
 * handle leaves it exactly as reading them all. (test_model_census has
 * the hand-made events.) Argument: the fixture directory. */
#include "format/es_stream.h"
#include "model/model.h"
#include "../unit.h"

#include <stdlib.h>
#include <string.h>

static long expect_or_zero(const char *expect, const char *key) {
    long v = unit_expect(expect, key);
    return v < 0 ? 0 : v;
}

static void on_header(const struct es_header *h, void *ctx) {
    es_model_header(ctx, h);
}

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    es_model_event(ctx, ev);
}

/* Feed `len` bytes in pieces of `piece`; returns the reader's state. */
static int feed(struct es_model *m, const uint8_t *buf, size_t len, size_t piece) {
    struct es_stream s;
    struct es_stream_callbacks cb = {.on_header = on_header, .on_event = on_event, .ctx = m};
    es_stream_init(&s);
    for (size_t pos = 0; pos < len; pos += piece)
        if (es_stream_feed(&s, buf + pos, len - pos < piece ? len - pos : piece, &cb) < 0)
            break;
    int r = es_stream_finish(&s);
    if (s.state == ES_STREAM_END)
        es_model_end(m);
    es_stream_destroy(&s);
    return r;
}

static void check_fixture(const char *path) {
    char expect[512];
    unit_expect_path(path, expect, sizeof expect);
    size_t len;
    uint8_t *buf = unit_read_file(path, &len);
    /* "ghc-9.6.6.eventlog" -> "9.6.6" */
    char version[32];
    const char *v = strrchr(path, '/');
    v = strstr(v ? v : path, "ghc-") + 4;
    snprintf(version, sizeof version, "%.*s", (int)(strlen(v) - strlen(".eventlog")), v);

    static const size_t pieces[] = {1, 7, 4096, (size_t)1 << 30};
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        struct es_model *m = malloc(sizeof *m);
        es_model_init(m);
        int r = feed(m, buf, len, pieces[i]);
        ok(r == 0 && m->ended, "%s (pieces of %zu): complete stream, model ended", path, pieces[i]);
        /* make-fixtures.sh records the program as fibber-file. */
        ok(strcmp(m->program, "fibber-file") == 0 &&
               strstr(m->args, "fibber-file 18 19 20") != NULL,
           "%s: program name %s (args %s)", path, m->program, m->args);
        ok(strcmp(m->ghc_version, version) == 0 && m->pid > 0,
           "%s: GHC version %s from \"%s\", pid %u", path, m->ghc_version, m->rts_id, m->pid);
        ok((long)m->threads_created == expect_or_zero(expect, "CreateThread"),
           "%s: %llu threads created, as ghc-events counted", path,
           (unsigned long long)m->threads_created);
        ok((long)m->gcs == expect_or_zero(expect, "GCStatsGHC") &&
               m->minor_gcs + m->major_gcs == m->gcs,
           "%s: %llu GCs (%llu minor, %llu major), as ghc-events counted", path,
           (unsigned long long)m->gcs, (unsigned long long)m->minor_gcs,
           (unsigned long long)m->major_gcs);
        ok(m->pause_n == (uint64_t)expect_or_zero(expect, "GCStatsGHC") && m->pause_max > 0 &&
               m->gc_ns >= m->pause_max && es_model_pause_pct(m, 0.5, 0) <= m->pause_max,
           "%s: %llu pauses, max %llu ns, p50 %llu ns", path, (unsigned long long)m->pause_n,
           (unsigned long long)m->pause_max, (unsigned long long)es_model_pause_pct(m, 0.5, 0));
        ok(m->heap_size > 0 && m->heap_live > 0 && m->heap_live <= m->heap_size && m->allocated > 0,
           "%s: heap size %llu, live %llu, allocated %llu", path, (unsigned long long)m->heap_size,
           (unsigned long long)m->heap_live, (unsigned long long)m->allocated);
        ok(m->heap_prof == (expect_or_zero(expect, "HeapProfBegin") > 0) &&
               (long)m->censuses == expect_or_zero(expect, "HeapProfSampleBegin"),
           "%s: heap profiling %d (breakdown %u), %llu censuses", path, m->heap_prof, m->breakdown,
           (unsigned long long)m->censuses);
        long markers = expect_or_zero(expect, "UserMarker");
        bool texts = m->notes_n == (uint64_t)markers;
        /* fibber posts "fib N = F(N)" for 18, 19, 20. */
        for (uint64_t k = 0; texts && k < m->notes_n; k++) {
            char want[64];
            static const int fib[] = {2584, 4181, 6765};
            snprintf(want, sizeof want, "fib %d = %d", 18 + (int)k, fib[k % 3]);
            texts = m->notes[k].kind == ES_NOTE_MARKER && strcmp(m->notes[k].text, want) == 0;
        }
        ok(texts, "%s: %llu markers with fibber's texts (ghc-events: %ld)", path,
           (unsigned long long)m->notes_n, markers);
        double share = es_model_cap_share(m, 0, 0);
        ok(m->ncaps >= 1 && share > 0 && share <= 1 && es_model_threads(m) <= m->threads_created,
           "%s: %u capabilities, cap 0 ran Haskell %.0f%% of the time; %zu threads alive", path,
           m->ncaps, 100 * share, es_model_threads(m));
        ok(m->drops == 0 && !m->oom, "%s: no drop notice", path);
        es_model_destroy(m);
        free(m);
    }
    free(buf);
}

UNIT_FIXTURE_CASE(model_recorded, path) {
    check_fixture(path);
}

/* Cut at every offset: the model never crashes, and ends only when the
 * stream did. */
static void check_cut_fixture(const char *path) {
    size_t len;
    uint8_t *buf = unit_read_file(path, &len);
    size_t ended = 0;
    /* One model's memory for every cut (360 KB: allocated and freed
     * thousands of times it was most of the case's time under ASan). */
    struct es_model *m = malloc(sizeof *m);
    for (size_t cut = 0; cut < len; cut++) {
        es_model_init(m);
        feed(m, buf, cut, 4096);
        ended += m->ended;
        es_model_destroy(m);
    }
    free(m);
    ok(ended == 0, "%s: cut at each of %zu offsets: never ended", path, len);
    free(buf);
}

UNIT_FIXTURE_CASE(model_cut_streams, path) {
    check_cut_fixture(path);
}

/* ---- Skimming (es_stream_skim, es_model_skip): the model reads only the
 * events it handles one by one; it must end up exactly as when it reads
 * them all. */

static void on_skip(const struct es_stream_skip *run, void *ctx) {
    es_model_skip(ctx, run);
}

static void feed_skim(struct es_model *m, const uint8_t *buf, size_t len, size_t piece) {
    struct es_stream s;
    struct es_stream_callbacks cb = {.on_header = on_header, .on_event = on_event, .ctx = m};
    es_stream_init(&s);
    es_stream_skim(&s, m->want, m->window, on_skip);
    for (size_t pos = 0; pos < len; pos += piece)
        if (es_stream_feed(&s, buf + pos, len - pos < piece ? len - pos : piece, &cb) < 0)
            break;
    if (es_stream_finish(&s) == 0)
        es_model_end(m);
    es_stream_destroy(&s);
}

#define SAME(f)       (a->f == b->f)
#define SAME_ARRAY(f) (memcmp(a->f, b->f, sizeof a->f) == 0)
/* Everything the views read, field by field (no padding compared). */
static bool same_model(const struct es_model *a, const struct es_model *b) {
    bool same = SAME(events) && SAME(first_time) && SAME(now) && SAME(next_second) && SAME(ended) &&
                SAME(heap_size) && SAME(heap_live) && SAME(allocated) && SAME(alloc_rate) &&
                SAME(alloc_rated) && SAME(gcs) && SAME(minor_gcs) && SAME(major_gcs) &&
                SAME(gc_ns) && SAME(pause_max) && SAME(pause_n) && SAME_ARRAY(pause_hist) &&
                SAME_ARRAY(secs) && SAME_ARRAY(gen_gcs) && SAME(ncaps) && SAME(block_cap) &&
                SAME(block_left) && SAME_ARRAY(snap_t) && SAME_ARRAY(snap_busy) && SAME(snap_n) &&
                es_model_threads(a) == es_model_threads(b) &&
                es_model_threads_known(a) == es_model_threads_known(b) && SAME(threads_created) &&
                SAME(censuses) && SAME(notes_n) && SAME(sparks_seen) && SAME(drops) && SAME(h.n) &&
                SAME(h.width) && SAME_ARRAY(h.tl) && SAME(h.npauses) && SAME(h.ncensuses) &&
                SAME(h.marks_n) && SAME(s_size.n) && SAME(s_size.first) && SAME_ARRAY(s_size.v) &&
                SAME_ARRAY(s_alloc.v) && SAME_ARRAY(s_live.v) &&
                strcmp(a->program, b->program) == 0;
    for (unsigned c = 0; same && c < ES_MODEL_MAX_CAPS; c++) {
        const struct es_model_cap *x = &a->caps[c], *y = &b->caps[c];
        same = x->running_since == y->running_since && x->busy_ns == y->busy_ns &&
               x->gc_since == y->gc_since && x->allocated == y->allocated && x->seen == y->seen &&
               memcmp(x->sparks, y->sparks, sizeof x->sparks) == 0;
    }
    for (unsigned c = 0; same && c < ES_MODEL_MAX_CAPS; c++)
        same = (a->h.cap_ns[c] == NULL) == (b->h.cap_ns[c] == NULL) &&
               (a->h.cap_ns[c] == NULL ||
                memcmp(a->h.cap_ns[c], b->h.cap_ns[c],
                       2 * ES_MODEL_TL_BUCKETS * sizeof a->h.cap_ns[c][0]) == 0);
    return same;
}

/* The fixture's events `rounds` times over, each round `shift` ns later
 * than the one before: a run of many seconds. */
static uint8_t *stretch(const uint8_t *buf, size_t len, unsigned rounds, uint64_t shift,
                        size_t *out_len) {
    struct es_header h;
    if (es_header_parse(buf, len, &h) != 0 || len < h.len + 2)
        return NULL;
    size_t body = len - h.len - 2; /* without the end marker */
    uint8_t *out = malloc(h.len + body * rounds + 2);
    memcpy(out, buf, h.len);
    for (unsigned k = 0; k < rounds; k++) {
        uint8_t *r = out + h.len + body * k;
        memcpy(r, buf + h.len, body);
        struct es_event_iter it;
        struct es_event ev;
        es_events_iter_init(&it, &h, r, body);
        while (es_events_next(&it, &ev) == ES_WALK_EVENT)
            es_put_be(r + ev.offset + 2, ev.time + shift * k, 8);
    }
    memcpy(out + h.len + body * rounds, "\xff\xff", 2);
    *out_len = h.len + body * rounds + 2;
    return out;
}

static void check_skim_fixture(const char *path) {
    size_t len, n;
    uint8_t *fixture = unit_read_file(path, &len);
    uint8_t *buf = stretch(fixture, len, 40, 300000000, &n);
    static const size_t pieces[] = {1, 13, 4096, (size_t)1 << 30};
    for (unsigned i = 0; buf && i < sizeof pieces / sizeof pieces[0]; i++) {
        struct es_model *a = malloc(sizeof *a), *b = malloc(sizeof *b);
        es_model_init(a);
        es_model_init(b);
        feed(a, buf, n, pieces[i]);
        feed_skim(b, buf, n, pieces[i]);
        ok(a->events > 1000 && same_model(a, b),
           "%s x40 over 12 s (pieces of %zu): skimming, the model is the same (%llu events)", path,
           pieces[i], (unsigned long long)b->events);
        es_model_destroy(a);
        es_model_destroy(b);
        free(a);
        free(b);
    }
    ok(buf != NULL, "%s: stretched", path);
    free(buf);
    free(fixture);
}

UNIT_FIXTURE_CASE(model_skimming, path) {
    check_skim_fixture(path);
}
