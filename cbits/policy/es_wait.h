/* SPDX-License-Identifier: BSD-3-Clause */
/* The lossless choice: RTS threads wait for lossless clients.
 *
 * A client is lossless when the program runs with the slow-client policy
 * `wait` (GHC_EVENTLOG_SLOW_CLIENT=wait), or when it asked for it on its
 * connection (EVENTLOG_SOCKET_CMD_LOSSLESS). Such a client is never skipped
 * or disconnected for falling behind; instead, once one of them has more
 * than the client limit unsent, the RTS thread handing over the next chunk
 * waits here until there is room, as it would for a slow disk. The program
 * then runs at the pace of its slowest lossless client, and nothing is
 * dropped for anyone who asked for everything.
 *
 * Waiting where the RTS calls the writer is safe only because the thread
 * that makes room, the loop thread, never needs the RTS: except when it
 * calls into it itself (the periodic flush, a heap census's GC), which
 * stops every capability, including the one a waiting thread may hold.
 * So before any such call the loop thread releases every waiter, and no
 * thread waits until the call has returned (es_wait_rts_call). Waits also
 * end for good when the server stops, and at exit they are bounded by the
 * linger time (es_wait_exiting), so that exit never hangs on a client. An
 * interrupt (SIGINT, es_signal.h) bounds every wait from then on the same
 * way (es_wait_interrupted): the RTS's orderly exit needs the capability a
 * waiting thread holds, and on a loaded machine it may take longer than
 * one linger time to get there; a program that handles the signal and goes
 * on waits at most the linger time each time from then on.
 *
 * What lossless delivery is, who may have it and when it ends is
 * es_lossless.h's; this is only the RTS threads' side of it.
 *
 * Thread ownership: es_wait_for_room runs on RTS threads; es_wait_publish,
 * es_wait_rts_call on the loop thread; es_wait_exiting, es_wait_interrupted,
 * es_wait_shutdown on any thread. The state is under one mutex, with an atomic fast path for
 * the common case of no lossless client. */
#ifndef ES_WAIT_H
#define ES_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct es_wait {
    size_t limit;       /* unsent bytes a lossless client may have */
    atomic_bool active; /* some lossless client is connected */
    uv_mutex_t lock;
    uv_cond_t room;        /* broadcast whenever what follows changes */
    uint64_t backlog;      /* the largest unsent backlog of a lossless client */
    bool in_rts_call;      /* the loop thread is calling into the RTS */
    bool shut;             /* the server stops: nobody waits any more */
    uint64_t deadline;     /* exiting: no wait past this (uv_hrtime), or 0 */
    uint64_t interrupt_ns; /* interrupted: no wait lasts longer, or 0 */
    unsigned waiters;      /* RTS threads waiting now */
    bool exit_logged;      /* a wait at exit ran out of time (logged once) */
    /* What waiting cost the program, for eventlog_socket_stats. */
    atomic_uint_fast64_t waits, wait_ns, wait_max_ns;
};

int es_wait_init(struct es_wait *w, size_t limit);
void es_wait_destroy(struct es_wait *w);

/* RTS thread, before handing over `len` bytes while `*in_flight` bytes
 * handed over earlier have not reached the clients yet (es_inbox.h): wait
 * while a lossless client has no room for them. Returns whether a lossless
 * client is connected (then nothing may be dropped at the hand-off
 * either). */
bool es_wait_for_room(struct es_wait *w, size_t len, const atomic_size_t *in_flight);

/* Loop thread: whether lossless clients are connected, and the largest
 * backlog among them, after anything that may have changed it. */
void es_wait_publish(struct es_wait *w, bool active, uint64_t backlog);

/* Loop thread: whether a lossless client has no room left, so that the
 * periodic flush must wait too: the flush hands the RTS's buffers over on
 * the loop thread itself, which must never wait, so without this a
 * program that never fills a buffer between two flushes would never wait,
 * and the library would hold without limit what a stalled lossless client
 * has not read. */
bool es_wait_full(struct es_wait *w, size_t in_flight);

/* Loop thread: around a call into the RTS (`calling` true before it, false
 * after). */
void es_wait_rts_call(struct es_wait *w, bool calling);

/* The program has begun to exit: no wait lasts beyond `linger_ms` from
 * now. Any thread. */
void es_wait_exiting(struct es_wait *w, unsigned linger_ms);

/* The program was interrupted: no wait, now or later, lasts longer than
 * `linger_ms`. Any thread. */
void es_wait_interrupted(struct es_wait *w, unsigned linger_ms);

/* Whether an RTS thread waits now. Any thread. */
bool es_wait_waiting(struct es_wait *w);

/* The server stops: release every waiter, and wait no more. Any thread. */
void es_wait_shutdown(struct es_wait *w);

#endif
