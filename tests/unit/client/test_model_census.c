/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's model of a program (client/model/core.c and its families) on hand-made events:
 * censuses and their trends, GC pauses and their percentiles, markers and
 * drop, wait and cost notices, the span labels in the order the views
 * walk them, and the history of the whole run; memory
 * stays bounded however many labels, pauses and threads come; garbled
 * payloads never crash it. (test_model reads the recorded fixtures.)
 * No argument. */
#include "model/model.h"
#include "model_events.h"
#include "../unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Hand-made events. */

static void sample(struct es_model *m, uint64_t t, const char *const *labels, const uint64_t *bytes,
                   size_t n) {
    struct ev b;
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_BEGIN, t), 1, 8));
    for (size_t i = 0; i < n; i++)
        put(m, str(u(u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_STRING, t), 0, 1), bytes[i], 8), labels[i],
                   true));
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_END, t), 1, 8));
}

static int64_t bytes_of(const struct es_model *m, const char *label) {
    for (size_t k = 0; k < m->cur.n; k++)
        if (strcmp(es_model_label(m, m->cur.e[k].label), label) == 0)
            return (int64_t)m->cur.e[k].bytes;
    return -1;
}

UNIT_CASE(model_census_censuses) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    struct ev b;
    put(m, u(u(u(mk(&b, ES_EVENT_HEAP_PROF_BEGIN, 1), 0, 1), 100000000, 8), 7, 4));
    ok(m->heap_prof && m->breakdown == 7 && m->heap_interval_ns == 100000000,
       "HEAP_PROF_BEGIN: breakdown 7 (closure type), interval 0.1 s");
    const char *l1[] = {"THUNK", "ARR_WORDS", "ghc-prim:GHC.Types.:"};
    const uint64_t b1[] = {4000, 9000, 100};
    sample(m, 1000000000, l1, b1, 3);
    ok(m->censuses == 1 && m->cur.n == 3 && m->cur.total == 13100 && bytes_of(m, "THUNK") == 4000,
       "one census: 3 labels, 13100 bytes");
    const char *l2[] = {"ARR_WORDS", "THUNK", "MUT_VAR_CLEAN"};
    const uint64_t b2[] = {12000, 1000, 48};
    sample(m, 2000000000, l2, b2, 3);
    size_t top[8];
    size_t k = es_model_top_entries(m, top, 8);
    ok(k == 3 && strcmp(es_model_label(m, m->cur.e[top[0]].label), "ARR_WORDS") == 0 &&
           strcmp(es_model_label(m, m->cur.e[top[1]].label), "THUNK") == 0,
       "top entries by bytes: ARR_WORDS, THUNK, ...");
    ok(es_model_prev_bytes(m, m->cur.e[top[0]].label) == 9000 &&
           es_model_prev_bytes(m, m->cur.e[top[1]].label) == 4000 &&
           es_model_prev_bytes(m, m->cur.e[top[2]].label) == -1 && m->prev.total == 13100,
       "trends: the previous census's bytes per label, -1 for a new label");
    /* A sample without its end is not a census. */
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_BEGIN, 3000000000), 3, 8));
    put(m, str(u(u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_STRING, 3000000000), 0, 1), 5, 8), "X", true));
    ok(m->censuses == 2 && bytes_of(m, "X") == -1, "a census in progress is not shown");
    es_model_end(m);

    /* Cost-centre stacks: labels from the cost centre definitions. */
    es_model_reset(m);
    put(m, u(str(str(str(u(mk(&b, ES_EVENT_HEAP_PROF_COST_CENTRE, 1), 1, 4), "main", true), "Main",
                     true),
                 "Main.hs:3:1", true),
             0, 1));
    put(m, u(str(str(str(u(mk(&b, ES_EVENT_HEAP_PROF_COST_CENTRE, 1), 2, 4), "go", true), "Main",
                     true),
                 "Main.hs:9:1", true),
             0, 1));
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_BEGIN, 5), 0, 8));
    put(m, u(u(u(u(u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_COST_CENTRE, 5), 0, 1), 777, 8), 2, 1), 2, 4),
             1, 4));
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_END, 5), 0, 8));
    ok(m->censuses == 1 && bytes_of(m, "go/main") == 777,
       "a cost-centre stack sample is labelled go/main");

    /* Bounded: a million distinct labels keep at most ES_MODEL_MAX_LABELS. */
    es_model_reset(m);
    char label[32];
    const char *lp[1] = {label};
    for (unsigned i = 0; i < 200000; i++) {
        uint64_t one = 8;
        snprintf(label, sizeof label, "L%u", i);
        sample(m, (uint64_t)i * 1000, lp, &one, 1);
    }
    ok(m->nlabels == ES_MODEL_MAX_LABELS && m->censuses == 200000 &&
           bytes_of(m, "(other labels)") == 8,
       "200000 distinct labels: %zu kept, later ones under (other labels)", m->nlabels);
    es_model_destroy(m);
    free(m);
}

