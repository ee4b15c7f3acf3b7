/* SPDX-License-Identifier: BSD-3-Clause */
/* The eventlog server: one libuv loop thread that owns the listening socket
 * and every client. RTS threads only hand chunks over (es_server_submit);
 * everything else happens on the loop thread. */
#ifndef ES_SERVER_H
#define ES_SERVER_H

#include "delivery/es_chunk.h"
#include "control/es_command.h"
#include "base/es_config.h"
#include "base/es_counters.h"
#include "es_flush_timer.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

/* Opaque outside es_server.c. */
struct es_server;

/* Bytes RTS threads may have handed over that the library's threads have
 * not yet taken in (es_inbox.h): normally next to nothing, as they take
 * chunks in within a millisecond or two; this much when they are stuck.
 * Half the bound, but at least four of the RTS's 2 MiB buffers, so that
 * a burst of full buffers from several capabilities is never dropped while
 * the walker reads the first of them. */
static inline size_t es_server_handoff_limit(const struct es_config *cfg) {
    size_t half = cfg->max_buffer / 2;
    return half > 4 * ES_RTS_BUFFER ? half : 4 * ES_RTS_BUFFER;
}

/* Create a server listening on a Unix socket or TCP, and start its loop
 * thread. Errors are those of es_listen_*, or a negated errno. */
int es_server_start_unix(struct es_server **out, const char *path, const struct es_config *cfg,
                         es_control_cb fn, void *ctx);
int es_server_start_tcp(struct es_server **out, const char *host, const char *port,
                        const struct es_config *cfg, es_control_cb fn, void *ctx);

/* Hand a chunk from the RTS to the server. Any thread; never blocks on
 * clients. */
void es_server_submit(struct es_server *s, const void *buf, size_t len);

/* Deliver what is pending to every client (es_linger.h: the linger time,
 * more for clients that keep reading, up to the maximum), close them,
 * remove the socket file and end the loop thread. Blocks the caller until
 * then, but never longer than the maximum linger plus ES_CUT_FINISH_MS
 * plus ES_STOP_MARGIN_MS, whatever state the library's threads are in: then it
 * logs that it gave up on them, removes the socket file itself and returns
 * UV_ETIMEDOUT, leaving the threads running (the program is exiting).
 * Returns 0 otherwise. Any thread except the loop thread. The server is
 * not freed: an RTS thread that still calls es_server_submit finds it
 * closed. */
#define ES_STOP_MARGIN_MS 500
int es_server_stop(struct es_server *s);

/* Put the message `text` into the stream as a notice of the library's (a
 * block of its own holding one USER_MSG, stamped with the program's time
 * as the blocks so far tell it), handed over as the RTS hands over its
 * chunks: the RTS's error messages (rts-writer/failure.c). Any thread, as
 * es_server_submit. */
void es_server_post_text(struct es_server *s, const char *text);
/* The same, stamped `time` (the RTS's clock, when the caller can read it). */
void es_server_post_text_at(struct es_server *s, uint64_t time, const char *text);

/* Write the flight recorder's window (header, definitions, blocks; an end
 * marker if the program's own is not among them) to `fd`, once
 * es_server_stop has returned 0 on this thread or another (the loop has
 * ended and nothing changes the window any more). Returns the bytes
 * written, -EBUSY when the loop has not ended, -ENODATA when the program
 * keeps no window or wrote no header, or -errno of a failed write. */
long long es_server_write_window(struct es_server *s, int fd);

/* Where the window goes at a failing exit (GHC_EVENTLOG_DUMP_ON_FAILURE),
 * or NULL. Any thread. */
const char *es_server_dump_on_failure(const struct es_server *s);

/* Free a stopped server. Only once no other thread can reach it. After a
 * stop that gave up on the threads, this waits for them to end. */
void es_server_free(struct es_server *s);

/* CPU time (ns) so far of the RTS threads inside es_server_submit, the
 * walker and the loop thread. Any thread. */
void es_server_cpu(struct es_server *s, uint64_t *writer, uint64_t *walker, uint64_t *loop);

/* Call `fn` (the RTS flush) on the loop thread every `interval_ms` while at
 * least one client is connected (0 or NULL: never); `paced` as in
 * es_flush_timer.h. Any thread. */
void es_server_set_flush(struct es_server *s, es_flush_fn fn, void *ctx, unsigned interval_ms,
                         bool paced);

/* Block until the first client connects (0), the server stops
 * (EVENTLOG_SOCKET_ESTOPPED) or the program is interrupted (a SIGINT
 * through es_signal_chain: EVENTLOG_SOCKET_EINTR). Meanwhile a SIGINT or
 * SIGTERM that would end the process removes the socket file first
 * (es_signal_guard). */
int es_server_wait_client(struct es_server *s);

/* What eventlog_socket_stats and eventlog_socket_last_error report, and
 * the TCP port (-1 for a Unix socket). Any thread. */
const struct es_counters *es_server_counters(const struct es_server *s);
uint64_t es_server_bytes_received(const struct es_server *s);
/* Chunks (and bytes) lost before any client got them: dropped at a full
 * hand-off or for lack of memory. */
void es_server_lost(struct es_server *s, uint64_t *chunks, uint64_t *bytes);
int es_server_last_error(const struct es_server *s);
int es_server_tcp_port(const struct es_server *s);
/* The process that started the server: a forked child is not it. */
pid_t es_server_pid(const struct es_server *s);

/* The program has begun to exit: RTS threads wait for lossless clients
 * at most the linger time from now (es_lossless.h). Any thread. */
void es_server_exiting(struct es_server *s);

/* How often RTS threads waited for lossless clients, for how long in all
 * and at most (nanoseconds). Any thread. */
void es_server_wait_stats(struct es_server *s, uint64_t *waits, uint64_t *ns, uint64_t *max_ns);

/* ---- for tests only (tests/unit): the library itself never calls these ---- */

/* Make the loop thread sleep `ms` at its next wake-up, as if it were
 * stuck, while RTS threads go on writing; whether it sleeps in it now; end
 * the sleep early. Any thread. */
void es_server_debug_block(struct es_server *s, unsigned ms);
bool es_server_debug_blocked(struct es_server *s);
void es_server_debug_release(struct es_server *s);

/* Whether a program thread waits for a lossless client now. */
bool es_server_debug_waiting(struct es_server *s);

/* Bytes handed over and not yet taken in, chunks and bytes the hand-off
 * dropped, and the library's two threads. Any thread. */
size_t es_server_in_flight(struct es_server *s);
void es_server_handoff_dropped(struct es_server *s, uint64_t *chunks, uint64_t *bytes);
void es_server_threads(struct es_server *s, uv_thread_t *walker, uv_thread_t *loop);

#endif
