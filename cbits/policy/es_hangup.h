/* SPDX-License-Identifier: BSD-3-Clause */
/* Clients that shut down their writing side (ES_CLIENT_READ_EOF): each
 * may still be reading (`nc` once its input ends) or be gone for good,
 * which the kernel tells only when asked (es_client_check_peer). A client
 * is asked when its end-of-file arrives; those still there are asked
 * again every ES_HANGUP_CHECK_MS while any is connected, and all of them
 * at once when a connection would be refused for the client limit, so
 * that connections already gone never hold a client's place. Loop thread
 * only. */
#ifndef ES_HANGUP_H
#define ES_HANGUP_H

#include "delivery/es_fanout.h"

#include <stdbool.h>
#include <uv.h>

#define ES_HANGUP_CHECK_MS 1000
/* At the limit, a TCP client is sent an empty block again after this
 * long rather than ES_CLIENT_PROBE_MS. */
#define ES_HANGUP_ROOM_PROBE_MS 1000

struct es_hangup {
    uv_timer_t timer;
    struct es_fanout *fan;
    bool open, armed;
};

void es_hangup_open(struct es_hangup *h, uv_loop_t *loop, struct es_fanout *fan);
void es_hangup_close(struct es_hangup *h, uv_close_cb cb);

/* A client shut down its writing side and is still there: look again. */
void es_hangup_watch(struct es_hangup *h);

/* The connection about to be admitted would find the client limit
 * reached: close the clients whose peer is gone. Returns the clients
 * still connected (closing ones not counted). */
unsigned es_hangup_make_room(struct es_hangup *h);

#endif
