/* SPDX-License-Identifier: BSD-3-Clause */
#include "json.h"
#include "sparks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ull

/* A number, or null for a missing figure (negative). */
static void num_or_null(struct es_httpbuf *b, double v) {
    if (v < 0)
        ES_HTTPBUF_ADD(b, "null");
    else
        es_httpbuf_printf(b, "%.0f", v);
}

/* Since when the figures count, and the event classes switched off ("" when
 * none ever was), in the words `top` uses too. */
static void counted_words(struct es_httpbuf *b, const struct es_model *m) {
    char counted[64];
    es_model_counted_since(m, counted, sizeof counted);
    ES_HTTPBUF_ADD(b, ",\"counted_since\":");
    es_httpbuf_json_str(b, counted);
    char classes[400];
    es_model_classes_words(m, classes, sizeof classes);
    ES_HTTPBUF_ADD(b, ",\"classes_off\":");
    es_httpbuf_json_str(b, classes);
}

static void info(struct es_httpbuf *b, const struct es_model *m,
                 const struct es_webjson_status *st) {
    ES_HTTPBUF_ADD(b, "\"info\":{\"program\":");
    es_httpbuf_json_str(b, m->program[0] || st->program == NULL ? m->program : st->program);
    ES_HTTPBUF_ADD(b, ",\"args\":");
    es_httpbuf_json_str(b, m->args);
    ES_HTTPBUF_ADD(b, ",\"ghc\":");
    es_httpbuf_json_str(b, m->ghc_version);
    ES_HTTPBUF_ADD(b, ",\"rts\":");
    es_httpbuf_json_str(b, m->rts_id);
    ES_HTTPBUF_ADD(b, ",\"state\":");
    es_httpbuf_json_str(b, st->state);
    ES_HTTPBUF_ADD(b, ",\"source\":");
    es_httpbuf_json_str(b, st->source);
    ES_HTTPBUF_ADD(b, ",\"error\":");
    es_httpbuf_json_str(b, st->error ? st->error : "");
    es_httpbuf_printf(b, ",\"run\":%u,\"retry\":%s", st->run, st->retry ? "true" : "false");
    es_httpbuf_printf(b, ",\"no_flush\":%s,\"late_start\":%s", m->no_flush ? "true" : "false",
                      es_model_late_start(m) ? "true" : "false");
    /* The heap profile's mode by name, and why it shows nothing when the
     * eventlog cannot carry its samples (-hr, -hb). */
    const char *lack = m->heap_prof ? es_model_breakdown_lack(m->breakdown, m->nlabels > 0) : NULL;
    ES_HTTPBUF_ADD(b, ",\"breakdown_name\":");
    es_httpbuf_json_str(b, m->heap_prof ? es_model_breakdown_name(m->breakdown) : "");
    ES_HTTPBUF_ADD(b, ",\"mode_note\":");
    es_httpbuf_json_str(b, lack ? lack : "");
    /* The words `top` says too (model.h): the profile's kind, or why there
     * is none; since when the counts run. */
    bool over = m->ended || strcmp(st->state, "file") == 0 || strcmp(st->state, "exited") == 0;
    ES_HTTPBUF_ADD(b, ",\"profile_kind\":");
    es_httpbuf_json_str(b, es_model_profile_kind(m, over));
    counted_words(b, m);
    es_httpbuf_printf(
        b,
        ",\"pid\":%u,\"wall_start\":%llu,\"first\":%llu,\"now\":%llu,\"ended\":%s,"
        "\"recording\":%s,\"control\":%s,\"bytes\":%llu,\"events\":%llu,"
        "\"heap_prof\":%s,\"breakdown\":%u,\"interval\":%llu,\"censuses\":%llu,"
        "\"heap_size\":%llu,\"heap_live\":%llu,\"max_heap_size\":%llu,\"max_heap_live\":%llu,"
        "\"allocated\":%llu,\"alloc_rate\":%.0f,\"gcs\":%llu,\"minor\":%llu,\"major\":%llu,"
        "\"gc_ns\":%llu,\"pause_max\":%llu,\"p50\":%llu,\"p99\":%llu,\"gc_share\":%.4f,"
        "\"threads\":%zu,\"ncaps\":%u,\"drops\":%llu,\"dropped_chunks\":%llu,\"dropped_mib\":%.1f,"
        "\"wait_notices\":%llu,\"lossless_waits\":%llu,\"lossless_wait_ms\":%.1f,"
        "\"cost_notices\":%llu,\"cost_ms_per_s\":%.2f,\"cost_rts\":%.2f,\"cost_walker\":%.2f,"
        "\"cost_loop\":%.2f,\"cost_s_per_gib\":%.4f,"
        "\"width\":%llu,\"marks\":%llu,"
        "\"cap_share\":[",
        m->pid ? m->pid : st->pid, (unsigned long long)m->wall_start_s,
        (unsigned long long)m->first_time, (unsigned long long)m->now, m->ended ? "true" : "false",
        st->recording ? "true" : "false", st->can_control ? "true" : "false",
        (unsigned long long)st->bytes, (unsigned long long)m->events,
        m->heap_prof ? "true" : "false", m->breakdown, (unsigned long long)m->heap_interval_ns,
        (unsigned long long)m->censuses, (unsigned long long)m->heap_size,
        (unsigned long long)m->heap_live, (unsigned long long)m->max_heap_size,
        (unsigned long long)m->max_heap_live, (unsigned long long)m->allocated, m->alloc_rate,
        (unsigned long long)m->gcs, (unsigned long long)m->minor_gcs,
        (unsigned long long)m->major_gcs, (unsigned long long)m->gc_ns,
        (unsigned long long)m->pause_max, (unsigned long long)es_model_pause_pct(m, 0.5, 0),
        (unsigned long long)es_model_pause_pct(m, 0.99, 0), es_model_gc_share(m, 0),
        es_model_threads(m), m->ncaps, (unsigned long long)m->drops,
        (unsigned long long)m->dropped_chunks, m->dropped_mib, (unsigned long long)m->wait_notices,
        (unsigned long long)m->lossless_waits, m->lossless_wait_ms,
        (unsigned long long)m->cost_notices, m->cost_ms_per_s, m->cost_rts_ms_per_s,
        m->cost_walker_ms_per_s, m->cost_loop_ms_per_s, es_model_cost_s_per_gib(m),
        (unsigned long long)m->h.width, (unsigned long long)m->h.marks_n);
    for (unsigned c = 0; c < m->ncaps && c < ES_MODEL_MAX_CAPS; c++)
        es_httpbuf_printf(b, "%s%.3f", c ? "," : "", es_model_cap_share(m, c, 0));
    /* What each capability is doing as of the latest event: [what, since],
     * what 0 idle, 1 running Haskell code, 2 in GC. */
    ES_HTTPBUF_ADD(b, "],\"cap_now\":[");
    for (unsigned c = 0; c < m->ncaps && c < ES_MODEL_MAX_CAPS; c++) {
        const struct es_model_cap *cp = &m->caps[c];
        int what = cp->gc_since ? 2 : cp->running_since ? 1 : 0;
        uint64_t since = cp->gc_since ? cp->gc_since : cp->running_since;
        es_httpbuf_printf(b, "%s[%d,%llu]", c ? "," : "", what, (unsigned long long)since);
    }
    ES_HTTPBUF_ADD(b, "]}");
}

