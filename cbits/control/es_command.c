/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_command.h"

#define ES_NS_PER_MS UINT64_C(1000000)

static void deliver(uint8_t cmd, void *ctx) {
    struct es_command *c = ctx;
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

static void arm_gate(struct es_command *c) {
    uint64_t due = es_gate_due(&c->gate);
    if (due == UINT64_MAX || c->stopped)
        return;
    uint64_t now = uv_now(c->loop);
    uv_timer_start(&c->gate_timer, on_gate_timer, due > now ? due - now : 0, 0);
}

static void on_gate_timer(uv_timer_t *t) {
    struct es_command *c = t->data;
    if (c->stopped)
        return;
    es_gate_run(&c->gate, uv_now(c->loop), deliver, c);
    arm_gate(c);
}

static void on_resume_timer(uv_timer_t *t) {
    struct es_command *c = t->data;
    bool any = false;
    uint64_t now = uv_now(c->loop);
    es_fanout_each(c->fan, cl, next) any |= es_client_resume_reading(cl, now);
    if (!any)
        uv_timer_stop(&c->resume_timer);
}

void es_command_init(struct es_command *c, unsigned interval_ms, es_control_cb fn, void *ctx) {
    *c = (struct es_command){.fn = fn, .ctx = ctx};
    es_gate_init(&c->gate, interval_ms);
}

void es_command_open(struct es_command *c, uv_loop_t *loop, struct es_fanout *fan,
                     struct es_lossless *lossless) {
    c->loop = loop;
    c->fan = fan;
    c->lossless = lossless;
    uv_timer_init(loop, &c->gate_timer);
    uv_timer_init(loop, &c->resume_timer);
    c->gate_timer.data = c->resume_timer.data = c;
    c->open = true;
}

void es_command_close(struct es_command *c, uv_close_cb cb) {
    if (!c->open)
        return;
    c->open = false;
    uv_close((uv_handle_t *)&c->gate_timer, cb);
    uv_close((uv_handle_t *)&c->resume_timer, cb);
}

void es_command_offer(struct es_command *c, uint8_t cmd) {
    es_gate_offer(&c->gate, cmd, uv_now(c->loop), deliver, c);
    arm_gate(c);
}

void es_command_reading_paused(struct es_command *c) {
    if (!uv_is_active((uv_handle_t *)&c->resume_timer))
        uv_timer_start(&c->resume_timer, on_resume_timer, 100, 100);
}

void es_command_stop(struct es_command *c) {
    c->stopped = true;
    if (c->open)
        uv_timer_stop(&c->gate_timer);
}
