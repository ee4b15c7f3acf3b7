#include "window.h"

#include <string.h>

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

enum es_rwindow_says es_rwindow_event(struct es_rwindow *w, const struct es_conn *c,
                                      const struct es_event *ev, uint64_t offset,
                                      struct es_blocks *b) {
    if (!w->asked || w->decided)
        return ES_RWINDOW_GOING;
    const struct es_conn_info *in = &c->info;
    if (in->window < 0)
        return strstr(in->window_why, "first thing") != NULL ? ES_RWINDOW_AGAIN
                                                             : ES_RWINDOW_REFUSED;
    if (in->window == 0 || !trim(w, c, ev, offset))
        return ES_RWINDOW_WAIT;
    w->decided = true;
    if (w->skip_to > in->window_start)
        es_blocks_skip(b, in->window_start, w->skip_to);
    return ES_RWINDOW_BEGIN;
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
