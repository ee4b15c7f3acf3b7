/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in commands that cost the program something (es_command.h). */
#include "es_command.h"

#include "format/es_classes.h"
#include "format/es_notice_text.h"
#include "format/es_commands.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <assert.h>

#define ES_NS_PER_MS UINT64_C(1000000)

/* Act on `cmd`, which the gate let through. */
static void act(struct es_command *c, uint8_t cmd) {
    assert(c->open);
    if (c->fn == NULL)
        return;
    /* What acting took on this thread (a census is taken here, in the
     * major GC the RTS runs for it): the gate spaces costly commands by it. */
    uint64_t start = uv_hrtime();
    /* A census runs a GC here, which stops every capability: no RTS
     * thread may be waiting for this thread meanwhile (es_wait.h). */
    es_lossless_rts_call(c->lossless, true);
    c->fn(cmd, c->ctx);
    es_lossless_rts_call(c->lossless, false);
    es_gate_cost(&c->gate, cmd, (uv_hrtime() - start) / ES_NS_PER_MS);
}

static void on_gate_timer(uv_timer_t *t);

/* Wake up when the first command the gate holds back is due. */
static void arm_gate(struct es_command *c) {
    uint64_t due = es_gate_due(&c->gate);
    if (due == UINT64_MAX || c->stopped)
        return;
    uint64_t now = uv_now(c->loop);
    uv_timer_start(&c->gate_timer, on_gate_timer, due > now ? due - now : 0, 0);
}

/* A switch of event classes the gate holds back: folded into those held,
 * so that "on A, off B, on C" acts as they would one after the other. */
static void hold_classes(struct es_command *c, uint8_t cmd) {
    es_classes_compose(&c->held_on, &c->held_off, (cmd & EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON) != 0,
                       cmd & EVENTLOG_SOCKET_EVENTS_ALL);
}

/* The held switches of event classes act (the gate let their kind through). */
static void act_classes(struct es_command *c) {
    uint8_t on = c->held_on, off = c->held_off;
    c->held_on = c->held_off = 0;
    if (on != 0)
        act(c, EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON | on);
    if (off != 0)
        act(c, EVENTLOG_SOCKET_UPSTREAM_EVENTS_OFF | off);
}

static void on_gate_timer(uv_timer_t *t) {
    struct es_command *c = t->data;
    assert(c->open);
    if (c->stopped)
        return;
    uint8_t cmd;
    while (es_gate_take(&c->gate, uv_now(c->loop), &cmd)) {
        if (es_commands_find(cmd)->gate == ES_COMMANDS_GATE_EVENT_CLASSES)
            act_classes(c);
        else
            act(c, cmd);
    }
    arm_gate(c);
}

void es_command_init(struct es_command *c, unsigned interval_ms, es_control_cb fn, void *ctx,
                     es_classes_fn classes) {
    *c = (struct es_command){.fn = fn, .ctx = ctx, .classes = classes};
    es_gate_init(&c->gate, interval_ms);
}

void es_command_open(struct es_command *c, uv_loop_t *loop, struct es_lossless *lossless) {
    assert(!c->open && !c->stopped); /* once, after es_command_init */
    c->loop = loop;
    c->lossless = lossless;
    uv_timer_init(loop, &c->gate_timer); /* cannot fail */
    c->gate_timer.data = c;
    c->open = true;
}

void es_command_close(struct es_command *c, uv_close_cb cb) {
    if (!c->open)
        return;
    c->open = false;
    uv_close((uv_handle_t *)&c->gate_timer, cb);
}

void es_command_offer(struct es_command *c, uint8_t cmd) {
    /* Commands a connection keeps to itself never come here (es_reader.c). */
    assert(es_commands_find(cmd) != NULL && es_commands_find(cmd)->scope == ES_COMMANDS_PROGRAM);
    assert(c->open);
    bool classes = es_commands_find(cmd)->gate == ES_COMMANDS_GATE_EVENT_CLASSES;
    if (es_gate_offer(&c->gate, cmd, uv_now(c->loop))) {
        /* What the gate held has acted: it lets a kind through only when
         * none of it waits. */
        assert(!classes || (c->held_on | c->held_off) == 0);
        act(c, cmd);
    } else if (classes) {
        hold_classes(c, cmd);
    }
    arm_gate(c);
}

void es_command_classes_text(const struct es_command *c, char *buf, size_t size) {
    unsigned on = 0, switchable = 0;
    const char *why = NULL;
    if (c->classes == NULL)
        why = "this server runs without an RTS";
    else if (c->classes(&on, &switchable, &why) < 0)
        switchable = 0;
    es_notice_text_classes_report(buf, size, on, ES_CLASSES_ALL & ~switchable, why);
}

void es_command_stop(struct es_command *c) {
    c->stopped = true;
    if (c->open)
        uv_timer_stop(&c->gate_timer);
}
