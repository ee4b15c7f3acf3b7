/* SPDX-License-Identifier: BSD-3-Clause */
/* A source's stream half (client/source/conn.c) in its two ways of handing events
 * on, on the recorded fixtures: the
 * reader calling the consumer itself (es_conn_callbacks.on_stream_event,
 * the source seeing the types it notes through the reader's tap) and the
 * hop through the source (on_event) leave the same struct es_conn_info
 * (program, arguments, pid, GHC, heap profile, samples, notices, events,
 * latest time) and give the consumer the same events in the same order,
 * in pieces of any size, skimming or not. Argument: the fixture directory. */
#include "source/conn.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
    uint64_t events, skipped, sum; /* sum: of type and time, in order */
    bool header;
};

static void mix(struct seen *s, const struct es_event *ev) {
    s->events++;
    s->sum = s->sum * 1000003u + ev->type * 31u + ev->time;
}

static void on_header(struct es_conn *c, void *ctx) {
    (void)c;
    ((struct seen *)ctx)->header = true;
}

static void hop_event(struct es_conn *c, const struct es_event *ev, uint64_t off, void *ctx) {
    (void)c;
    (void)off;
    mix(ctx, ev);
}

static void hop_skip(struct es_conn *c, const struct es_stream_skip *run, void *ctx) {
    (void)c;
    ((struct seen *)ctx)->skipped += run->events;
}

static void direct_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    mix(ctx, ev);
}

static void direct_skip(const struct es_stream_skip *run, void *ctx) {
    ((struct seen *)ctx)->skipped += run->events;
}

/* The types a skimming consumer wants: the GC's, nothing the source notes. */
static bool gc_only[ES_MAX_EVENT_TYPES] = {[ES_EVENT_GC_START] = true, [ES_EVENT_GC_END] = true};
static const uint64_t everywhere[2] = {0, UINT64_MAX};

static void run(const uint8_t *buf, size_t len, size_t piece, bool direct, bool skim,
                struct es_conn_info *info, struct seen *seen) {
    struct es_conn_callbacks cb = {.on_header = on_header, .ctx = seen};
    if (direct) {
        cb.on_stream_event = direct_event;
        cb.on_stream_skip = skim ? direct_skip : NULL;
    } else {
        cb.on_event = hop_event;
        cb.on_skip = skim ? hop_skip : NULL;
    }
    if (skim) {
        cb.want = gc_only;
        cb.window = everywhere;
    }
    struct es_conn *c = malloc(sizeof *c);
    es_conn_init_parser(c, &cb);
    for (size_t pos = 0; pos < len; pos += piece)
        if (es_conn_feed(c, buf + pos, len - pos < piece ? len - pos : piece) != 0)
            break;
    *info = c->info;
    es_conn_destroy_parser(c);
    free(c);
}

static bool same_info(const struct es_conn_info *a, const struct es_conn_info *b) {
    return strcmp(a->program, b->program) == 0 && strcmp(a->args, b->args) == 0 &&
           a->have_args == b->have_args && a->pid == b->pid && a->have_pid == b->have_pid &&
           strcmp(a->rts_ident, b->rts_ident) == 0 && a->heap_prof == b->heap_prof &&
           a->heap_period_ns == b->heap_period_ns && a->heap_breakdown == b->heap_breakdown &&
           a->heap_samples == b->heap_samples && a->last_sample_time == b->last_sample_time &&
           a->drop_notices == b->drop_notices && a->dropped_chunks == b->dropped_chunks &&
           strcmp(a->lossless_notice, b->lossless_notice) == 0 &&
           a->lossless_notices == b->lossless_notices && a->bytes == b->bytes &&
           a->events == b->events && a->latest_time == b->latest_time;
}

static void compare(const char *name, const uint8_t *buf, size_t len) {
    static const size_t pieces[] = {1, 13, 4096, (size_t)1 << 30};
    int good = 0, skimmed = 0;
    struct es_conn_info ref;
    struct seen ref_seen = {0};
    run(buf, len, len, false, false, &ref, &ref_seen);
    for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
        for (int skim = 0; skim < 2; skim++) {
            struct es_conn_info hop, direct;
            struct seen hs = {0}, ds = {0};
            run(buf, len, pieces[i], false, skim, &hop, &hs);
            run(buf, len, pieces[i], true, skim, &direct, &ds);
            bool ok_info = same_info(&hop, &direct) && same_info(&ref, &direct);
            bool ok_events = hs.events == ds.events && hs.sum == ds.sum &&
                             hs.skipped == ds.skipped && hs.header && ds.header &&
                             ds.events + ds.skipped == ref_seen.events;
            if (!ok_info || !ok_events)
                printf("# %s: pieces of %zu, %s: info %s, events %llu/%llu skipped %llu/%llu\n",
                       name, pieces[i], skim ? "skimming" : "every event",
                       ok_info ? "same" : "differs", (unsigned long long)hs.events,
                       (unsigned long long)ds.events, (unsigned long long)hs.skipped,
                       (unsigned long long)ds.skipped);
            good += ok_info && ok_events;
            skimmed += skim && ds.skipped > 0;
        }
    ok(good == 8 && skimmed == 4 && ref.events > 0 && ref.have_args,
       "%s: the reader calling the consumer itself and the hop through the source: the same "
       "info (%s, %llu events, latest %llu ns) and events, in pieces of 1 to all, skimming or not",
       name, ref.program, (unsigned long long)ref.events, (unsigned long long)ref.latest_time);
}

static void check_fixture(const char *path) {
    size_t len;
    uint8_t *buf = tap_read_file(path, &len);
    if (buf != NULL)
        compare(path, buf, len);
    free(buf);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/fixtures";
    tap_each_fixture(dir, check_fixture);
    return tap_done();
}