/* The part of timeline bucket i spent so far in a run or GC that began at
 * `since` (0: none) and has not ended: up to the latest event (m->now). */
static uint64_t open_ns(const struct es_model *m, uint64_t since, unsigned i) {
    uint64_t w = m->h.width, lo = (uint64_t)i * w, hi = lo + w;
    if (since == 0)
        return 0;
    uint64_t a = since > lo ? since : lo, b = m->now < hi ? m->now : hi;
    return b > a ? b - a : 0;
}

/* One census: [time, total, [label, bytes, ...]], the labels past the cap
 * summed as "other". */
static void census_json(struct es_httpbuf *out, const struct es_model_census_pt *p, bool comma) {
    es_httpbuf_printf(out, "%s[%llu,%llu,[", comma ? "," : "", (unsigned long long)p->time,
                      (unsigned long long)p->total);
    uint64_t other = 0;
    bool any = false;
    for (uint32_t k = 0; k < p->n; k++) {
        if (p->e[k].label >= ES_WEBJSON_MAX_LABELS - 1) {
            other += p->e[k].bytes;
            continue;
        }
        es_httpbuf_printf(out, "%s%u,%llu", any ? "," : "", p->e[k].label,
                          (unsigned long long)p->e[k].bytes);
        any = true;
    }
    if (other > 0)
        es_httpbuf_printf(out, "%s%u,%llu", any ? "," : "", (unsigned)(ES_WEBJSON_MAX_LABELS - 1),
                          (unsigned long long)other);
    ES_HTTPBUF_ADD(out, "]]");
}

