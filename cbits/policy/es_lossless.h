/* SPDX-License-Identifier: BSD-3-Clause */
/* Lossless delivery, in one place: which clients get every byte, what it
 * costs the program, and when it ends.
 *
 * A client becomes lossless when it asks (EVENTLOG_SOCKET_CMD_LOSSLESS) or,
 * under the slow-client policy `wait`, when it connects; in both cases
 * only if the program's setting lets its peer have it (`lossless_clients`:
 * by default the program's owner only, es_admit.h: over a Unix socket, or
 * loopback TCP whose peer's user is checked; `all`: any client that may
 * connect; `none`). A request that is refused is logged (rate-limited) and
 * the client told by a notice in its stream (one refused before the
 * stream had a header, once the header has come: es_fanout_tell); the
 * connection keeps the program's policy for slow clients.
 *
 * A lossless client is never skipped or disconnected for lag (es_bound.h);
 * RTS threads wait for it instead (es_wait.h, whose backlog is published
 * here after anything that may change it). Lossless delivery ends for a
 * client (it is demoted to the drop policy, with a log line and a notice
 * in its stream) when it has read nothing for `lossless_stall_ms` while
 * the program had to wait for it (0: never), and when the program is
 * interrupted (SIGINT, es_signal.h) and it has stopped reading (the exit
 * rule of es_client.h), at that check or any later one: from the
 * interrupt on every wait is also bounded by the linger time, so that the
 * RTS's orderly exit can begin however long it takes to get there.
 *
 * Once a second while program threads waited, every client gets a wait
 * notice saying how long (protocol.md, 1.3).
 *
 * Loop thread, except where a function says otherwise. */
#ifndef ES_LOSSLESS_H
#define ES_LOSSLESS_H

#include "net/es_admit.h"
#include "delivery/es_client.h"
#include "base/es_config.h"
#include "base/es_counters.h"
#include "delivery/es_fanout.h"
#include "base/es_log.h"
#include "base/es_peer.h"
#include "es_wait.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* How often the loop thread looks at lossless clients (stalls, signals). */
#define ES_LOSSLESS_CHECK_MS 100
/* Wait notices at most this often. */
#define ES_WAIT_NOTICE_MS 1000

struct es_lossless {
    struct es_wait wait; /* the RTS threads' side */
    /* Settings (es_config.h). */
    int who;              /* EVENTLOG_SOCKET_LOSSLESS_* */
    bool every_client;    /* the `wait` policy */
    bool disconnect_slow; /* the `disconnect` policy: what a client that is
                           * not lossless gets (otherwise `drop`) */
    unsigned stall_ms;    /* 0: never demoted for stalling */
    unsigned linger_ms;
    size_t limit;
    struct es_admit_rules rules;
    struct es_peer_finder finder;
    /* The stream. */
    uv_loop_t *loop;
    struct es_fanout *fan;
    struct es_counters *counters;
    const atomic_size_t *in_flight;
    uv_timer_t check;
    bool check_open;
    unsigned count;        /* lossless clients connected */
    unsigned seen_signals; /* es_signal_count() when last looked at */
    bool interrupted;      /* a SIGINT came: the program is on its way out */
    uint64_t notice_ms;    /* when the last wait notice went out */
    uint64_t noticed_waits, noticed_ns;
    struct es_log_limit log_refused, log_ended;
    uint64_t ended; /* clients demoted so far (tests) */
};

/* Settings from `cfg`, who the owner is from `rules`, the bytes handed
 * over and not yet taken in from `in_flight` (es_inbox.h). Returns 0 or a
 * libuv error. Any thread, before the loop runs. */
int es_lossless_init(struct es_lossless *l, const struct es_config *cfg,
                     const struct es_admit_rules *rules, const atomic_size_t *in_flight);
/* The stream, and the loop's timer. */
void es_lossless_open(struct es_lossless *l, uv_loop_t *loop, struct es_fanout *fan,
                      struct es_counters *counters);
void es_lossless_close(struct es_lossless *l, uv_close_cb cb);
/* After the loop has ended (or never ran). */
void es_lossless_destroy(struct es_lossless *l);

/* A client was taken in (under `wait` it becomes lossless if allowed);
 * it asked for lossless delivery; it is gone. */
void es_lossless_joined(struct es_lossless *l, struct es_client *c);
void es_lossless_request(struct es_lossless *l, struct es_client *c);
void es_lossless_left(struct es_lossless *l, struct es_client *c);

/* Tell waiting RTS threads how far behind the lossless clients are, after
 * anything that may have changed it. */
void es_lossless_publish(struct es_lossless *l);

/* The wait notice, when one is due (at most one a ES_WAIT_NOTICE_MS,
 * appended to the stream for every client); whether it sent one. Called
 * as chunks arrive and by the check timer, which runs on until the waits
 * are told also after the last lossless client has left, so a wait is
 * told even when the program goes quiet after it. */
bool es_lossless_notice(struct es_lossless *l);

/* Whether a lossless client has no room left (the periodic flush must
 * wait too, es_wait_full). */
bool es_lossless_full(struct es_lossless *l);

/* Around a call into the RTS (es_wait_rts_call). */
void es_lossless_rts_call(struct es_lossless *l, bool calling);

/* RTS thread, before handing over `len` bytes: wait while a lossless
 * client has no room. Returns whether one is connected (then nothing may
 * be dropped at the hand-off). */
bool es_lossless_wait_for_room(struct es_lossless *l, size_t len);

/* Any thread: the program exits (waits bounded by the linger time); the
 * server stops (no more waits); what waiting cost so far. */
void es_lossless_exiting(struct es_lossless *l);
void es_lossless_shutdown(struct es_lossless *l);
void es_lossless_wait_stats(struct es_lossless *l, uint64_t *waits, uint64_t *ns, uint64_t *max_ns);
/* Any thread: whether an RTS thread waits for room now (for tests). */
bool es_lossless_waiting(struct es_lossless *l);

void es_lossless_flush_logs(struct es_lossless *l, uint64_t now_ms, bool force);

#endif
