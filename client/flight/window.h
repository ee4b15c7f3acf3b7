/* SPDX-License-Identifier: BSD-3-Clause */
/* `record --window`, `--since D` and `--snapshot`: the recording's side of
 * the program's window (protocol.md, command 0x08). The connection asks
 * for it as its first bytes (es_conn_options.window); this decides, event
 * by event, when the recording may begin: at once when the window came
 * (after leaving out, for --since, the window's first blocks up to the
 * first one that ended within D of the window's end), never when it was
 * refused, and once more on a new connection when it was asked too late.
 * A window that is still empty (on GHC 9.0 until the RTS hands over its
 * first 2 MiB buffer) is "the window, then the live stream" with nothing
 * before the live stream: --window and --since record that. For
 * --snapshot it says where the recording stops (at the window's last
 * byte) and what the file holds: its first and last event times and its
 * events, as a reader of the file sees them. Pure, on the recording's
 * loop thread. */
#ifndef ES_FLIGHT_WINDOW_H
#define ES_FLIGHT_WINDOW_H

#include "source/blocks.h"
#include "source/conn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct es_rwindow {
    bool asked;        /* --window, --since or --snapshot */
    uint64_t since_ns; /* --since (0: the whole window) */
    bool snapshot;     /* --snapshot: the window only */
    bool decided;      /* the recording may begin */
    uint64_t skip_to;  /* --since: the window's bytes before this are left out */
    uint64_t blocks_left_out;
    bool live_instead; /* the window was empty: the live stream is recorded */
    /* --snapshot: the events the file gets (block markers aside, as a
     * reader counts them), their earliest time, and the latest time of any
     * of them or of their block markers (the cut notice's time). */
    uint64_t events, first_ns, last_ns;
    char why[600];
};

enum es_rwindow_says {
    ES_RWINDOW_WAIT,    /* no answer yet */
    ES_RWINDOW_BEGIN,   /* decided just now: the recording begins (skips are set) */
    ES_RWINDOW_GOING,   /* decided earlier */
    ES_RWINDOW_REFUSED, /* no window: es_rwindow_why says why */
    ES_RWINDOW_LIVE,    /* decided just now: the window was empty, the recording
                         * begins with the live stream (es_rwindow_why says so) */
};

/* --window, --since `since` (NULL: not given) and --snapshot into `w`.
 * Returns 0, or -1 after a message on stderr. */
int es_rwindow_setup(struct es_rwindow *w, const char *since);

/* After an event at stream offset `offset` (the reader's callbacks): what
 * to do now. Sets the skip of --since in `b` when it decides. */
enum es_rwindow_says es_rwindow_event(struct es_rwindow *w, const struct es_conn *c,
                                      const struct es_event *ev, uint64_t offset,
                                      struct es_blocks *b);

/* Why there is no window, for the user: the program's refusal, or no
 * answer within `waited` seconds (when not 0); after ES_RWINDOW_LIVE, that
 * the live stream is recorded instead. Valid until the next call. */
const char *es_rwindow_why(struct es_rwindow *w, const struct es_conn *c, double waited);

/* What a snapshot holds, for the recording's last line: the span of the
 * file's events (the window notice's times when none was counted). Valid
 * until the next call. */
const char *es_rwindow_summary(struct es_rwindow *w, const struct es_conn_info *in);

/* --snapshot: how many of the `n` bytes received from stream offset
 * `at` belong to the window (all of them until the answer came). */
size_t es_rwindow_clip(const struct es_rwindow *w, const struct es_conn *c, uint64_t at, size_t n);

/* --snapshot: whether every byte of the window has arrived by stream
 * offset `at`. */
bool es_rwindow_done(const struct es_rwindow *w, const struct es_conn *c, uint64_t at);

#endif