/* The timeline from the first bucket the page lacks, and each
 * capability's shares of it; returns that first bucket. */
static unsigned timeline_json(struct es_httpbuf *out, const struct es_model *m,
                              struct es_webjson_cursor *cur) {
    const struct es_model_history *h = &m->h;
    /* The timeline: the last buckets are written again, since events of a
     * capability's block arrive late (up to a few seconds). */
    uint64_t again = 2 * NS_PER_S / h->width + 1;
    if (again < 4)
        again = 4;
    unsigned from = cur->tl_sent > h->n ? h->n : cur->tl_sent;
    from = from > again ? from - (unsigned)again : 0;
    if (cur->open_painted && cur->open_from < from)
        from = cur->open_from;
    es_httpbuf_printf(out, ",\"tl_from\":%u,\"tl\":[", from);
    for (unsigned i = from; i < h->n; i++) {
        const struct es_model_bucket *k = &h->tl[i];
        es_httpbuf_add(out, i > from ? ",[" : "[", i > from ? 2u : 1u);
        num_or_null(out, k->heap_size);
        ES_HTTPBUF_ADD(out, ",");
        num_or_null(out, k->heap_live);
        es_httpbuf_printf(out, ",%.0f,%llu,%u,%u]", k->allocated, (unsigned long long)k->gc_ns,
                          k->minor, k->major);
    }
    /* Capabilities: shares of each bucket running Haskell code and in GC. */
    ES_HTTPBUF_ADD(out, "],\"caps\":[");
    cur->open_painted = false;
    for (unsigned c = 0; c < m->ncaps && c < ES_MODEL_MAX_CAPS; c++) {
        es_httpbuf_add(out, c ? ",[" : "[", c ? 2 : 1);
        const uint64_t *v = h->cap_ns[c];
        const struct es_model_cap *cp = &m->caps[c];
        bool open = cp->running_since != 0 || cp->gc_since != 0;
        for (unsigned i = from; (v != NULL || open) && i < h->n; i++) {
            uint64_t run = (v ? v[2 * i] : 0) + open_ns(m, cp->running_since, i);
            uint64_t gc = (v ? v[2 * i + 1] : 0) + open_ns(m, cp->gc_since, i);
            es_httpbuf_printf(out, "%s%.3f,%.3f", i > from ? "," : "",
                              (double)run / (double)h->width, (double)gc / (double)h->width);
        }
        ES_HTTPBUF_ADD(out, "]");
        for (int k = 0; k < 2; k++) {
            uint64_t since = k ? cp->gc_since : cp->running_since;
            unsigned b = since ? (unsigned)(since / h->width) : 0;
            if (since != 0 && b < h->n && (!cur->open_painted || b < cur->open_from)) {
                cur->open_painted = true;
                cur->open_from = b;
            }
        }
    }
    cur->tl_sent = h->n;

    return from;
}

