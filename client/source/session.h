/* SPDX-License-Identifier: BSD-3-Clause */
/* What every subcommand sets up around the stream it reads: the libuv
 * loop, SIGINT and SIGTERM, the connection (or file) with the options
 * every subcommand takes (--connect-timeout, --retry; client/source/conn.h), and
 * for the live views, a new connection after each end (--retry): two
 * es_conn alternate, since a closed one is released by the loop later.
 * Also the name of the server's program from /proc, for streams that name
 * it late (GHC 9.0 writes PROGRAM_ARGS at exit).
 *
 * A subcommand: es_session_init, its options into `opt` (es_opts_parse),
 * es_session_start (the source opened, or the reason it cannot be said;
 * the signals caught), its own handles, es_session_run (the loop until
 * every handle is closed: the subcommand's stop closes its own and
 * es_session_close the session's), then its own results. Runs on the
 * loop's thread. */
#ifndef ES_SESSION_H
#define ES_SESSION_H

#include "conn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct es_session;

/* Told of a signal (`signum`: SIGINT or SIGTERM) with the words for it:
 * "interrupted (SIGINT)" or "terminated (SIGTERM)", and the stream's gaps
 * so far (es_conn_signal_words). */
typedef void es_session_signal_fn(void *ctx, int signum, const char *why);
/* Told whether a reconnection opened (r 0) or not (its error in
 * s->conn->error); `ctx` is the connection callbacks' ctx. */
typedef void es_session_reopened_fn(void *ctx, int r);

struct es_session {
    uv_loop_t *loop;
    struct es_conn_options opt; /* defaults until the subcommand changes them */
    struct es_conn *conn;       /* the current connection (or the next, while reconnecting) */

    /* Private. */
    const char *source;
    struct es_conn_callbacks cb;
    struct es_conn conns[2];
    unsigned cur;
    bool open; /* conn was opened and not closed yet */
    uv_timer_t reconnect;
    bool reconnect_init;
    es_session_reopened_fn *reopened;
    uv_signal_t sigint, sigterm;
    bool sigint_init, sigterm_init;
    es_session_signal_fn *on_signal;
    void *signal_ctx;
};

/* The default loop and the default options. */
void es_session_init(struct es_session *s);

/* Open `source` (an address, or a file if opt.allow_file) with `cb`.
 * Returns 0, or -EINVAL when it is neither (s->conn->error says why; no
 * callback is made then). */
int es_session_open(struct es_session *s, const char *source, const struct es_conn_callbacks *cb);

/* Catch SIGINT, and SIGTERM too if `term`, with `fn`. */
void es_session_signals(struct es_session *s, bool term, es_session_signal_fn *fn, void *ctx);

/* Open `source` with `cb` and catch the signals with `fn` (cb->ctx its
 * ctx; SIGTERM too if `term`; none if `fn` is NULL). Returns 0, or 2 when
 * the source cannot be opened, said on stderr as "eventlog-socket CMD:
 * SOURCE: WHY" (without CMD if NULL), the session finished: the
 * subcommand returns it. */
int es_session_start(struct es_session *s, const char *cmd, const char *source,
                     const struct es_conn_callbacks *cb, bool term, es_session_signal_fn *fn);

/* Run the loop until it is dry, then es_session_finish. */
void es_session_run(struct es_session *s);

/* Close the current connection and open the next one to the same source
 * after `ms`; `reopened` is told how that went. */
void es_session_reconnect(struct es_session *s, uint64_t ms, es_session_reopened_fn *reopened);

/* Close the connection and the session's handles (again: nothing); the
 * loop runs dry once the subcommand's own handles are closed too. */
void es_session_close(struct es_session *s);

/* After the loop has returned: close what is still open, let the loop
 * finish the closing, and close the loop. */
void es_session_finish(struct es_session *s);

/* The name of process `pid`'s program (the basename of its argv[0], from
 * /proc) in `out`; "" when it cannot be read. */
void es_session_program_of(int pid, char *out, size_t size);

#endif
