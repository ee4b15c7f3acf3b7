/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in control commands (es_commands.h). */
#include "es_commands.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <assert.h>

/* Upstream's ids 1 to 5 (its built-in namespace), then ours from 6. The
 * rows are in the order of their bytes, which run from 1 without a gap. */
static const struct es_commands_row rows[] = {
    {EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING, 3, "start heap profiling", ES_COMMANDS_PROGRAM,
     ES_COMMANDS_GATE_HEAP_PROFILE, ES_COMMANDS_TO_HEAP_PROFILER},
    {EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING, 4, "stop heap profiling", ES_COMMANDS_PROGRAM,
     ES_COMMANDS_GATE_HEAP_PROFILE, ES_COMMANDS_TO_HEAP_PROFILER},
    {EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS, 5, "request a heap census", ES_COMMANDS_PROGRAM,
     ES_COMMANDS_GATE_CENSUS, ES_COMMANDS_TO_HEAP_PROFILER},
    {EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING, 1, "start cost-centre profiling",
     ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_COST_CENTRE, ES_COMMANDS_TO_COST_CENTRE_PROFILER},
    {EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING, 2, "stop cost-centre profiling",
     ES_COMMANDS_PROGRAM, ES_COMMANDS_GATE_COST_CENTRE, ES_COMMANDS_TO_COST_CENTRE_PROFILER},
    {EVENTLOG_SOCKET_CMD_LOSSLESS, 6, "lossless delivery", ES_COMMANDS_CONNECTION,
     ES_COMMANDS_GATE_NONE, ES_COMMANDS_TO_LOSSLESS},
    {EVENTLOG_SOCKET_CMD_COST_NOTICES, 7, "cost notices", ES_COMMANDS_CONNECTION,
     ES_COMMANDS_GATE_NONE, ES_COMMANDS_TO_COST_NOTICES},
    {EVENTLOG_SOCKET_CMD_WINDOW, 8, "the window", ES_COMMANDS_CONNECTION, ES_COMMANDS_GATE_NONE,
     ES_COMMANDS_TO_WINDOW},
};

#define ROWS (sizeof rows / sizeof rows[0])

const struct es_commands_row *es_commands_find(uint8_t code) {
    if (code < 1 || code > ROWS)
        return NULL;
    const struct es_commands_row *r = &rows[code - 1];
    assert(r->code == code); /* in the order of their bytes */
    /* The program's commands are limited; the connection's own never. */
    assert((r->scope == ES_COMMANDS_PROGRAM) == (r->gate != ES_COMMANDS_GATE_NONE));
    return r;
}

const struct es_commands_row *es_commands_upstream(uint8_t id) {
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].upstream_id == id)
            return &rows[i];
    return NULL;
}

size_t es_commands_count(void) {
    return ROWS;
}

const struct es_commands_row *es_commands_row(size_t i) {
    return i < ROWS ? &rows[i] : NULL;
}