static void labels_json(struct es_httpbuf *out, const struct es_model *m,
                        struct es_webjson_cursor *cur) {
    /* Census labels, only ever added to; past ES_WEBJSON_MAX_LABELS - 1
     * they are one, "other" (the page draws the largest ten anyway). */
    size_t nlabels = m->nlabels;
    if (nlabels > ES_WEBJSON_MAX_LABELS)
        nlabels = ES_WEBJSON_MAX_LABELS;
    es_httpbuf_printf(out, "],\"labels_from\":%zu,\"labels\":[", cur->labels);
    for (size_t i = cur->labels; i < nlabels; i++) {
        if (i > cur->labels)
            ES_HTTPBUF_ADD(out, ",");
        es_httpbuf_json_str(out, i < ES_WEBJSON_MAX_LABELS - 1 ? es_model_label_name(m, (uint32_t)i)
                                                               : "(other labels)");
    }
    /* The labels as the census gives them (-hi: the info tables' addresses,
     * which `heap --hp` writes), beside the names above. */
    ES_HTTPBUF_ADD(out, "],\"label_ids\":[");
    for (size_t i = cur->labels; i < nlabels; i++) {
        if (i > cur->labels)
            ES_HTTPBUF_ADD(out, ",");
        es_httpbuf_json_str(out, i < ES_WEBJSON_MAX_LABELS - 1 ? es_model_label(m, (uint32_t)i)
                                                               : "(other labels)");
    }
    cur->labels = nlabels;
}

static void points_json(struct es_httpbuf *out, const struct es_model *m,
                        struct es_webjson_cursor *cur) {
    const struct es_model_history *h = &m->h;
    /* Censuses: [time, total, [label, bytes, label, bytes...]]. */
    es_httpbuf_printf(out, "],\"census_from\":%zu,\"census\":[", cur->censuses);
    for (size_t i = cur->censuses; i < h->ncensuses; i++)
        census_json(out, &h->censuses[i], i > cur->censuses);
    cur->censuses = h->ncensuses;

    /* Pauses: [start, duration, major]. */
    es_httpbuf_printf(out, "],\"pause_from\":%zu,\"pauses\":[", cur->pauses);
    for (size_t i = cur->pauses; i < h->npauses; i++)
        es_httpbuf_printf(out, "%s[%llu,%llu,%d]", i > cur->pauses ? "," : "",
                          (unsigned long long)h->pauses[i].start,
                          (unsigned long long)h->pauses[i].dur, h->pauses[i].major);
    cur->pauses = h->npauses;
}

static void notes_json(struct es_httpbuf *out, const struct es_model *m,
                       struct es_webjson_cursor *cur) {
    const struct es_model_history *h = &m->h;
    /* Markers and drop notices written since the cursor (those still kept). */
    ES_HTTPBUF_ADD(out, "],\"marks\":[");
    size_t kept = es_model_marks_kept(m);
    uint64_t first = h->marks_n - kept;
    bool any = false;
    for (size_t i = 0; i < kept; i++) {
        if (first + i < cur->marks)
            continue;
        const struct es_model_mark *k = es_model_mark_at(m, i);
        es_httpbuf_printf(out, "%s[%llu,", any ? "," : "", (unsigned long long)k->time);
        es_httpbuf_json_str(out, k->text);
        ES_HTTPBUF_ADD(out, "]");
        any = true;
    }
    cur->marks = h->marks_n;
    ES_HTTPBUF_ADD(out, "],\"drops\":[");
    kept = es_model_drops_kept(m);
    first = h->drops_n - kept;
    any = false;
    for (size_t i = 0; i < kept; i++) {
        if (first + i < cur->drops)
            continue;
        const struct es_model_drop *d = es_model_drop_at(m, i);
        es_httpbuf_printf(out, "%s[%llu,%llu,%.1f]", any ? "," : "", (unsigned long long)d->time,
                          (unsigned long long)d->chunks, d->mib);
        any = true;
    }
    cur->drops = h->drops_n;
}

/* One thread: [id, label, state, cap (-1 unknown), running s, created s
 * (-1 unknown), running since s (-1 not running)]. */
