/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in control commands, each described once: its byte in our
 * framing (EVENTLOG_SOCKET_CMD_*), its id in upstream's namespace
 * "eventlog-socket", whether it stays with the connection that sent it or
 * acts on the program, the rate limit it is counted against, and which
 * part of the library or the RTS applies it (protocol.md, section 2).
 *
 * Every module that classifies a command reads its row: the frame parser
 * (es_control.c: which bytes are commands), the reader (control/es_reader.c:
 * the connection's own, or the program's), the rate limit
 * (control/es_gate.c), the RTS side (rts-writer/: what applies it, what
 * waits for eventlog_socket_ready). A new command is a new row.
 *
 * Constant data: any thread. */
#ifndef ES_COMMANDS_H
#define ES_COMMANDS_H

#include <stddef.h>
#include <stdint.h>

/* Where a command acts. */
enum es_commands_scope {
    ES_COMMANDS_CONNECTION, /* on the connection that sent it, at once */
    ES_COMMANDS_PROGRAM,    /* on the program: costs it, rate limited */
};

/* The rate limit's kinds (control/es_gate.h): each acts at most once per
 * interval, on its own; the RTS side keeps one command of each kind that
 * came before the program was ready. In the order they are applied then. */
enum es_commands_gate {
    ES_COMMANDS_GATE_NONE = -1,     /* the connection's own: never limited */
    ES_COMMANDS_GATE_HEAP_PROFILE,  /* start/stop heap profiling */
    ES_COMMANDS_GATE_CENSUS,        /* request a heap census */
    ES_COMMANDS_GATE_COST_CENTRE,   /* start/stop cost-centre profiling */
    ES_COMMANDS_GATE_EVENT_CLASSES, /* switch event classes on or off */
    ES_COMMANDS_GATES,
};

/* What applies a command. */
enum es_commands_target {
    ES_COMMANDS_TO_HEAP_PROFILER,        /* rts-writer/control.c */
    ES_COMMANDS_TO_COST_CENTRE_PROFILER, /* rts-writer/control.c */
    ES_COMMANDS_TO_LOSSLESS,             /* policy/es_lossless.c */
    ES_COMMANDS_TO_COST_NOTICES,         /* delivery/es_client.c */
    ES_COMMANDS_TO_WINDOW,               /* delivery/es_fanout.c */
    ES_COMMANDS_TO_EVENT_CLASSES,        /* rts-writer/event_classes.c */
    ES_COMMANDS_TO_CLASSES_REPORT,       /* control/es_reader.c, asking rts-writer/ */
};

struct es_commands_row {
    /* The command as the library passes it on (es_control_found.cmd, the
     * instance's on_command): for a command without an argument, its
     * EVENTLOG_SOCKET_CMD_* byte, the one after "GCTL". */
    uint8_t code;
    uint8_t upstream_id; /* its id in upstream's framing, namespace
                          * ES_CONTROL_UPSTREAM_NAMESPACE */
    /* 0, or the bits that carry the command's argument (the event classes'
     * switches): the row is every command `code | a`, upstream id
     * `upstream_id | a`, with `a` a non-zero subset of them; after "GCTL"
     * it is the byte `gctl`, then `a` as a byte of its own. */
    uint8_t arg_mask;
    uint8_t gctl;     /* the byte after "GCTL" (`code` when there is no argument) */
    const char *name; /* in words, as protocol.md says it (tests) */
    enum es_commands_scope scope;
    enum es_commands_gate gate; /* ES_COMMANDS_GATE_NONE for the connection's own */
    enum es_commands_target target;
};

/* The row of the command whose byte is `code`, or NULL: not a command.
 * Its argument is `code & row->arg_mask`. */
const struct es_commands_row *es_commands_find(uint8_t code);

/* The row whose byte after "GCTL" is `b`, or NULL: not a command. With an
 * argument, the next byte is its argument (es_commands_with_arg). */
const struct es_commands_row *es_commands_gctl(uint8_t b);
/* The command of a row with an argument, given the argument byte `a`, or
 * 0 when `a` is not one (no bit, or a bit outside the row's). */
uint8_t es_commands_with_arg(const struct es_commands_row *r, uint8_t a);

/* The row of upstream's command id `id` in the built-in namespace, or
 * NULL; the command's byte is then `row->code | (id & row->arg_mask)`. */
const struct es_commands_row *es_commands_upstream(uint8_t id);

/* Row i, 0 <= i < es_commands_count(): for tests and documents that list
 * them all. */
size_t es_commands_count(void);
const struct es_commands_row *es_commands_row(size_t i);

#endif
