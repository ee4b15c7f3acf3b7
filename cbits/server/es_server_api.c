/* SPDX-License-Identifier: BSD-3-Clause */
/* What threads other than the loop thread call on a running server
 * (es_server.h): the hand-off from the RTS, the figures the API reads, the
 * flush settings, and the hooks only tests use (es_server_test.h). Each
 * is a call into the module that owns the state. */
#include "es_server.h"
#include "es_server_impl.h"
#include "es_server_test.h"

#include "base/es_time.h"
#include "delivery/es_notice.h"
#include "delivery/es_pool.h"

#include <errno.h>

/* ---- RTS threads ---------------------------------------------------------- */

void es_server_submit(struct es_server *s, const void *buf, size_t len) {
    /* The thread's CPU clock around the copy: what the program pays on its
     * own threads (two clock reads per chunk, a chunk being up to 2 MiB). */
    uint64_t a = es_thread_cpu_ns();
    /* A lossless client without room makes this thread wait (es_wait.h);
     * while one is connected, nothing is dropped at the hand-off. */
    bool lossless = es_lossless_wait_for_room(&s->lossless, len);
    es_inbox_push(&s->inbox, buf, len, !lossless);
    atomic_fetch_add_explicit(&s->counters.cpu_writer_ns, es_thread_cpu_ns() - a,
                              memory_order_relaxed);
}

void es_server_post_text(struct es_server *s, const char *text) {
    /* GHC always declares USER_MSG of variable size (es_notice.h). */
    static struct es_header hdr = {.size[ES_EVENT_USER_MSG] = ES_SIZE_VARIABLE};
    struct es_chunk *n = es_notice_text(&hdr, es_walker_program_time(&s->walker), text);
    if (n == NULL)
        return;
    es_server_submit(s, n->data, n->len);
    es_chunk_free(n);
}

/* ---- what the API reads ------------------------------------------------------ */

const struct es_counters *es_server_counters(const struct es_server *s) {
    return &s->counters;
}

uint64_t es_server_bytes_received(const struct es_server *s) {
    return es_inbox_bytes_in((struct es_inbox *)&s->inbox);
}

void es_server_lost(struct es_server *s, uint64_t *chunks, uint64_t *bytes) {
    uint64_t dropped, dropped_bytes;
    es_inbox_oom(&s->inbox, chunks, bytes);
    es_inbox_dropped(&s->inbox, &dropped, &dropped_bytes);
    *chunks += dropped + atomic_load_explicit(&s->counters.chunks_lost, memory_order_relaxed);
    *bytes += dropped_bytes + atomic_load_explicit(&s->counters.bytes_lost, memory_order_relaxed);
}

int es_server_last_error(const struct es_server *s) {
    return atomic_load(&s->last_error);
}

int es_server_tcp_port(const struct es_server *s) {
    return es_endpoint_port(&s->endpoint);
}

pid_t es_server_pid(const struct es_server *s) {
    return s->pid;
}

void es_server_exiting(struct es_server *s) {
    es_lossless_exiting(&s->lossless);
}

long long es_server_write_window(struct es_server *s, int fd) {
    if (!atomic_load(&s->joined))
        return -EBUSY;
    if (!es_fanout_has_window(&s->fan))
        return -ENODATA;
    return es_fanout_write_window(&s->fan, fd);
}

const char *es_server_dump_on_failure(const struct es_server *s) {
    return s->cfg.dump_on_failure[0] != '\0' ? s->cfg.dump_on_failure : NULL;
}

void es_server_wait_stats(struct es_server *s, uint64_t *waits, uint64_t *ns, uint64_t *max_ns) {
    es_lossless_wait_stats(&s->lossless, waits, ns, max_ns);
}

void es_server_set_flush(struct es_server *s, es_flush_fn fn, void *ctx, unsigned interval_ms,
                         bool paced) {
    es_flush_timer_set(&s->flush, fn, ctx, interval_ms, paced);
    es_intake_wake(&s->intake); /* the loop thread applies it (update_flush) */
}

/* ---- for tests (es_server_test.h) --------------------------------------------- */

void es_server_debug_block(struct es_server *s, unsigned ms) {
    es_intake_stall(&s->intake, ms);
}

bool es_server_debug_blocked(struct es_server *s) {
    return es_intake_stalled(&s->intake);
}

void es_server_debug_release(struct es_server *s) {
    es_intake_unstall(&s->intake);
}

bool es_server_debug_waiting(struct es_server *s) {
    return es_lossless_waiting(&s->lossless);
}

size_t es_server_in_flight(struct es_server *s) {
    return es_inbox_in_flight(&s->inbox);
}

void es_server_handoff_dropped(struct es_server *s, uint64_t *chunks, uint64_t *bytes) {
    es_inbox_dropped(&s->inbox, chunks, bytes);
}

void es_server_threads(struct es_server *s, uv_thread_t *walker, uv_thread_t *loop) {
    es_threads_ids(&s->threads, walker, loop);
}
