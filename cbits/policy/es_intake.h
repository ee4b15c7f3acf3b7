/* SPDX-License-Identifier: BSD-3-Clause */
/* What a wake-up of the loop thread does with the chunks the walker
 * handed over (es_intake_run): take them into the stream (es_fanout.h),
 * a drop notice where the hand-off lost some (es_bound.h), let every
 * client write, judge lag (es_bound.h), send wait notices and publish
 * what the library holds (es_lossless.h). The wake itself is the
 * server's (es_server.c), which calls this first. Also a stall of the loop
 * thread that only tests ask for (es_server_debug_block). Loop thread,
 * but the stall's three functions, which any thread may call. */
#ifndef ES_INTAKE_H
#define ES_INTAKE_H

#include "es_bound.h"
#include "base/es_counters.h"
#include "delivery/es_fanout.h"
#include "delivery/es_inbox.h"
#include "es_lossless.h"
#include "delivery/es_walker.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <uv.h>

/* What the intake works on: the other modules of the data path. The
 * pointers outlive it. */
struct es_intake_env {
    uv_loop_t *loop;
    struct es_walker *walker;
    struct es_inbox *inbox;
    struct es_fanout *fan;
    struct es_bound *bound;
    struct es_lossless *lossless;
    struct es_counters *counters; /* bytes_held, bytes_held_peak */
};

struct es_intake {
    struct es_intake_env env;
    atomic_uint stall_ms; /* tests: a stall asked for */
    atomic_bool stalled;  /* tests: the loop thread stalls now */
};

void es_intake_init(struct es_intake *in, const struct es_intake_env *env);

/* After a wake-up: take in what the walker handed over and, if there was
 * any, serve every client. Returns whether there was any. */
bool es_intake_run(struct es_intake *in);

/* Take in what the walker handed over, and nothing more (the server's
 * stop: the clients are served by the linger). Returns whether there was
 * any. */
bool es_intake_take(struct es_intake *in);

/* Refresh the held-bytes counters after memory changed. */
void es_intake_publish_held(struct es_intake *in);

/* Tests: make the loop thread sleep `ms` at its next wake-up (the caller
 * wakes it), as if it were stuck; whether it sleeps in it now; end the
 * sleep early. Any thread. */
void es_intake_stall(struct es_intake *in, unsigned ms);
bool es_intake_stalled(struct es_intake *in);
void es_intake_unstall(struct es_intake *in);

#endif