static void thread_row(struct es_httpbuf *out, const struct es_model *m,
                       const struct es_model_thread *th, bool comma) {
    es_httpbuf_printf(out, "%s[%u,", comma ? "," : "", th->id);
    es_httpbuf_json_str(out, th->label);
    ES_HTTPBUF_ADD(out, ",");
    es_httpbuf_json_str(out, es_model_thread_state(th));
    es_httpbuf_printf(out, ",%d,%.6f,%.6f,%.6f]", th->cap == ES_GLOBAL_CAP ? -1 : (int)th->cap,
                      (double)es_model_thread_run_ns(m, th) / 1e9,
                      th->created ? (double)th->created / 1e9 : -1.0,
                      th->run_since ? (double)th->run_since / 1e9 : -1.0);
}

/* The "threads" member (client/model/threads.c): counts, the threads with
 * the most running time, and the live count per timeline bucket from
 * bucket `from` on. */
static void threads_json(struct es_httpbuf *out, const struct es_model *m, unsigned from) {
    const struct es_model_thread *top[ES_WEBJSON_THREAD_ROWS];
    size_t n = es_model_threads_top(m, top, ES_WEBJSON_THREAD_ROWS);
    uint64_t shown_ns = 0;
    for (size_t i = 0; i < n; i++)
        shown_ns += es_model_thread_run_ns(m, top[i]);
    uint64_t all_ns = es_model_threads_run_ns(m), known = es_model_threads_known(m);
    es_httpbuf_printf(
        out,
        ",\"threads\":{\"created\":%llu,\"live\":%zu,\"finished\":%llu,"
        "\"kept\":%u,\"evicted\":%llu,\"untracked\":%llu,\"known\":%llu,\"run_s\":%.6f,"
        "\"more\":%llu,"
        "\"more_s\":%.6f,\"rows\":[",
        (unsigned long long)m->threads_created, es_model_threads(m),
        (unsigned long long)m->thr.finished, m->thr.kept, (unsigned long long)m->thr.evicted,
        (unsigned long long)m->thr.untracked, (unsigned long long)known, (double)all_ns / 1e9,
        (unsigned long long)(known > n ? known - n : 0),
        (double)(all_ns > shown_ns ? all_ns - shown_ns : 0) / 1e9);
    for (size_t i = 0; i < n; i++)
        thread_row(out, m, top[i], i > 0);
    ES_HTTPBUF_ADD(out, "],\"before_note\":");
    char before[160];
    es_model_threads_before_note(m, before, sizeof before);
    es_httpbuf_json_str(out, before);
    /* Live threads per timeline bucket from `from` on, as "tl" (null: no
     * thread yet). */
    const struct es_model_history *h = &m->h;
    es_httpbuf_printf(out, ",\"live_from\":%u,\"live_tl\":[", from);
    long live[ES_MODEL_TL_BUCKETS];
    unsigned to = h->n;
    if (to > ES_MODEL_TL_BUCKETS)
        to = ES_MODEL_TL_BUCKETS;
    if (from < to)
        es_model_threads_live(m, h->width, from, to, live);
    for (unsigned i = from; i < to; i++) {
        if (live[i - from] < 0)
            es_httpbuf_printf(out, "%snull", i > from ? "," : "");
        else
            es_httpbuf_printf(out, "%s%ld", i > from ? "," : "", live[i - from]);
    }
    ES_HTTPBUF_ADD(out, "]}");
}

/* The spans' summary per label (model.h, "Spans"), when `whole` or when
 * spans ended since *sig: ,"spans":{"ended", "unmatched", "dropped",
 * "labels":[[label, count, total_s, mean_s, p50_s, p90_s, p99_s, max_s,
 * failed, [lo_s, hi_s, [SPAN_BINS counts]]], ...]} (the last: the
 * durations' histogram, log-scale bins from the shortest to the longest;
 * null without one), "recent":[[label, cap, start_s, end_s, failed], ...]
 * (the latest ES_MODEL_SPAN_RECENT spans ended, oldest first; cap -1: none), the labels as the
 * model keeps them (later ones as "other"). */
#define SPAN_BINS 24

