/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in control commands (es_commands.h). */
#include "es_commands.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <assert.h>

/* Upstream's ids 1 to 5 (its built-in namespace), then ours from 6. The
 * rows with no argument come first, in the order of their bytes, which run
 * from 1 without a gap; those with one (a range of bytes each) follow. */
static const struct es_commands_row rows[] = {
    {EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING, 3, 0, EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING,
     "start heap profiling", ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_HEAP_PROFILE,
     ES_COMMANDS_TO_HEAP_PROFILER},
    {EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING, 4, 0, EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING,
     "stop heap profiling", ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_HEAP_PROFILE,
     ES_COMMANDS_TO_HEAP_PROFILER},
    {EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS, 5, 0, EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS,
     "request a heap census", ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_CENSUS,
     ES_COMMANDS_TO_HEAP_PROFILER},
    {EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING, 1, 0,
     EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING, "start cost-centre profiling",
     ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_COST_CENTRE, ES_COMMANDS_TO_COST_CENTRE_PROFILER},
    {EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING, 2, 0,
     EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING, "stop cost-centre profiling",
     ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_COST_CENTRE, ES_COMMANDS_TO_COST_CENTRE_PROFILER},
    {EVENTLOG_SOCKET_CMD_LOSSLESS, 6, 0, EVENTLOG_SOCKET_CMD_LOSSLESS, "lossless delivery",
     ES_COMMANDS_CONNECTION, ES_COMMANDS_GATE_NONE, ES_COMMANDS_TO_LOSSLESS},
    {EVENTLOG_SOCKET_CMD_COST_NOTICES, 7, 0, EVENTLOG_SOCKET_CMD_COST_NOTICES, "cost notices",
     ES_COMMANDS_CONNECTION, ES_COMMANDS_GATE_NONE, ES_COMMANDS_TO_COST_NOTICES},
    {EVENTLOG_SOCKET_CMD_WINDOW, 8, 0, EVENTLOG_SOCKET_CMD_WINDOW, "the window",
     ES_COMMANDS_CONNECTION, ES_COMMANDS_GATE_NONE, ES_COMMANDS_TO_WINDOW},
    {EVENTLOG_SOCKET_CMD_EVENT_CLASSES, 9, 0, EVENTLOG_SOCKET_CMD_EVENT_CLASSES,
     "the event classes", ES_COMMANDS_CONNECTION, ES_COMMANDS_GATE_NONE,
     ES_COMMANDS_TO_CLASSES_REPORT},
    /* With an argument, the classes: the command and the upstream id are
     * the same byte, the classes in its low bits. */
    {EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON, EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON,
     EVENTLOG_SOCKET_EVENTS_ALL, EVENTLOG_SOCKET_CMD_EVENTS_ON, "switch event classes on",
     ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_EVENT_CLASSES, ES_COMMANDS_TO_EVENT_CLASSES},
    {EVENTLOG_SOCKET_UPSTREAM_EVENTS_OFF, EVENTLOG_SOCKET_UPSTREAM_EVENTS_OFF,
     EVENTLOG_SOCKET_EVENTS_ALL, EVENTLOG_SOCKET_CMD_EVENTS_OFF, "switch event classes off",
     ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_EVENT_CLASSES, ES_COMMANDS_TO_EVENT_CLASSES},
};

#define ROWS (sizeof rows / sizeof rows[0])

/* The rows with no argument: the first ones. */
#define PLAIN 9

/* The row of `code` among those with an argument (a range of bytes). */
static const struct es_commands_row *ranged(uint8_t code) {
    for (size_t i = PLAIN; i < ROWS; i++)
        if ((code & ~rows[i].arg_mask) == rows[i].code && (code & rows[i].arg_mask) != 0)
            return &rows[i];
    return NULL;
}

const struct es_commands_row *es_commands_find(uint8_t code) {
    if (code < 1)
        return NULL;
    const struct es_commands_row *r = code <= PLAIN ? &rows[code - 1] : ranged(code);
    if (r == NULL)
        return NULL;
    /* In the order of their bytes; an argument's bits follow its row's. */
    assert(code > PLAIN ? r->arg_mask != 0 : r->code == code && r->arg_mask == 0);
    /* The program's commands are limited; the connection's own never. */
    assert((r->scope == ES_COMMANDS_PROGRAM) == (r->gate != ES_COMMANDS_GATE_NONE));
    return r;
}

const struct es_commands_row *es_commands_gctl(uint8_t b) {
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].gctl == b)
            return &rows[i];
    return NULL;
}

uint8_t es_commands_with_arg(const struct es_commands_row *r, uint8_t a) {
    assert(r->arg_mask != 0);
    return a != 0 && (a & ~r->arg_mask) == 0 ? (uint8_t)(r->code | a) : 0;
}

const struct es_commands_row *es_commands_upstream(uint8_t id) {
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].arg_mask == 0
                ? rows[i].upstream_id == id
                : (id & ~rows[i].arg_mask) == rows[i].upstream_id && (id & rows[i].arg_mask) != 0)
            return &rows[i];
    return NULL;
}

size_t es_commands_count(void) {
    return ROWS;
}

const struct es_commands_row *es_commands_row(size_t i) {
    return i < ROWS ? &rows[i] : NULL;
}
