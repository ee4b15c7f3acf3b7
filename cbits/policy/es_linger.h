/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of the stream: once the server stops (the program exits), every
 * client gets the rest of its stream and the end marker, and exit waits
 * for them as long as they make progress:
 * - a client that has stopped reading (es_client_stalled: nothing consumed
 *   for half the linger time, 1 s by default, or for ES_EXIT_NEVER_READ_MS
 *   when it never read; the whole linger time for one that has read since
 *   the exit began) is cut at once;
 * - every other client gets the linger time (GHC_EVENTLOG_LINGER_MS, 2 s);
 * - past it, a client stays only while its pace since the exit began
 *   would bring it to the end within the maximum
 *   (GHC_EVENTLOG_LINGER_MAX_MS, 10 s) with a margin of two, and never
 *   past the maximum.
 * Every cut ends the client's stream on an event boundary (es_cut.h), with
 * a log line (rate-limited). Loop thread only. */
#ifndef ES_LINGER_H
#define ES_LINGER_H

#include "delivery/es_fanout.h"
#include "base/es_log.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_linger {
    uv_loop_t *loop;
    struct es_fanout *fan;
    unsigned linger_ms, max_ms;
    uint64_t began_ms; /* when the server began to stop */
    uv_timer_t linger; /* at the maximum: cuts every client still there */
    uv_timer_t check;  /* cuts clients that stopped reading or cannot finish */
    bool open;
    struct es_log_limit log_stall; /* clients that stopped reading cut at exit */
    struct es_log_limit log_slow;  /* clients too slow to finish cut at exit */
};

void es_linger_open(struct es_linger *l, uv_loop_t *loop, struct es_fanout *fan, unsigned linger_ms,
                    unsigned max_ms);
void es_linger_close(struct es_linger *l, uv_close_cb cb);

/* The server stops: start counting, and cut at once the clients that had
 * stopped reading already. */
void es_linger_begin(struct es_linger *l);

void es_linger_flush_logs(struct es_linger *l, uint64_t now_ms, bool force);

#endif