static void spans_json(struct es_httpbuf *out, const struct es_model *m, bool whole,
                       uint64_t *sig) {
    const struct es_model_spans *sp = &m->spans;
    const struct es_spans *x = sp->match;
    uint64_t ended = x ? x->spans : 0, unmatched = x ? x->unmatched : 0;
    if (ended + unmatched == 0 || (!whole && *sig == ended + unmatched))
        return;
    *sig = ended + unmatched;
    es_httpbuf_printf(out,
                      ",\"spans\":{\"ended\":%llu,\"unmatched\":%llu,\"dropped\":%llu,"
                      "\"labels\":[",
                      (unsigned long long)ended, (unsigned long long)unmatched,
                      (unsigned long long)(x->dropped + x->abandoned));
    const struct es_model_span_label *l;
    for (size_t i = 0; (l = es_model_span_label_at(m, i)) != NULL; i++) {
        if (i)
            ES_HTTPBUF_ADD(out, ",");
        ES_HTTPBUF_ADD(out, "[");
        es_httpbuf_json_str(out, l->label);
        es_httpbuf_printf(out, ",%llu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%llu,",
                          (unsigned long long)l->count, l->sum_s, l->sum_s / (double)l->count,
                          es_model_span_quantile(l, 0.5), es_model_span_quantile(l, 0.9),
                          es_model_span_quantile(l, 0.99), (double)l->max_ns / 1e9,
                          (unsigned long long)l->failed);
        uint64_t bins[SPAN_BINS];
        double lo, hi;
        if (es_model_span_bins(l, SPAN_BINS, &lo, &hi, bins)) {
            es_httpbuf_printf(out, "[%.9g,%.9g,[", lo, hi);
            for (unsigned k = 0; k < SPAN_BINS; k++)
                es_httpbuf_printf(out, "%s%llu", k ? "," : "", (unsigned long long)bins[k]);
            ES_HTTPBUF_ADD(out, "]]]");
        } else {
            ES_HTTPBUF_ADD(out, "null]");
        }
    }
    ES_HTTPBUF_ADD(out, "],\"recent\":[");
    for (size_t r = 0; sp->recent != NULL && r < sp->recent_n; r++) {
        size_t at =
            (sp->recent_next + ES_MODEL_SPAN_RECENT - sp->recent_n + r) % ES_MODEL_SPAN_RECENT;
        const struct es_model_span_recent *y = &sp->recent[at];
        l = es_model_span_label_at(m, y->label);
        if (r)
            ES_HTTPBUF_ADD(out, ",");
        ES_HTTPBUF_ADD(out, "[");
        es_httpbuf_json_str(out, l ? l->label : "other");
        es_httpbuf_printf(out, ",%d,%.9f,%.9f,%d]", y->cap, (double)y->start / 1e9,
                          (double)y->end / 1e9, y->failed ? 1 : 0);
    }
    ES_HTTPBUF_ADD(out, "]}");
}

void es_webjson_state(struct es_httpbuf *out, const struct es_model *m,
                      const struct es_webjson_status *st, struct es_webjson_cursor *cur) {
    const struct es_model_history *h = &m->h;
    struct es_webjson_cursor none = {0};
    bool full = cur == NULL || !cur->started || cur->generation != h->generation;
    if (cur == NULL)
        cur = &none;
    if (full) {
        memset(cur, 0, sizeof *cur);
        cur->started = true;
        cur->generation = h->generation;
    }
    es_httpbuf_printf(out, "{\"full\":%s,", full ? "true" : "false");
    info(out, m, st);
    unsigned from = timeline_json(out, m, cur);
    labels_json(out, m, cur);
    points_json(out, m, cur);
    notes_json(out, m, cur);
    ES_HTTPBUF_ADD(out, "]");
    es_websparks_json(out, m, full, &cur->sparks_sig);
    es_webflame_json(out, st->flame, full, &cur->flame_version);
    spans_json(out, m, full, &cur->spans_sig);
    threads_json(out, m, from);
    ES_HTTPBUF_ADD(out, "}");
}