UNIT_CASE(model_census_gc) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    struct ev b;
    put(m, u(u(u(u(u(u(mk(&b, ES_EVENT_HEAP_INFO_GHC, 0), 0, 4), 2, 2), 0, 8), 1 << 20, 8), 1 << 20,
               8),
             4096, 8));
    /* 100000 GCs, 2 ms apart, pauses of 1..1000 us (i % 1000 + 1), every
     * tenth a major one; one block of capability 0 holds them. */
    struct ev mark;
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 0, 2));
    uint64_t total = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        uint64_t t = 2000000 * (i + 1), d = 1000 * (i % 1000 + 1);
        /* The RTS posts the leader's GC_STATS_GHC just before its GC_END;
         * either order counts. */
        put(m, mk(&b, ES_EVENT_GC_START, t));
        if (i % 2)
            put(m, mk(&b, ES_EVENT_GC_END, t + d));
        put(m, u(u(u(u(mk(&b, ES_EVENT_GC_STATS_GHC, t + d), 0, 4), i % 10 == 9, 2), 0, 8), 0, 40));
        if (i % 2 == 0)
            put(m, mk(&b, ES_EVENT_GC_END, t + d));
        total += d;
    }
    ok(m->gcs == 100000 && m->major_gcs == 10000 && m->minor_gcs == 90000,
       "100000 GCs: 90000 minor, 10000 major (generation from GC_STATS_GHC)");
    ok(m->pause_n == 100000 && m->gc_ns == total && m->pause_max == 1000000,
       "pauses: %llu, total %llu ns, max %llu ns", (unsigned long long)m->pause_n,
       (unsigned long long)m->gc_ns, (unsigned long long)m->pause_max);
    uint64_t p50 = es_model_pause_pct(m, 0.5, 0), p99 = es_model_pause_pct(m, 0.99, 0);
    ok(fabs((double)p50 - 500000) < 0.05 * 500000 && fabs((double)p99 - 990000) < 0.05 * 990000,
       "since start: p50 %llu ns (500 us), p99 %llu ns (990 us), within 5%%",
       (unsigned long long)p50, (unsigned long long)p99);
    /* The last minute: the last 30000 GCs (pauses 1..1000 us cycling). */
    uint64_t w50 = es_model_pause_pct(m, 0.5, 60000000000ull);
    uint64_t w99 = es_model_pause_pct(m, 0.99, 60000000000ull);
    ok(fabs((double)w50 - 500000) < 0.05 * 500000 && fabs((double)w99 - 990000) < 0.05 * 990000 &&
           es_model_pause_max(m, 60000000000ull) == 1000000,
       "last minute: p50 %llu ns, p99 %llu ns, max 1 ms", (unsigned long long)w50,
       (unsigned long long)w99);
    double wshare = es_model_gc_share(m, 60000000000ull);
    ok(fabs(wshare - 0.25) < 0.01, "time in GC over the last minute: %.1f%%", 100 * wshare);
    double share = es_model_gc_share(m, 0);
    ok(fabs(share - (double)total / (double)(m->now - m->first_time)) < 1e-9 && share > 0.2 &&
           share < 0.3,
       "time in GC: %.1f%% of wall time", 100 * share);
    /* A parallel GC: capability 1's interval (without GC_STATS_GHC) is part
     * of capability 0's pause, whichever block comes first. */
    uint64_t n = m->pause_n, t = m->now + 1000000;
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, t), 1000, 4), 0, 8), 1, 2));
    put(m, mk(&b, ES_EVENT_GC_START, t + 1000));
    put(m, mk(&b, ES_EVENT_GC_END, t + 2000000));
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, t), 1000, 4), 0, 8), 0, 2));
    put(m, mk(&b, ES_EVENT_GC_START, t));
    put(m, u(u(u(u(mk(&b, ES_EVENT_GC_STATS_GHC, t), 0, 4), 0, 2), 0, 8), 0, 40));
    put(m, mk(&b, ES_EVENT_GC_END, t + 3000000));
    ok(m->pause_n == n + 1 && m->pause_max == 3000000 && m->ncaps == 2 && m->gcs == 100001,
       "a parallel GC on 2 capabilities is one pause of 3 ms");

    /* Capabilities: cap 0 runs a thread half of every 10 ms for 10 s. */
    es_model_reset(m);
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 0, 2));
    for (uint64_t i = 0; i < 1000; i++) {
        put(m, u(mk(&b, ES_EVENT_RUN_THREAD, i * 10000000), 1, 4));
        put(m, u(u(u(mk(&b, ES_EVENT_STOP_THREAD, i * 10000000 + 5000000), 1, 4), 3, 2), 0, 4));
    }
    put(m, u(mk(&b, ES_EVENT_RUN_THREAD, 10000000000ull), 1, 4));
    put(m, u(u(u(mk(&b, ES_EVENT_STOP_THREAD, 10005000000ull), 1, 4), 3, 2), 0, 4));
    double all = es_model_cap_share(m, 0, 0), recent = es_model_cap_share(m, 0, 2000000000);
    ok(fabs(all - 0.5) < 0.01 && fabs(recent - 0.5) < 0.01 && es_model_threads(m) == 1,
       "cap 0 ran Haskell %.1f%% since start, %.1f%% over the last 2 s; 1 thread", 100 * all,
       100 * recent);

    /* Threads: two million created and finished leave none; memory bounded. */
    for (uint32_t i = 2; i < 2000002; i++) {
        put(m, u(mk(&b, ES_EVENT_CREATE_THREAD, 1), i, 4));
        if (i % 1000 != 0)
            put(m, u(u(u(mk(&b, ES_EVENT_STOP_THREAD, 1), i, 4), 5, 2), 0, 4));
    }
    ok(es_model_threads(m) == 2000 + 1 && m->thr.kept <= ES_MODEL_THREADS_KEPT,
       "2000000 threads created, all but 2000 finished: %zu alive (%u followed)",
       es_model_threads(m), m->thr.kept);

    /* Heap figures and their per-second history. */
    es_model_reset(m);
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 0, 2));
    for (uint64_t s = 0; s < 300; s++) {
        put(m, u(u(mk(&b, ES_EVENT_HEAP_SIZE, s * 1000000000 + 1), 0, 4), (s + 1) << 20, 8));
        put(m, u(u(mk(&b, ES_EVENT_HEAP_LIVE, s * 1000000000 + 2), 0, 4), (s + 1) << 10, 8));
        put(m,
            u(u(mk(&b, ES_EVENT_HEAP_ALLOCATED, s * 1000000000 + 3), 0, 4), (s + 1) * 1000000, 8));
    }
    ok(m->heap_size == 300u << 20 && m->heap_live == 300u << 10 && m->allocated == 300000000 &&
           fabs(m->alloc_rate - 1e6) < 1,
       "heap size, live, allocated; allocation rate %.0f B/s", m->alloc_rate);
    /* A capability first seen late: its first figure (all it allocated
     * before) counts in the total, not in the rate or the history. */
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 1, 2));
    put(m, u(u(mk(&b, ES_EVENT_HEAP_ALLOCATED, 299000000004ull), 0, 4), 5000000000ull, 8));
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 0, 2));
    ok(m->allocated == 5300000000ull && fabs(m->alloc_rate - 1e6) < 1 &&
           es_model_series_at(&m->s_alloc, ES_MODEL_SERIES - 1) == 1e6,
       "a capability's first allocation figure: in the total (%llu), not in the rate",
       (unsigned long long)m->allocated);
    ok(m->s_size.n == ES_MODEL_SERIES &&
           es_model_series_at(&m->s_size, ES_MODEL_SERIES - 1) == 300u << 20 &&
           es_model_series_at(&m->s_size, 0) == (300u - ES_MODEL_SERIES + 1) << 20 &&
           es_model_series_at(&m->s_alloc, ES_MODEL_SERIES - 1) == 1e6,
       "history: the last %d seconds, one point each", ES_MODEL_SERIES);
    /* After a drop notice, a capability's next figure spans the lost
     * stretch: in the total, not as a spike in the rate or the history. */
    put(m, str(mk(&b, ES_EVENT_USER_MSG, 300000000000ull),
               "eventlog-socket: dropped 9 chunks (4.0 MiB)", false));
    put(m, u(u(mk(&b, ES_EVENT_HEAP_ALLOCATED, 300000000003ull), 0, 4), 10300000000ull, 8));
    double rate_after_gap = m->alloc_rate;
    put(m, u(u(mk(&b, ES_EVENT_HEAP_ALLOCATED, 301000000003ull), 0, 4), 10301000000ull, 8));
    ok(m->allocated == 15301000000ull && rate_after_gap < 2e6 &&
           es_model_series_at(&m->s_alloc, ES_MODEL_SERIES - 2) < 2e6 &&
           es_model_series_at(&m->s_alloc, ES_MODEL_SERIES - 1) == 1e6,
       "the figure after a drop notice: in the total (%llu), not a spike (that second %.0f B, "
       "rate %.0f B/s)",
       (unsigned long long)m->allocated, es_model_series_at(&m->s_alloc, ES_MODEL_SERIES - 2),
       rate_after_gap);
    es_model_destroy(m);
    free(m);
}

