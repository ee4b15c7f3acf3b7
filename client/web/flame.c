/* SPDX-License-Identifier: BSD-3-Clause */
/* The page's flame graph trees (flame.h). */
#include "flame.h"

#include "profile/write.h"

#include <string.h>

void es_webflame_init(struct es_webflame *f) {
    memset(f, 0, sizeof *f);
    es_prof_init(&f->all);
    es_prof_init(&f->recent);
    f->recent.tail_ns = (uint64_t)ES_WEBFLAME_RECENT_S * 1000000000u;
}

void es_webflame_destroy(struct es_webflame *f) {
    es_prof_destroy(&f->all);
    es_prof_destroy(&f->recent);
}

void es_webflame_event(struct es_webflame *f, const struct es_event *ev) {
    switch (ev->type) {
    case ES_EVENT_HEAP_PROF_COST_CENTRE:
    case ES_EVENT_PROF_SAMPLE_COST_CENTRE:
    case ES_EVENT_PROF_BEGIN:
        es_prof_event(&f->all, ev);
        es_prof_event(&f->recent, ev);
        break;
    default:
        break;
    }
}

void es_webflame_refresh(struct es_webflame *f) {
    uint64_t seen = f->all.samples + f->all.outside;
    if (seen != f->refreshed) {
        f->refreshed = seen;
        f->version++;
    }
}

static void tree(struct es_httpbuf *out, const struct es_prof *p) {
    uint64_t least = p->samples / ES_WEBFLAME_LEAST;
    if (es_profwrite_tree(out, p, least) != 0)
        out->oom = true; /* the caller's buffer: the whole message is dropped */
}

void es_webflame_json(struct es_httpbuf *out, const struct es_webflame *f, bool whole,
                      uint64_t *version) {
    if (f == NULL || f->all.samples == 0 || (!whole && *version == f->version))
        return;
    *version = f->version;
    es_httpbuf_printf(out,
                      ",\"flame\":{\"samples\":%llu,\"recent_samples\":%llu,\"tick_ms\":%.3f,"
                      "\"recent_s\":%d,\"oom\":%s,\"all\":",
                      (unsigned long long)f->all.samples, (unsigned long long)f->recent.samples,
                      (double)f->all.tick_ns / 1e6, ES_WEBFLAME_RECENT_S,
                      f->all.oom || f->recent.oom ? "true" : "false");
    tree(out, &f->all);
    ES_HTTPBUF_ADD(out, ",\"recent\":");
    tree(out, &f->recent);
    ES_HTTPBUF_ADD(out, "}");
}
