/* SPDX-License-Identifier: BSD-3-Clause */
/* Taking connections in: the listening socket on the loop, who is let in
 * (es_admit.h), and a bound on what turning connections away may cost.
 *
 * The library accepts connections itself (accept4 on the listening
 * socket, watched by a uv_poll_t) rather than through uv_listen, so that a
 * connection that is refused costs no allocation and no libuv handle: an
 * accept, the admission check (for a loopback TCP peer one sock_diag
 * lookup, es_peer.h), a close. Only an admitted connection becomes a
 * client (`on_client`), and only clients count against max_clients.
 *
 * Refusals are bounded in time: the loop thread spends at most
 * ES_ACCEPT_REFUSAL_BUDGET_US on them in any ES_ACCEPT_WINDOW_MS; past
 * that it stops accepting until the window ends. Connections meanwhile
 * wait in the kernel's backlog, none is refused for it, and the next
 * window takes them in order: so processes flooding the port with
 * connections that are refused (another user's, say) cost the program at
 * most that share of the loop thread, and the owner's connection waits in
 * the backlog behind theirs instead of being turned away. Accepting also
 * pauses for a window when the process is out of descriptors or memory,
 * rather than spin on a connection it cannot take.
 *
 * Loop thread only. */
#ifndef ES_ACCEPT_H
#define ES_ACCEPT_H

#include "es_admit.h"
#include "base/es_counters.h"
#include "base/es_log.h"
#include "base/es_peer.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#define ES_ACCEPT_WINDOW_MS         100
#define ES_ACCEPT_REFUSAL_BUDGET_US 5000 /* 5% of the loop thread */
/* Connections taken per wake-up, so that clients' I/O is not starved. */
#define ES_ACCEPT_BATCH 64

struct es_accept_env {
    /* An admitted connection: the callee owns `fd` from now on. */
    void (*on_client)(int fd, void *ctx);
    /* Clients served now (es_admit's max_clients). */
    unsigned (*nclients)(void *ctx);
    /* An error while accepting, for the server's first-error record. */
    void (*on_error)(int err, const char *what, void *ctx);
    void *ctx;
};

struct es_accept {
    uv_loop_t *loop;
    uv_poll_t poll;
    uv_timer_t resume; /* ends a pause */
    int fd;            /* the listening socket */
    struct es_admit_rules rules;
    struct es_peer_finder finder;
    struct es_counters *counters;
    struct es_accept_env env;
    struct es_log_limit log_refused;
    struct es_log_limit log_paused;
    uint64_t budget_ns;       /* refusals' time per window (tests may lower it) */
    uint64_t window_ns;       /* when the current budget window began (uv_hrtime) */
    uint64_t window_spent_ns; /* refusals' time in it */
    bool poll_open;
    bool paused;
    bool closing;
    uint64_t pauses; /* times accepting paused for the budget (tests) */
};

/* Start accepting on the listening socket `fd` (the module owns it from
 * now on). Returns 0 or a libuv error; either way es_accept_close ends it. */
int es_accept_start(struct es_accept *a, uv_loop_t *loop, int fd,
                    const struct es_admit_rules *rules, struct es_counters *counters,
                    const struct es_accept_env *env);

/* Stop accepting: close the handles (`cb` for each that was open) and the
 * listening socket. */
void es_accept_close(struct es_accept *a, uv_close_cb cb);

/* The summaries of repeating log lines whose window has ended. */
void es_accept_flush_logs(struct es_accept *a, uint64_t now_ms, bool force);

#endif
