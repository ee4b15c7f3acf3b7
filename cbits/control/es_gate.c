/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_gate.h"

#include <assert.h>

/* The kind `cmd` is limited as, or ES_COMMANDS_GATE_NONE. */
static int kind_of(uint8_t cmd) {
    const struct es_commands_row *r = es_commands_find(cmd);
    return r != NULL ? (int)r->gate : ES_COMMANDS_GATE_NONE;
}

void es_gate_init(struct es_gate *g, unsigned interval_ms) {
    *g = (struct es_gate){.interval_ms = interval_ms};
}

static uint64_t due_at(const struct es_gate *g, int k) {
    uint64_t gap = g->kind[k].gap_ms > g->interval_ms ? g->kind[k].gap_ms : g->interval_ms;
    return g->kind[k].last_ms + gap;
}

void es_gate_cost(struct es_gate *g, uint8_t cmd, uint64_t cost_ms) {
    int k = kind_of(cmd);
    /* Only a command that acted has a cost. */
    assert(k < 0 || g->interval_ms == 0 || g->kind[k].acted);
    if (k >= 0 && g->interval_ms > 0)
        g->kind[k].gap_ms = cost_ms * ES_GATE_COST_FACTOR;
}

/* Kind `k` acts at `now_ms`. */
static void act(struct es_gate *g, int k, uint64_t now_ms) {
    /* Each kind acts at most once per interval (or what it last cost). */
    assert(!g->kind[k].acted || g->interval_ms == 0 || now_ms >= due_at(g, k));
    g->kind[k].acted = true;
    g->kind[k].last_ms = now_ms;
    g->kind[k].pending = false;
}

bool es_gate_offer(struct es_gate *g, uint8_t cmd, uint64_t now_ms) {
    int k = kind_of(cmd);
    if (k < 0 || g->interval_ms == 0)
        return true;
    if (g->kind[k].pending || (g->kind[k].acted && now_ms < due_at(g, k))) {
        /* A command waits only behind one of its kind that acted. */
        assert(g->kind[k].acted);
        if (g->kind[k].pending)
            g->folded++;
        g->kind[k].pending = true;
        g->kind[k].cmd = cmd;
        return false;
    }
    act(g, k, now_ms);
    return true;
}

uint64_t es_gate_due(const struct es_gate *g) {
    uint64_t due = UINT64_MAX;
    for (int k = 0; k < ES_COMMANDS_GATES; k++)
        if (g->kind[k].pending && due_at(g, k) < due)
            due = due_at(g, k);
    return due;
}

bool es_gate_take(struct es_gate *g, uint64_t now_ms, uint8_t *cmd) {
    for (int k = 0; k < ES_COMMANDS_GATES; k++) {
        /* A command waits only behind one of its kind that acted. */
        assert(!g->kind[k].pending || g->kind[k].acted);
        if (g->kind[k].pending && now_ms >= due_at(g, k)) {
            /* Only a limited kind's command ever waits. */
            assert(kind_of(g->kind[k].cmd) == k);
            act(g, k, now_ms);
            *cmd = g->kind[k].cmd;
            return true;
        }
    }
    return false;
}
