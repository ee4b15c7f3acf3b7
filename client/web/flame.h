/* SPDX-License-Identifier: BSD-3-Clause */
/* The time profile on the web page: the cost-centre samples of the stream
 * (client/profile/prof.h) kept twice, for the whole run and for its last
 * ES_WEBFLAME_RECENT_S seconds of samples, and written as the flame graph's
 * trees into the page's JSON (client/web/json.h):
 * "flame":{samples, tick_ms, recent_s, all:TREE, recent:TREE}, TREE as
 * es_profwrite_tree writes it (client/profile/write.h). Written in a whole
 * state, and in a delta when es_webflame_refresh saw new samples since it
 * was last written; nothing while the stream has no samples (the page
 * then shows no flame graph). `serve` refreshes every few seconds: a tree
 * is the size of the program's distinct stacks, too much for every delta.
 * Pure; the model's thread (serve's loop thread, report's only thread). */
#ifndef ES_WEBFLAME_H
#define ES_WEBFLAME_H

#include "http/buf.h"
#include "profile/prof.h"

#include <stdbool.h>
#include <stdint.h>

/* The recent tree's span of program time. */
#define ES_WEBFLAME_RECENT_S 10
/* Nodes under this share of the samples are left out of a tree (their time
 * stays in their caller's): less than a pixel on any screen. */
#define ES_WEBFLAME_LEAST 20000

struct es_webflame {
    struct es_prof all, recent;
    uint64_t version;   /* bumped by es_webflame_refresh when samples came */
    uint64_t refreshed; /* all.samples + all.outside at the last refresh */
};

void es_webflame_init(struct es_webflame *f);
void es_webflame_destroy(struct es_webflame *f);

/* Read an event of the stream (those not of the time profile are ignored). */
void es_webflame_event(struct es_webflame *f, const struct es_event *ev);

/* Mark the trees as changed if samples came since the last call. */
void es_webflame_refresh(struct es_webflame *f);

/* Append ,"flame":{...} when there are samples and `whole` or the trees
 * changed since *version (the version written, updated). */
void es_webflame_json(struct es_httpbuf *out, const struct es_webflame *f, bool whole,
                      uint64_t *version);

#endif
