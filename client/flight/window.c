/* SPDX-License-Identifier: BSD-3-Clause */
#include "window.h"

#include "format/es_notice_text.h"
#include "source/units.h"

#include <stdio.h>
#include <string.h>

int es_rwindow_setup(struct es_rwindow *w, const char *since) {
    if (since != NULL && (!es_units_duration(since, &w->since_ns) || w->since_ns == 0)) {
        fprintf(stderr,
                "eventlog-socket record: --since %s: not a duration (" ES_UNITS_GRAMMAR ")\n",
                since);
        return -1;
    }
    w->asked = w->asked || since != NULL || w->snapshot;
    return 0;
}

/* A block of the window that ended before --since's cut, at the head of
 * the window: left out, with the ones before it. Returns whether the
 * recording may begin (the first block kept, or the window's end). */
static bool trim(struct es_rwindow *w, const struct es_conn *c, const struct es_event *ev,
                 uint64_t offset) {
    const struct es_conn_info *in = &c->info;
    if (w->since_ns == 0 || offset >= in->window_end)
        return true;
    if (ev->type != ES_EVENT_BLOCK_MARKER || ev->payload_len < 12 || offset < in->window_start)
        return false;
    double cut = in->window_to_s * 1e9 - (double)w->since_ns;
    if ((double)es_be64(ev->payload + 4) >= cut)
        return true;
    w->skip_to = offset + es_be32(ev->payload);
    w->blocks_left_out++;
    return w->skip_to >= in->window_end;
}

/* Whether the program refused because its window is still empty. */
static bool empty(const struct es_conn *c) {
    return c->info.window < 0 && strncmp(c->info.window_why, ES_NOTICE_EMPTY_WORDS,
                                         sizeof ES_NOTICE_EMPTY_WORDS - 1) == 0;
}

static enum es_rwindow_says decide(struct es_rwindow *w, const struct es_conn *c,
                                   const struct es_event *ev, uint64_t offset,
                                   struct es_blocks *b) {
    if (!w->asked || w->decided)
        return ES_RWINDOW_GOING;
    const struct es_conn_info *in = &c->info;
    if (in->window < 0 && !w->snapshot && empty(c)) {
        /* The program streams on after its refusal (protocol.md 1.3). */
        w->decided = w->live_instead = true;
        return ES_RWINDOW_LIVE;
    }
    if (in->window < 0)
        return ES_RWINDOW_REFUSED;
    if (in->window == 0 || !trim(w, c, ev, offset))
        return ES_RWINDOW_WAIT;
    w->decided = true;
    if (w->skip_to > in->window_start)
        es_blocks_skip(b, in->window_start, w->skip_to);
    return ES_RWINDOW_BEGIN;
}

/* --snapshot: count an event the file gets, after the decision on it (so
 * that the blocks --since leaves out are known): the definitions and the
 * window notice before the window, the window's blocks after those left
 * out, nothing after the window's end. */
static void count(struct es_rwindow *w, const struct es_conn *c, const struct es_event *ev,
                  uint64_t offset) {
    const struct es_conn_info *in = &c->info;
    if (in->window < 0 ||
        (in->window == 1 &&
         (offset >= in->window_end || (offset >= in->window_start && offset < w->skip_to))))
        return;
    if (ev->time > w->last_ns)
        w->last_ns = ev->time;
    if (ev->type == ES_EVENT_BLOCK_MARKER)
        return;
    if (w->events == 0 || ev->time < w->first_ns)
        w->first_ns = ev->time;
    w->events++;
}

enum es_rwindow_says es_rwindow_event(struct es_rwindow *w, const struct es_conn *c,
                                      const struct es_event *ev, uint64_t offset,
                                      struct es_blocks *b) {
    enum es_rwindow_says say = decide(w, c, ev, offset, b);
    if (w->snapshot)
        count(w, c, ev, offset);
    return say;
}

size_t es_rwindow_clip(const struct es_rwindow *w, const struct es_conn *c, uint64_t at, size_t n) {
    const struct es_conn_info *in = &c->info;
    if (!w->snapshot || in->window != 1)
        return n;
    if (at >= in->window_end)
        return 0;
    return in->window_end - at < n ? (size_t)(in->window_end - at) : n;
}

bool es_rwindow_done(const struct es_rwindow *w, const struct es_conn *c, uint64_t at) {
    return w->snapshot && c->info.window == 1 && at >= c->info.window_end;
}

/* An empty window on GHC 9.0: why, and what to do instead. */
static void ghc90(struct es_rwindow *w) {
    if (w->live_instead)
        snprintf(w->why, sizeof w->why,
                 "the window is empty: the program has events, but GHC 9.0's RTS hands them "
                 "over only in 2 MiB buffers and at exit, and none has come yet; recording the "
                 "live stream instead (it gets them as each buffer fills and at the exit)");
    else
        snprintf(w->why, sizeof w->why,
                 "no window yet: the program has events, but GHC 9.0's RTS hands them over only "
                 "in 2 MiB buffers and at exit, so its window stays empty until the first "
                 "buffer fills; run it with GHC 9.2 or later (which flushes), or record the "
                 "live stream (record ADDR, or record ADDR --window, which records it after an "
                 "empty window)");
}

const char *es_rwindow_why(struct es_rwindow *w, const struct es_conn *c, double waited) {
    if (waited > 0)
        snprintf(w->why, sizeof w->why,
                 "no answer to the window request within %g s (the program's eventlog-socket "
                 "predates the flight recorder, or the machine is busy: --connect-timeout "
                 "SECONDS waits longer)",
                 waited);
    else if (empty(c) && es_header_no_flush(&c->stream.header))
        ghc90(w);
    else if (w->live_instead)
        snprintf(w->why, sizeof w->why, "%s; recording the live stream instead",
                 c->info.window_why);
    else if (strstr(c->info.window_why, "first thing") != NULL)
        /* The request reaches the program with the connection; only a
         * command held up for longer than the program holds a new stream
         * (500 ms) asks too late. */
        snprintf(w->why, sizeof w->why,
                 "no window: the request reached the program after this connection's stream "
                 "had begun (a loaded machine?); try again");
    else
        snprintf(w->why, sizeof w->why, "no window: the program says: %s", c->info.window_why);
    return w->why;
}

const char *es_rwindow_summary(struct es_rwindow *w, const struct es_conn_info *in) {
    double from = w->events ? (double)w->first_ns / 1e9 : in->window_from_s;
    double to = w->events ? (double)w->last_ns / 1e9 : in->window_to_s;
    snprintf(w->why, sizeof w->why,
             "the program's window, %.3f s to %.3f s of its time%s; the program goes on", from, to,
             w->blocks_left_out ? " (older blocks left out)" : "");
    return w->why;
}
