/* SPDX-License-Identifier: BSD-3-Clause */
/* The control-command rate limit: a flood of census requests makes one
 * census per interval, start/stop toggling settles on the last command,
 * other commands pass, and nothing asked for is forgotten. The gate
 * decides and the caller acts, as es_command.c does. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "control/es_gate.h"
#include "../unit.h"

static uint8_t got[100000];
static size_t ngot;

static void record(uint8_t cmd) {
    if (ngot < sizeof got)
        got[ngot] = cmd;
    ngot++;
}

/* What es_command.c does with the gate's answers: act on a command it
 * lets through now, and on each it hands over once due. */
static void offer(struct es_gate *g, uint8_t cmd, uint64_t now) {
    if (es_gate_offer(g, cmd, now))
        record(cmd);
}

static void run(struct es_gate *g, uint64_t now) {
    uint8_t cmd;
    while (es_gate_take(g, now, &cmd))
        record(cmd);
}

static size_t count(uint8_t cmd) {
    size_t n = 0;
    for (size_t i = 0; i < ngot && i < sizeof got; i++)
        n += got[i] == cmd;
    return n;
}

/* Offer `cmd` every `step` ms from `from` to `to`, running the gate as a
 * timer would. */
static void flood(struct es_gate *g, uint8_t cmd, uint64_t from, uint64_t to, uint64_t step) {
    for (uint64_t t = from; t < to; t += step) {
        if (es_gate_due(g) <= t)
            run(g, t);
        offer(g, cmd, t);
    }
}

static const uint8_t census = EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS;
static const uint8_t start = EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING;
static const uint8_t stop = EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING;

/* A flood of census requests: one census per interval, none forgotten. */
UNIT_CASE(gate_census_flood) {
    struct es_gate g;
    es_gate_init(&g, 1000);
    offer(&g, census, 5000);
    ok(ngot == 1 && got[0] == census, "the first census request acts at once");
    ok(es_gate_due(&g) == UINT64_MAX, "nothing waits after it");

    /* 10 s of requests every millisecond: 10000 requests. */
    ngot = 0;
    flood(&g, census, 5001, 15001, 1);
    ok(count(census) == 10, "10000 requests over 10 s: %zu censuses (one a second)", count(census));
    ok(es_gate_due(&g) == 16000, "the last request waits for its turn (due %llu)",
       (unsigned long long)es_gate_due(&g));
    run(&g, 15999);
    ok(count(census) == 10, "not before it is due");
    run(&g, 16000);
    ok(count(census) == 11 && es_gate_due(&g) == UINT64_MAX, "and then it acts: none is lost");
    ok(g.folded > 9900, "%llu requests were folded into others", (unsigned long long)g.folded);
}

/* Toggling: the last of a burst wins, once the interval has passed. */
UNIT_CASE(gate_toggling) {
    struct es_gate g;
    es_gate_init(&g, 1000);
    ngot = 0;
    offer(&g, stop, 0);
    for (uint64_t t = 1; t < 500; t++)
        offer(&g, t % 2 ? start : stop, t);
    ok(ngot == 1 && got[0] == stop, "the first stop acts at once, the burst waits");
    run(&g, 1000);
    ok(ngot == 2 && got[1] == start, "after the interval the burst's last command (start) acts");
}

/* Kinds are independent; unlimited commands pass. */
UNIT_CASE(gate_kinds_apart) {
    struct es_gate g;
    es_gate_init(&g, 1000);
    ngot = 0;
    offer(&g, census, 0);
    offer(&g, start, 1);
    offer(&g, EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING, 2);
    offer(&g, 0x3f, 3);
    offer(&g, 0x3f, 4);
    ok(ngot == 5, "a census, a heap start, a cost-centre stop and two unknown commands in 4 ms "
                  "all pass");
    offer(&g, EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING, 5);
    ok(ngot == 5, "a cost-centre start right after the stop waits");
}

/* A census that took 100 ms: the next waits 5 s, not 1 s. */
UNIT_CASE(gate_costly_census) {
    struct es_gate g;
    es_gate_init(&g, 1000);
    ngot = 0;
    offer(&g, census, 0);
    es_gate_cost(&g, census, 100);
    flood(&g, census, 1, 10000, 10);
    ok(count(census) == 2, "censuses that cost 100 ms: %zu in 10 s (every %d ms at most)",
       count(census), 100 * ES_GATE_COST_FACTOR);
    es_gate_cost(&g, census, 0);
    ok(es_gate_due(&g) == 6001, "a cheap one brings the interval back to 1 s (due %llu)",
       (unsigned long long)es_gate_due(&g));
}

/* Interval 0: no limit. */
UNIT_CASE(gate_no_limit) {
    struct es_gate g;
    es_gate_init(&g, 0);
    ngot = 0;
    flood(&g, census, 0, 100, 1);
    ok(ngot == 100, "interval 0: every request acts (%zu)", ngot);
}
