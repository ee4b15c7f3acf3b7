/* The end of the stream: once the server stops (the program exits), every
 * client gets the rest of its stream and the end marker, but exit waits at
 * most the linger time for them, and not at all for a client that has
 * stopped reading (es_client_stalled: one that never read anything after
 * ES_EXIT_NEVER_READ_MS without progress, one that did after half the
 * linger time), which is closed without the rest, with a log line
 * (rate-limited). Loop thread only. */
#ifndef ES_LINGER_H
#define ES_LINGER_H

#include "es_fanout.h"
#include "base/es_log.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_linger {
    uv_loop_t *loop;
    struct es_fanout *fan;
    unsigned linger_ms;
    uv_timer_t linger; /* closes every client still there */
    uv_timer_t check;  /* closes clients that stopped reading */
    bool open;
    struct es_log_limit log_stall; /* clients that stopped reading closed at exit */
};

void es_linger_open(struct es_linger *l, uv_loop_t *loop, struct es_fanout *fan,
                    unsigned linger_ms);
void es_linger_close(struct es_linger *l, uv_close_cb cb);

/* The server stops: start counting, and close at once the clients that
 * had stopped reading already. */
void es_linger_begin(struct es_linger *l);

void es_linger_flush_logs(struct es_linger *l, uint64_t now_ms, bool force);

#endif