UNIT_CASE(model_census_notes) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    struct ev b;
    for (int i = 0; i < 100; i++) {
        char text[32];
        snprintf(text, sizeof text, "step %d\n", i);
        put(m, str(mk(&b, i % 2 ? ES_EVENT_USER_MSG : ES_EVENT_USER_MARKER, (uint64_t)i), text,
                   false));
    }
    struct es_model_note *last = &m->notes[(m->notes_n - 1) % ES_MODEL_NOTES];
    ok(m->notes_n == 100 && strcmp(last->text, "step 99 ") == 0 && last->kind == ES_NOTE_MESSAGE,
       "100 markers and messages: the newest %d kept, control characters blanked", ES_MODEL_NOTES);
    put(m,
        str(mk(&b, ES_EVENT_USER_MSG, 200), "eventlog-socket: dropped 12 chunks (3.5 MiB)", false));
    put(m,
        str(mk(&b, ES_EVENT_USER_MSG, 300), "eventlog-socket: dropped 1 chunks (0.1 MiB)", false));
    ok(m->drops == 2 && m->dropped_chunks == 13 && fabs(m->dropped_mib - 3.6) < 1e-9 &&
           m->last_drop_time == 300 && m->notes_n == 100,
       "drop notices counted (13 chunks, 3.6 MiB), not shown as messages");
    put(m, str(mk(&b, ES_EVENT_USER_MSG, 400),
               "eventlog-socket: the program waited 12.5 ms (3 times) for lossless clients in "
               "the last 1.0 s",
               false));
    put(m, str(mk(&b, ES_EVENT_USER_MSG, 500),
               "eventlog-socket: the program waited 0.5 ms (1 times) for lossless clients in "
               "the last 2.0 s",
               false));
    put(m, str(mk(&b, ES_EVENT_USER_MSG, 600), "eventlog-socket: the program waited much", false));
    ok(m->wait_notices == 2 && m->lossless_waits == 4 && fabs(m->lossless_wait_ms - 13.0) < 1e-9 &&
           m->last_wait_time == 500 && m->notes_n == 103,
       "wait notices summed (4 waits, 13.0 ms) and kept as messages; a look-alike is only a "
       "message");
    ok(es_model_cost_s_per_gib(m) < 0 && m->cost_notices == 0, "no cost notice: no cost");
    put(m, str(mk(&b, ES_EVENT_USER_MSG, 700),
               "eventlog-socket: streaming cost 12.3 ms of CPU in the last 1.0 s (RTS threads "
               "3.1, walker 2.0, loop 7.2), 512.0 MiB sent",
               false));
    put(m, str(mk(&b, ES_EVENT_USER_MSG, 800),
               "eventlog-socket: streaming cost 10.0 ms of CPU in the last 2.0 s (RTS threads "
               "4.0, walker 2.0, loop 4.0), 512.0 MiB sent",
               false));
    put(m, str(mk(&b, ES_EVENT_USER_MSG, 900), "eventlog-socket: streaming cost nothing", false));
    ok(m->cost_notices == 2 && fabs(m->cost_ms_per_s - 5.0) < 1e-9 &&
           fabs(m->cost_rts_ms_per_s - 2.0) < 1e-9 && fabs(m->cost_walker_ms_per_s - 1.0) < 1e-9 &&
           fabs(m->cost_loop_ms_per_s - 2.0) < 1e-9 &&
           fabs(es_model_cost_s_per_gib(m) - 0.0223) < 1e-9 && m->notes_n == 104,
       "cost notices: the latest per second (5.0 ms/s), 0.0223 s per GiB over all; not "
       "messages, and a look-alike is only a message");
    char big[700];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    struct ev *e = mk(&b, ES_EVENT_PROGRAM_ARGS, 1);
    u(e, 0, 4);
    str(e, "/usr/local/bin/my-server", true);
    str(e, "--port", true);
    str(e, "8080", true);
    put(m, e);
    put(m, str(u(mk(&b, ES_EVENT_RTS_IDENTIFIER, 1), 0, 4), "GHC-9.10.3 rts_thr", true));
    put(m, u(u(mk(&b, ES_EVENT_OSPROCESS_PID, 1), 0, 4), 4242, 4));
    ok(strcmp(m->program, "my-server") == 0 &&
           strcmp(m->args, "/usr/local/bin/my-server --port 8080") == 0 &&
           strcmp(m->ghc_version, "9.10.3") == 0 && m->pid == 4242,
       "program my-server (%s), GHC %s, pid 4242", m->args, m->ghc_version);

    /* Every event type with payloads of every length up to 40 bytes of
     * noise: nothing is read past a payload (ASan), nothing crashes. */
    uint8_t noise[40];
    for (unsigned i = 0; i < sizeof noise; i++)
        noise[i] = (uint8_t)(i * 37 + 11);
    for (unsigned type = 0; type < 256; type++)
        for (size_t n = 0; n <= sizeof noise; n++) {
            struct es_event ev = {.type = (uint16_t)type, .time = 5, .len = 10 + n};
            uint8_t *p = malloc(n ? n : 1);
            memcpy(p, noise, n);
            ev.payload = p;
            ev.payload_len = n;
            es_model_event(m, &ev);
            free(p);
        }
    ok(1, "every event type with garbled payloads of 0..40 bytes: no crash");
    es_model_destroy(m);
    free(m);
}

