#include "es_linger.h"

#include "es_client.h"

void es_linger_open(struct es_linger *l, uv_loop_t *loop, struct es_fanout *fan,
                    unsigned linger_ms) {
    *l = (struct es_linger){.loop = loop, .fan = fan, .linger_ms = linger_ms};
    l->log_stall.what = "clients that stopped reading closed at exit";
    uv_timer_init(loop, &l->linger);
    uv_timer_init(loop, &l->check);
    l->linger.data = l->check.data = l;
    l->open = true;
}

void es_linger_close(struct es_linger *l, uv_close_cb cb) {
    if (!l->open)
        return;
    l->open = false;
    uv_close((uv_handle_t *)&l->linger, cb);
    uv_close((uv_handle_t *)&l->check, cb);
}

static void on_linger_timeout(uv_timer_t *t) {
    struct es_linger *l = t->data;
    if (es_fanout_nclients(l->fan) == 0)
        return;
    es_log("%u client(s) did not take the rest of the stream within %u ms; closing them",
           es_fanout_nclients(l->fan), l->linger_ms);
    es_fanout_each(l->fan, c, next) es_client_close(c);
}

static void on_check(uv_timer_t *t) {
    struct es_linger *l = t->data;
    uint64_t now = uv_now(l->loop);
    es_fanout_each(l->fan, c, next) {
        if (!es_client_is(c, ES_CLIENT_CLOSING) && es_client_stalled(c, now)) {
            es_log_limited(&l->log_stall, now,
                           "client %llu stopped reading; closing it without the rest of the "
                           "stream",
                           (unsigned long long)es_client_id(c));
            es_client_close(c);
        }
    }
    es_log_limit_flush(&l->log_stall, now, false);
}

void es_linger_begin(struct es_linger *l) {
    if (es_fanout_nclients(l->fan) == 0)
        return;
    uv_timer_start(&l->linger, on_linger_timeout, l->linger_ms, 0);
    uv_timer_start(&l->check, on_check, 50, 50);
    /* A client that was already stuck before the exit is not waited for
     * at all. */
    on_check(&l->check);
}

void es_linger_flush_logs(struct es_linger *l, uint64_t now_ms, bool force) {
    es_log_limit_flush(&l->log_stall, now_ms, force);
}
