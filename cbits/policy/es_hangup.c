/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_hangup.h"

#include "delivery/es_client.h"

#include <assert.h>

/* Ask every client that shut down its writing side again; returns how
 * many of them are still there. */
static unsigned check_all(struct es_hangup *h, uint64_t probe_gap_ms) {
    uint64_t now = uv_now(h->timer.loop);
    unsigned left = 0;
    es_fanout_each(h->fan, c, next) {
        if (es_client_is(c, ES_CLIENT_READ_EOF) && !es_client_check_peer(c, now, probe_gap_ms) &&
            !es_client_is(c, ES_CLIENT_CLOSING))
            left++;
    }
    return left;
}

static void on_check(uv_timer_t *t) {
    struct es_hangup *h = t->data;
    assert(h->open && h->armed); /* it fires only when armed */
    h->armed = false;
    if (check_all(h, ES_CLIENT_PROBE_MS) > 0)
        es_hangup_watch(h);
}

void es_hangup_open(struct es_hangup *h, uv_loop_t *loop, struct es_fanout *fan) {
    *h = (struct es_hangup){.fan = fan, .open = true};
    uv_timer_init(loop, &h->timer); /* cannot fail */
    h->timer.data = h;
}

void es_hangup_close(struct es_hangup *h, uv_close_cb cb) {
    if (!h->open)
        return;
    h->open = false;
    uv_close((uv_handle_t *)&h->timer, cb);
}

void es_hangup_watch(struct es_hangup *h) {
    if (!h->open || h->armed)
        return;
    h->armed = true;
    uv_timer_start(&h->timer, on_check, ES_HANGUP_CHECK_MS, 0);
}

unsigned es_hangup_make_room(struct es_hangup *h) {
    check_all(h, ES_HANGUP_ROOM_PROBE_MS);
    unsigned n = 0;
    es_fanout_each(h->fan, c, next) n += !es_client_is(c, ES_CLIENT_CLOSING);
    return n;
}
