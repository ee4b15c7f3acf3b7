/* SPDX-License-Identifier: BSD-3-Clause */
/* The screen of `eventlog-socket top` (client/top/draw.c): everything it
 * shows comes in one es_top_view, filled by the loop (client/top/top.c) before
 * each redraw; the model is read, never changed. Loop thread only. */
#ifndef ES_TOP_DRAW_H
#define ES_TOP_DRAW_H

#include "model/model.h"

#include <stdbool.h>
#include <stdint.h>

/* Where the connection stands, for the status line. */
enum es_top_state { ES_TOP_CONNECTING, ES_TOP_WAITING, ES_TOP_LIVE, ES_TOP_EXITED, ES_TOP_LOST };

struct es_top_view {
    const struct es_model *model;
    const char *program; /* the server's program from /proc until the stream names it, or "" */
    uint32_t pid;        /* the server's pid from the socket until the stream names it, or 0 */
    const char *source;  /* the connection's name */
    double bytes_s;      /* bytes per second arriving, smoothed */
    enum es_top_state state;
    bool retry;       /* --retry */
    bool prof_paused; /* the user paused heap profiling (p) */
    bool utf8;        /* the terminal takes UTF-8 block characters */
    const char *lost; /* why the connection was lost (state LOST) */
    const char *said; /* the last key's effect for the bottom line, or NULL: the keys */
    /* Rewrite every cell, not only those that changed: what another
     * program wrote to the terminal (a background job's lines, which
     * scroll it) goes, and so do cells of an older frame left where the
     * lines scrolled to. */
    bool repaint;
};

/* Erase and draw the whole screen (a note instead when it is too small). */
void es_top_draw(const struct es_top_view *v);

#endif
