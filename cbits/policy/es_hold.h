/* SPDX-License-Identifier: BSD-3-Clause */
/* The hold on a new client's stream in a program that keeps a window
 * (es_window.h): such a client gets its header at once and the rest only
 * once it has written something (a window request is answered first), has
 * shut its writing side, or ES_HOLD_MS have passed (es_client.h,
 * ES_CLIENT_HELD), so that a client that asks for the window as the
 * first thing it sends gets one stream from the window's start, and one
 * that never writes (nc) starts a moment later. This module owns the timer
 * that ends the holds that are due. Loop thread only. */
#ifndef ES_HOLD_H
#define ES_HOLD_H

#include "delivery/es_fanout.h"

#include <stdbool.h>
#include <uv.h>

/* How long a client's stream is held at most, in milliseconds. */
#define ES_HOLD_MS 500

struct es_hold {
    uv_timer_t timer;
    struct es_fanout *fan;
    bool open;
    bool armed;
};

/* Create the timer on the loop (before it runs). */
int es_hold_open(struct es_hold *h, uv_loop_t *loop, struct es_fanout *fan);
void es_hold_close(struct es_hold *h, uv_close_cb cb);

/* A client has started held: end its hold when it is due. */
void es_hold_arm(struct es_hold *h);

#endif
