/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in commands that cost the program something (a heap census,
 * starting and stopping heap or cost-centre profiling): a command a
 * client sent (es_reader.h) is offered to the rate limit (es_gate.h),
 * which says whether it acts now or waits; what waits acts when this
 * module's timer says it is due. Acting is calling the function the
 * server was started with (es_instance_hooks.on_command: into the RTS,
 * rts-writer/api.c). A command that calls into the RTS (a census's GC,
 * profiling start/stop) releases every RTS thread waiting for a lossless
 * client first (es_lossless_rts_call), since the RTS may stop every
 * capability for it. Loop thread only. */
#ifndef ES_COMMAND_H
#define ES_COMMAND_H

#include "base/es_config.h"
#include "es_gate.h"
#include "policy/es_lossless.h"
#include "format/es_control.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_command {
    /* What acting on a command is (the RTS side's function, or a test's);
     * NULL: commands are ignored. */
    es_control_cb fn;
    void *ctx;
    /* Which event classes are on (the RTS side's), or NULL: none known. */
    es_classes_fn classes;
    struct es_gate gate;
    uv_loop_t *loop;
    struct es_lossless *lossless;
    uv_timer_t gate_timer; /* acts on what the gate held back, when due */
    bool open;
    bool stopped; /* the server stops: what the gate holds is moot */
    /* The event classes' switches the gate holds back, folded into one:
     * the classes to switch on, and off (never one in both). Switches
     * compose, where the gate's other kinds keep the last command. */
    uint8_t held_on, held_off;
};

void es_command_init(struct es_command *c, unsigned interval_ms, es_control_cb fn, void *ctx,
                     es_classes_fn classes);
void es_command_open(struct es_command *c, uv_loop_t *loop, struct es_lossless *lossless);
void es_command_close(struct es_command *c, uv_close_cb cb);

/* A built-in command from a client that acts on the program (its row's
 * scope is ES_COMMANDS_PROGRAM, format/es_commands.h): acted on now, or
 * when the gate lets it. */
void es_command_offer(struct es_command *c, uint8_t cmd);

/* The event classes notice for a client that asked
 * (EVENTLOG_SOCKET_CMD_EVENT_CLASSES, protocol.md 1.3), into buf. */
void es_command_classes_text(const struct es_command *c, char *buf, size_t size);

/* Requests folded so far into one of the same kind still waiting. */
static inline uint64_t es_command_folded(const struct es_command *c) {
    return c->gate.folded;
}

/* The server stops: commands held back are dropped (one offered from now
 * on still acts if the gate lets it at once). */
void es_command_stop(struct es_command *c);

#endif