/* ---- The history of the whole run (struct es_model_history). */

static double cap_hist(const struct es_model *m, unsigned c, int kind) {
    double sum = 0;
    if (m->h.cap_ns[c] != NULL)
        for (unsigned i = 0; i < m->h.n; i++)
            sum += (double)m->h.cap_ns[c][2 * i + (unsigned)kind];
    return sum;
}

/* Every census point's rows add up to its total. */
static bool census_points_whole(const struct es_model *m) {
    for (size_t i = 0; i < m->h.ncensuses; i++) {
        uint64_t sum = 0;
        for (uint32_t k = 0; k < m->h.censuses[i].n; k++)
            sum += m->h.censuses[i].e[k].bytes;
        if (sum != m->h.censuses[i].total ||
            (i && m->h.censuses[i].time <= m->h.censuses[i - 1].time))
            return false;
    }
    return true;
}

UNIT_CASE(model_census_history) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    struct ev b, mark;
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 0, 2));
    /* An hour of heap figures, one a second: the timeline widens, keeps
     * the peak and every allocated byte. */
    double alloc = 0;
    for (uint64_t s = 0; s < 3600; s++) {
        uint64_t size = (s == 1234 ? 999 : s % 7 + 1) << 20;
        put(m, u(u(mk(&b, ES_EVENT_HEAP_SIZE, s * 1000000000 + 1), 0, 4), size, 8));
        put(m, u(u(mk(&b, ES_EVENT_HEAP_LIVE, s * 1000000000 + 2), 0, 4), 1 << 20, 8));
        put(m, u(u(mk(&b, ES_EVENT_HEAP_ALLOCATED, s * 1000000000 + 3), 0, 4), (s + 1) * 1000, 8));
        alloc += s ? 1000 : 0;
    }
    double peak = 0, hist_alloc = 0;
    for (unsigned i = 0; i < m->h.n; i++) {
        peak = m->h.tl[i].heap_size > peak ? m->h.tl[i].heap_size : peak;
        hist_alloc += m->h.tl[i].allocated;
    }
    ok(m->h.n <= ES_MODEL_TL_BUCKETS && m->h.width * m->h.n >= 3599000000000ull &&
           m->h.width < 2 * 3600000000000ull / ES_MODEL_TL_BUCKETS && peak == 999u << 20 &&
           hist_alloc == alloc && m->h.generation > 0,
       "history: an hour in %u buckets of %.2f s, peak heap kept, %.0f bytes allocated in them",
       m->h.n, (double)m->h.width / 1e9, hist_alloc);

    /* Capability activity: cap 1 runs half of every 10 ms, GCs a tenth. */
    es_model_reset(m);
    put(m, u(u(u(mk(&mark, ES_EVENT_BLOCK_MARKER, 0), 0xffffffff, 4), 0, 8), 1, 2));
    for (uint64_t i = 0; i < 2000; i++) {
        uint64_t t = (i + 1) * 10000000;
        put(m, u(mk(&b, ES_EVENT_RUN_THREAD, t), 1, 4));
        put(m, u(u(u(mk(&b, ES_EVENT_STOP_THREAD, t + 5000000), 1, 4), 3, 2), 0, 4));
        put(m, mk(&b, ES_EVENT_GC_START, t + 6000000));
        put(m, u(u(u(u(mk(&b, ES_EVENT_GC_STATS_GHC, t + 6000000), 0, 4), i % 4 == 3, 2), 0, 8), 0,
                 40));
        put(m, mk(&b, ES_EVENT_GC_END, t + 7000000));
    }
    ok(cap_hist(m, 1, 0) == 2000 * 5e6 && cap_hist(m, 1, 1) == 2000 * 1e6 && m->h.cap_ns[0] == NULL,
       "capability 1: %.1f s running and %.1f s in GC in the timeline, as fed",
       cap_hist(m, 1, 0) / 1e9, cap_hist(m, 1, 1) / 1e9);
    size_t majors = 0;
    for (size_t i = 0; i < m->h.npauses; i++)
        majors += m->h.pauses[i].major && m->h.pauses[i].dur == 1000000;
    ok(m->h.npauses == 2000 && majors == 500 && m->h.pauses[3].start == 46000000,
       "2000 pauses as points: 500 major, times kept");
    /* A million pauses: the points stay bounded and keep the longest. */
    for (uint64_t i = 0; i < 1000000; i++) {
        uint64_t t = 30000000000ull + i * 1000000, d = i == 777777 ? 900000 : 1000;
        put(m, mk(&b, ES_EVENT_GC_START, t));
        put(m, u(u(u(u(mk(&b, ES_EVENT_GC_STATS_GHC, t), 0, 4), 0, 2), 0, 8), 0, 40));
        put(m, mk(&b, ES_EVENT_GC_END, t + d));
    }
    uint64_t longest = 0;
    for (size_t i = 0; i < m->h.npauses; i++)
        longest = m->h.pauses[i].dur > longest ? m->h.pauses[i].dur : longest;
    ok(m->h.npauses <= ES_MODEL_HIST_PAUSES && m->h.npauses >= ES_MODEL_HIST_PAUSES / 2 &&
           longest == 1000000 && m->h.pause_group >= 256,
       "1002000 pauses: %zu points (one per %llu), the longest kept", m->h.npauses,
       (unsigned long long)m->h.pause_group);

    /* Censuses: all kept up to the bound, then every other; totals exact. */
    es_model_reset(m);
    const char *l[] = {"THUNK", "ARR_WORDS"};
    for (uint64_t i = 0; i < 100; i++) {
        const uint64_t bytes[] = {i * 10, 5};
        sample(m, i * 1000000 + 1, l, bytes, 2);
    }
    ok(m->h.ncensuses == 100 && m->h.censuses[42].total == 425 && census_points_whole(m),
       "100 censuses: all in the history, totals as sampled");
    for (uint64_t i = 100; i < 5000; i++) {
        const uint64_t bytes[] = {i * 10, 5};
        sample(m, i * 1000000 + 1, l, bytes, 2);
    }
    ok(m->h.ncensuses <= ES_MODEL_HIST_CENSUSES && m->h.ncensuses >= ES_MODEL_HIST_CENSUSES / 2 &&
           m->h.censuses[0].time == 1 && m->h.censuses[1].total == m->h.census_stride * 10 + 5 &&
           census_points_whole(m),
       "5000 censuses: %zu kept (every %llu-th), totals exact", m->h.ncensuses,
       (unsigned long long)m->h.census_stride);
    /* A census of 1000 labels: its 255 largest and the rest as one. */
    es_model_reset(m);
    const char *many[1000];
    uint64_t mb[1000];
    char names[1000][16];
    for (int i = 0; i < 1000; i++) {
        snprintf(names[i], sizeof names[i], "T%d", i);
        many[i] = names[i];
        mb[i] = (uint64_t)i + 1;
    }
    sample(m, 5, many, mb, 1000);
    const struct es_model_census_pt *pt = &m->h.censuses[0];
    ok(m->h.ncensuses == 1 && pt->n == ES_MODEL_HIST_CENSUS_ROWS && pt->total == 500500 &&
           strcmp(es_model_label(m, pt->e[0].label), "T999") == 0 &&
           strcmp(es_model_label(m, pt->e[pt->n - 1].label), "(other labels)") == 0 &&
           census_points_whole(m),
       "a census of 1000 labels: %u rows, the largest first, the rest summed", pt->n);

    /* Markers and drops: rings of the newest. */
    for (int i = 0; i < 3000; i++) {
        char text[32];
        snprintf(text, sizeof text, "m%d", i);
        put(m, str(mk(&b, ES_EVENT_USER_MARKER, (uint64_t)i), text, false));
    }
    put(m,
        str(mk(&b, ES_EVENT_USER_MSG, 9000), "eventlog-socket: dropped 7 chunks (1.0 MiB)", false));
    ok(es_model_marks_kept(m) == ES_MODEL_HIST_MARKS &&
           strcmp(es_model_mark_at(m, 0)->text, "m1976") == 0 &&
           strcmp(es_model_mark_at(m, ES_MODEL_HIST_MARKS - 1)->text, "m2999") == 0 &&
           es_model_drops_kept(m) == 1 && es_model_drop_at(m, 0)->chunks == 7 &&
           es_model_drop_at(m, 0)->time == 9000 && es_model_drop_at(m, 0)->mib == 1.0,
       "3000 markers: the newest %d kept in order; a drop notice with its time",
       ES_MODEL_HIST_MARKS);
    es_model_destroy(m);
    free(m);
}

