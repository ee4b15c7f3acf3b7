/* SPDX-License-Identifier: BSD-3-Clause */
/* The web view's data: the model (client/model/model.h) written out as one JSON
 * object, for the page that `eventlog-socket serve` pushes to browsers and
 * that `eventlog-socket report` inlines into a file. A cursor remembers
 * what was already written, so `serve` sends a browser the whole state once
 * and then only what changed (a "delta"): new censuses, pauses, markers,
 * drop notices and labels, the last buckets of the timeline, which may
 * still change, and the sparks and the flame graph's trees (flame.h) when
 * they changed. When the model downsampled its history the cursor starts
 * over with a whole state. The page (client/web/app.js) reads both forms.
 *
 * Strings are escaped so that the JSON can sit inside an HTML <script>
 * element ('<', '>' and '&' as \u escapes). Pure: no I/O; used by the
 * thread that owns the model (the loop thread of serve, report's only
 * thread). */
#ifndef ES_WEBJSON_H
#define ES_WEBJSON_H

#include "model/model.h"
#include "http/buf.h"
#include "flame.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Census labels the page gets at most: the rest are summed as one "other". */
#define ES_WEBJSON_MAX_LABELS 4096

/* Threads the page gets at most, most running time first; the rest are
 * counted. */
#define ES_WEBJSON_THREAD_ROWS 200

/* What the page shows about the connection, besides the model. */
struct es_webjson_status {
    const char *state;  /* "connecting", "connected", "exited", "lost", "file" */
    const char *source; /* the address or file */
    const char *error;  /* why the connection was lost, "" */
    uint64_t bytes;     /* bytes received */
    bool recording;     /* a recording can be downloaded */
    bool can_control;   /* the buttons can send control frames */
    /* The program's name and pid when the stream has not told them yet
     * (GHC 9.0 sends them at exit): from the server's process, or ""/0. */
    const char *program;
    uint32_t pid;
    unsigned run; /* serve --retry: the run shown, 1 for the first (0: none yet) */
    bool retry;   /* serve --retry: a next run will be shown when it starts */
    /* The time profile's trees (client/web/flame.h), NULL: none kept. */
    const struct es_webflame *flame;
};

struct es_webjson_cursor {
    bool started;
    uint64_t generation; /* the model's history generation when written */
    unsigned tl_sent;    /* timeline buckets written */
    size_t labels, censuses, pauses;
    uint64_t marks, drops;
    /* Runs and GCs in progress were painted from this bucket on (their
     * figures there were partial), so the next message writes them again. */
    bool open_painted;
    unsigned open_from;
    /* The sparks as last written (client/web/sparks.h): written again only
     * when they changed. */
    uint64_t sparks_sig;
    uint64_t flame_version; /* the flame graph's trees as last written */
    uint64_t spans_sig;     /* the spans' summary as last written (its spans) */
};

/* Append the state to `out`: everything when `cur` is NULL, has not
 * started, or the model's history was downsampled since; otherwise what
 * changed since the cursor. The cursor (if any) then covers what was
 * written. */
void es_webjson_state(struct es_httpbuf *out, const struct es_model *m,
                      const struct es_webjson_status *st, struct es_webjson_cursor *cur);

#endif
