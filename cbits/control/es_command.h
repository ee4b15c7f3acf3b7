/* SPDX-License-Identifier: BSD-3-Clause */
/* The command path: the control commands clients send (built-in ones; the
 * program's custom ones go to es_registry.h), through the rate limit
 * (es_gate.h) and its timer, to the RTS; and the pause of clients that
 * write more than their read budget (es_client.h). A command that calls
 * into the RTS (a census's GC, profiling start/stop) releases every RTS
 * thread waiting for a lossless client first (es_lossless_rts_call), since
 * the RTS may stop every capability for it. Loop thread only. */
#ifndef ES_COMMAND_H
#define ES_COMMAND_H

#include "format/es_control.h"
#include "delivery/es_fanout.h"
#include "es_gate.h"
#include "delivery/es_lossless.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_command {
    /* Called for every known control command a client sends, once the
     * rate limit lets it act; NULL: commands are ignored. */
    es_control_cb fn;
    void *ctx;
    struct es_gate gate;
    uv_loop_t *loop;
    struct es_fanout *fan;
    struct es_lossless *lossless;
    uv_timer_t gate_timer;   /* runs what the gate holds back */
    uv_timer_t resume_timer; /* resumes reading clients paused for their budget */
    bool open;
    bool stopped; /* the server stops: what the gate holds is moot */
};

void es_command_init(struct es_command *c, unsigned interval_ms, es_control_cb fn, void *ctx);
void es_command_open(struct es_command *c, uv_loop_t *loop, struct es_fanout *fan,
                     struct es_lossless *lossless);
void es_command_close(struct es_command *c, uv_close_cb cb);

/* A command from a client (EVENTLOG_SOCKET_CMD_*). */
void es_command_offer(struct es_command *c, uint8_t cmd);

/* A client stopped being read for its budget: resume it (and any other)
 * from a timer once its window is over. */
void es_command_reading_paused(struct es_command *c);

/* Requests folded so far into one of the same kind still waiting. */
static inline uint64_t es_command_folded(const struct es_command *c) {
    return c->gate.folded;
}

/* The server stops: commands held back are dropped. */
void es_command_stop(struct es_command *c);

#endif
