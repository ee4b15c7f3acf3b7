/* SPDX-License-Identifier: BSD-3-Clause */
/* What threads outside the loop wait for: the first client taken in
 * (eventlog_socket_wait_for_client) and the loop thread's end (the stop).
 * The loop thread reaches them; any other thread waits for them, with a
 * deadline or until a SIGINT (es_signal.h). Any thread. */
#ifndef ES_MILESTONES_H
#define ES_MILESTONES_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_milestones {
    uv_mutex_t lock;
    uv_cond_t cond;
    bool first_client; /* a client was taken in */
    bool stopped;      /* the loop thread has ended its loop */
};

/* Returns 0 or a libuv error; then nothing is left to undo. */
int es_milestones_init(struct es_milestones *m);
void es_milestones_destroy(struct es_milestones *m);

/* Reached: a client was taken in; the loop has ended. Loop thread. */
void es_milestones_first_client(struct es_milestones *m);
void es_milestones_stopped(struct es_milestones *m);

/* Wait for the loop's end, but not past `deadline` (uv_hrtime). Returns 0,
 * or UV_ETIMEDOUT. */
int es_milestones_wait_stopped(struct es_milestones *m, uint64_t deadline);

/* Wait for the first client (0), the loop's end (EVENTLOG_SOCKET_ESTOPPED)
 * or a SIGINT counted by es_signal_chain's handler after it had counted
 * `signals` (es_signal_count; EVENTLOG_SOCKET_EINTR). */
int es_milestones_wait_client(struct es_milestones *m, unsigned signals);

#endif
