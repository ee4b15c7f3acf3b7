/* SPDX-License-Identifier: BSD-3-Clause */
/* The rate limit on control commands that cost the program something.
 *
 * A heap census is a major GC plus a walk of the heap: a client that sent
 * census requests without pause made a 5 s program take 197 s (4046
 * censuses instead of 8). Nothing a client writes may slow the program
 * (protocol.md, section 2), so each kind of command acts at most once per
 * interval (default 1 s, across all clients): a request that comes sooner
 * is folded into one that runs when the interval has passed. For a census
 * that means one census for any number of requests; for start/stop, the
 * last of them wins.
 *
 * The gate decides and the caller acts: es_gate_offer says whether a
 * command acts now, es_gate_take hands over one that waited and is due.
 * Pure bookkeeping with times passed in, so that it can be tested without
 * a clock; es_command.h keeps one, and a timer for what waits. Loop
 * thread only. */
#ifndef ES_GATE_H
#define ES_GATE_H

#include "format/es_commands.h"

#include <stdbool.h>
#include <stdint.h>

/* The kinds of command that are limited, each on its own, are the
 * commands' rows' (es_commands_gate). */

/* The default interval (milliseconds). */
#define ES_GATE_DEFAULT_MS 1000
/* A command that took d ms to act (a census on a big heap: tens to
 * hundreds of ms) is not acted on again before ES_GATE_COST_FACTOR * d ms:
 * a flood of requests costs the program at most 1/ES_GATE_COST_FACTOR of its
 * time (2%) whatever its heap, where a fixed 1 s interval measured 6-10%. */
#define ES_GATE_COST_FACTOR 50

struct es_gate {
    unsigned interval_ms; /* 0: no limit */
    struct {
        bool acted;       /* a command of this kind has acted */
        uint64_t last_ms; /* when it last acted */
        bool pending;     /* a command waits for the interval to pass */
        uint8_t cmd;      /* which one */
        uint64_t gap_ms;  /* the wait after the last action: the interval, or
                           * ES_GATE_COST_FACTOR times what it cost */
    } kind[ES_COMMANDS_GATES];
    uint64_t folded; /* requests folded into another */
};

void es_gate_init(struct es_gate *g, unsigned interval_ms);

/* A command (EVENTLOG_SOCKET_CMD_*) from a client at `now_ms`: true when
 * it acts now (counted as acted: the caller acts on it), false when its
 * kind acted less than an interval ago or a command of its kind waits
 * already; then it waits (es_gate_due, es_gate_take), replacing the one
 * that waited (folded into it). Commands of no limited kind act at once. */
bool es_gate_offer(struct es_gate *g, uint8_t cmd, uint64_t now_ms);

/* The command `cmd` that just acted took `cost_ms` to do so: its kind waits
 * at least ES_GATE_COST_FACTOR times that before acting again. */
void es_gate_cost(struct es_gate *g, uint8_t cmd, uint64_t cost_ms);

/* When the first waiting command is due (ms), or UINT64_MAX if none waits. */
uint64_t es_gate_due(const struct es_gate *g);

/* A waiting command that is due at `now_ms`, counted as acted: true with
 * `*cmd` set (the caller acts on it), false when none is due. Call until
 * false: kinds are taken in order. */
bool es_gate_take(struct es_gate *g, uint64_t now_ms, uint8_t *cmd);

#endif