/* The span labels as every view walks them (es_model_span_label_at): the
 * model's own in the order first seen, a program's own "other" among
 * them, then the shared `other` once a span went there; NULL past them. */
static void span(struct es_model *m, uint64_t t, const char *label) {
    struct ev b;
    char text[64];
    snprintf(text, sizeof text, "START %s", label);
    put(m, str(mk(&b, ES_EVENT_USER_MSG, t), text, false));
    snprintf(text, sizeof text, "STOP %s", label);
    put(m, str(mk(&b, ES_EVENT_USER_MSG, t + 5), text, false));
}

UNIT_CASE(model_census_span_labels) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    ok(es_model_span_label_at(m, 0) == NULL, "no spans: no labels");
    span(m, 10, "req");
    span(m, 20, "other");
    span(m, 30, "req");
    const struct es_model_span_label *a = es_model_span_label_at(m, 0),
                                     *o = es_model_span_label_at(m, 1);
    ok(a != NULL && strcmp(a->label, "req") == 0 && a->count == 2 && o != NULL &&
           o != m->spans.other && strcmp(o->label, "other") == 0 && o->count == 1 &&
           es_model_span_label_at(m, 2) == NULL,
       "two labels in the order first seen, the program's own \"other\" one of them; the "
       "shared one not while empty");
    for (int i = 2; i < ES_MODEL_SPAN_LABELS + 2; i++) {
        char label[16];
        snprintf(label, sizeof label, "l%d", i);
        span(m, 100 + 10 * (uint64_t)i, label);
    }
    const struct es_model_span_label *last = es_model_span_label_at(m, ES_MODEL_SPAN_LABELS - 1),
                                     *rest = es_model_span_label_at(m, ES_MODEL_SPAN_LABELS);
    ok(m->spans.n == ES_MODEL_SPAN_LABELS && last != NULL && strcmp(last->label, "l63") == 0 &&
           rest == m->spans.other && rest->count == 2 &&
           es_model_span_label_at(m, ES_MODEL_SPAN_LABELS + 1) == NULL,
       "%d labels of their own, then the shared \"other\" with the 2 past them",
       ES_MODEL_SPAN_LABELS);
    es_model_destroy(m);
    free(m);
}
