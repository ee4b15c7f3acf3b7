/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_hold.h"

#include <assert.h>

int es_hold_open(struct es_hold *h, uv_loop_t *loop, struct es_fanout *fan) {
    h->fan = fan;
    h->armed = false;
    h->timer.data = h;
    int r = uv_timer_init(loop, &h->timer);
    h->open = r == 0;
    return r;
}

void es_hold_close(struct es_hold *h, uv_close_cb cb) {
    if (!h->open)
        return;
    h->open = false;
    uv_close((uv_handle_t *)&h->timer, cb);
}

/* End the holds that are due; come back for the next one. */
static void on_timer(uv_timer_t *t) {
    struct es_hold *h = t->data;
    uint64_t now = uv_now(t->loop), next = 0;
    assert(h->open && h->armed); /* it fires only when armed */
    h->armed = false;
    es_fanout_each(h->fan, c, nxt) {
        uint64_t left = es_client_end_hold(c, now, false);
        if (left > 0 && (next == 0 || left < next))
            next = left;
    }
    if (next > 0) {
        uv_timer_start(&h->timer, on_timer, next, 0);
        h->armed = true;
    }
}

void es_hold_arm(struct es_hold *h) {
    /* Every hold lasts as long: one armed for an earlier client ends
     * first, and then looks again. */
    if (h->open && !h->armed) {
        uv_timer_start(&h->timer, on_timer, ES_HOLD_MS, 0);
        h->armed = true;
    }
}
