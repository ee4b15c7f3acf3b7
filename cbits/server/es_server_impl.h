/* SPDX-License-Identifier: BSD-3-Clause */
/* The server's own struct, shared by its two files only: es_server.c (the
 * lifecycle: building, starting, taking clients in and out, stopping) and
 * es_server_api.c (what other threads call: the hand-off from the RTS,
 * the figures the API reads, the hooks of es_server_test.h). Every other
 * module gets what it needs through its functions and env structs. */
#ifndef ES_SERVER_IMPL_H
#define ES_SERVER_IMPL_H

#include "net/es_accept.h"
#include "net/es_admit.h"
#include "delivery/es_bound.h"
#include "delivery/es_client.h"
#include "control/es_command.h"
#include "base/es_config.h"
#include "base/es_counters.h"
#include "net/es_endpoint.h"
#include "delivery/es_fanout.h"
#include "delivery/es_hold.h"
#include "es_flush_timer.h"
#include "delivery/es_hangup.h"
#include "delivery/es_inbox.h"
#include "delivery/es_intake.h"
#include "delivery/es_linger.h"
#include "delivery/es_lossless.h"
#include "es_milestones.h"
#include "es_threads.h"
#include "delivery/es_walker.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

/* Where every client's reads land (es_client_env.read_buf). */
#define ES_SERVER_READ_BUF 65536

/* The server owns the lifecycle. Everything else is a module's of its
 * own: taking connections in es_accept's, the wake-and-take path
 * es_intake's, the stream es_fanout's, the memory bound es_bound's,
 * lossless delivery es_lossless's, commands es_command's, the flush timer
 * es_flush_timer's, clients that shut down their writing side
 * es_hangup's, the end of the stream es_linger's, the threads
 * es_threads', what other threads wait for es_milestones'. */
struct es_server {
    struct es_config cfg;
    struct es_counters counters;
    uv_loop_t loop;
    struct es_flush_timer flush;
    struct es_accept accept;
    struct es_endpoint endpoint; /* where it listens */
    pid_t pid; /* the process that started the server (a forked child is not it) */

    uint8_t read_buf[ES_SERVER_READ_BUF];
    struct es_client_env client_env;
    struct es_admit_rules admit;

    struct es_inbox inbox;       /* RTS threads to the walker */
    struct es_walker walker;     /* the walker to the loop thread */
    struct es_intake intake;     /* the loop's wake-and-take path */
    struct es_fanout fan;        /* the stream and its clients */
    struct es_bound bound;       /* the memory bound */
    struct es_lossless lossless; /* clients that get every byte */
    struct es_command command;   /* control commands */
    struct es_hangup hangup;     /* clients that shut down their writing side */
    struct es_linger linger;     /* the end of the stream */
    struct es_hold hold;         /* new clients' holds, when a window is kept */
    struct es_threads threads;   /* the walker and the loop thread */
    struct es_milestones milestones;

    atomic_bool stop_called;    /* es_server_stop has begun */
    atomic_bool stop_requested; /* the walker has ended: the loop may stop */
    bool stopping;              /* loop thread: stop has begun */
    bool finished;              /* loop thread: handles are closing */
    atomic_bool joined;         /* es_server_stop has joined the loop thread */
    atomic_int last_error;
};

#endif
