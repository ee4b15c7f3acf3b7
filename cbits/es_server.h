/* The eventlog server: one libuv loop thread that owns the listening socket
 * and every client. RTS threads only hand chunks over (es_server_submit);
 * everything else happens on the loop thread. */
#ifndef ES_SERVER_H
#define ES_SERVER_H

#include "es_store.h"
#include "es_defs.h"
#include "es_gate.h"
#include "es_header.h"
#include "es_inbox.h"
#include "es_listen.h"
#include "es_log.h"
#include "es_walker.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <uv.h>

struct es_client;

#define ES_SERVER_READ_BUF 65536

struct es_server_config {
    size_t max_buffer;            /* bytes held for clients at most, and kept for the
                                   * first client before it connects (default 64 MiB) */
    size_t client_limit;          /* unsent bytes one client may fall behind (64 MiB) */
    bool drop_slow;               /* past its limit a client skips chunks (default);
                                   * false: it is disconnected */
    size_t defs_limit;            /* bytes of definition events kept (16 MiB) */
    unsigned linger_ms;           /* how long exit waits for slow clients (2000) */
    unsigned max_clients;         /* connections served at once (1024) */
    bool allow_other_users;       /* TCP: serve loopback clients of any user */
    unsigned control_interval_ms; /* a census, or a start/stop, at most this
                                   * often (es_gate.h; 1000, 0: no limit) */
};

/* At exit the server does not wait for a client that has stopped reading:
 * one that has never read a byte of its stream is closed once it has read
 * nothing for ES_EXIT_NEVER_READ_MS (it was never going to); one that has
 * been reading gets half the linger time (1 s by default) without progress
 * before it is closed, so that a client that is merely slow (a busy
 * machine, a collector pause) does not lose the end of its stream. */
#define ES_EXIT_NEVER_READ_MS 250
static inline unsigned es_exit_stall_ms(const struct es_server_config *cfg, bool ever_read) {
    return ever_read ? cfg->linger_ms / 2 : ES_EXIT_NEVER_READ_MS;
}

void es_server_config_defaults(struct es_server_config *cfg);

/* Bytes RTS threads may have handed over that the library's threads have
 * not yet taken in (es_inbox.h): normally next to nothing, as they take
 * chunks in within a millisecond or two; this much when they are stuck.
 * Half the bound, but at least four of the RTS's 2 MiB buffers, so that
 * a burst of full buffers from several capabilities is never dropped while
 * the walker reads the first of them. */
static inline size_t es_server_handoff_limit(const struct es_server_config *cfg) {
    size_t half = cfg->max_buffer / 2;
    return half > 4 * ES_RTS_BUFFER ? half : 4 * ES_RTS_BUFFER;
}

/* Called on the loop thread for every known control command a client sends. */
typedef void (*es_command_fn)(uint8_t cmd, void *ctx);

/* Called on the loop thread every interval while clients are connected
 * (es_server_set_tick); returns whether it flushed. */
typedef bool (*es_tick_fn)(void *ctx);

/* Counters for eventlog_socket_stats: written by the loop thread, read by
 * any thread. */
struct es_counters {
    atomic_uint_fast64_t clients_connected;
    atomic_uint_fast64_t clients_accepted;
    atomic_uint_fast64_t clients_lagged;  /* disconnected for falling behind */
    atomic_uint_fast64_t clients_refused; /* turned away at the limits */
    atomic_uint_fast64_t cpu_writer_ns;   /* RTS threads inside es_server_submit */
    atomic_uint_fast64_t cpu_walker_ns;   /* the threads' CPU clocks, last read */
    atomic_uint_fast64_t cpu_loop_ns;
    atomic_uint_fast64_t bytes_sent;
    atomic_uint_fast64_t chunks_dropped; /* per client, plus lost before any client */
    atomic_uint_fast64_t bytes_dropped;
    atomic_uint_fast64_t bytes_held;
    atomic_uint_fast64_t bytes_held_peak;
    atomic_uint_fast64_t flushes;  /* tick calls that flushed */
    atomic_uint_fast64_t flush_us; /* time in them */
};

struct es_server {
    struct es_server_config cfg;
    struct es_counters counters;
    uv_loop_t loop;
    uv_async_t wake;
    uv_timer_t linger;
    uv_timer_t exit_check; /* while stopping: closes clients that stopped reading */
    uv_timer_t tick;
    bool tick_active;       /* the timer is armed */
    unsigned tick_armed_ms; /* the interval it was armed with */
    uint64_t last_flush;    /* uv_hrtime of the last tick call, or of the tick's start */
    bool tick_flushed;      /* a tick call since the tick started */
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } listener;
    bool is_unix;
    char *unix_path;
    struct es_listen_result addr;
    pid_t pid; /* the process that started the server (a forked child is not it) */

    es_command_fn on_command;
    void *command_ctx;
    struct es_gate gate;   /* the rate limit on commands */
    uv_timer_t gate_timer; /* runs what the gate holds back */
    /* Where every client's reads land: each read is parsed before the
     * next one begins, so one buffer serves them all. */
    uint8_t read_buf[ES_SERVER_READ_BUF];
    uv_timer_t resume_timer; /* resumes reading clients paused for their budget */

    struct es_inbox inbox;   /* RTS threads to the walker */
    struct es_walker walker; /* the walker to the loop thread */
    struct es_store store;
    struct es_header header;
    bool have_header;
    struct es_defs defs;
    bool is_definition[ES_MAX_EVENT_TYPES]; /* es_defs_is_definition, as a table */
    bool bad_header_logged, orphan_logged, retain_drop_logged;
    bool defs_full_logged;
    /* Causes that repeat per client or per chunk, logged a few lines a
     * second at most however many clients misbehave (es_log.h). */
    struct es_log_limit log_dropping;   /* chunks skipped for a slow client */
    struct es_log_limit log_lagging;    /* slow clients disconnected */
    struct es_log_limit log_exit_stall; /* clients that stopped reading at exit */
    struct es_log_limit log_handoff;    /* chunks dropped at the hand-off */
    struct es_log_limit log_refused;    /* clients refused at the limits */

    struct es_client *clients; /* doubly linked list */
    unsigned nclients;

    uv_thread_t thread;
    atomic_bool stop_called; /* es_server_stop has begun */
    bool joined;             /* es_server_stop (or _free) joined the threads */
    /* The walker's and the loop thread's CPU clocks (es_server_cpu). */
    clockid_t walker_clock, loop_clock;
    atomic_bool clocks_ok;
    atomic_uint debug_block_ms; /* es_server_debug_block */
    atomic_bool stop_requested; /* the walker has ended: the loop may stop */
    bool stopping;              /* loop thread: stop has begun */
    bool finished;              /* loop thread: handles are closing */
    atomic_int last_error;

    /* Guarded by state_lock: for threads waiting on the loop. */
    uv_mutex_t state_lock;
    uv_cond_t state_cond;
    bool first_client;
    bool stopped;
    bool wake_closed; /* the loop has closed `wake` */
    es_tick_fn tick_fn;
    void *tick_ctx;
    unsigned tick_ms;
    bool tick_paced;
};

/* Create a server listening on a Unix socket or TCP, and start its loop
 * thread. Errors are those of es_listen_*, or a negated errno. */
int es_server_start_unix(struct es_server **out, const char *path,
                         const struct es_server_config *cfg, es_command_fn fn, void *ctx);
int es_server_start_tcp(struct es_server **out, const char *host, const char *port,
                        const struct es_server_config *cfg, es_command_fn fn, void *ctx);

/* Hand a chunk from the RTS to the server. Any thread; never blocks on
 * clients. */
void es_server_submit(struct es_server *s, const void *buf, size_t len);

/* Deliver what is pending to every client (waiting at most linger_ms for
 * slow ones), close them, remove the socket file and end the loop thread.
 * Blocks the caller until then, but never longer than linger_ms plus
 * ES_STOP_MARGIN_MS, whatever state the library's threads are in: then it
 * logs that it gave up on them, removes the socket file itself and returns
 * UV_ETIMEDOUT, leaving the threads running (the program is exiting).
 * Returns 0 otherwise. Any thread except the loop thread. The server is
 * not freed: an RTS thread that still calls es_server_submit finds it
 * closed. */
#define ES_STOP_MARGIN_MS 500
int es_server_stop(struct es_server *s);

/* Free a stopped server. Only once no other thread can reach it. After a
 * stop that gave up on the threads, this waits for them to end. */
void es_server_free(struct es_server *s);

/* CPU time (ns) so far of the RTS threads inside es_server_submit, the
 * walker and the loop thread. Any thread. */
void es_server_cpu(struct es_server *s, uint64_t *writer, uint64_t *walker, uint64_t *loop);

/* For tests: make the loop thread sleep `ms` at its next wake-up, as if it
 * were stuck, while RTS threads go on writing. Any thread. */
void es_server_debug_block(struct es_server *s, unsigned ms);

/* Call `fn` (the RTS flush) on the loop thread every `interval_ms` while at
 * least one client is connected (0 or NULL: never). `paced`: only as often
 * as es_walker_next_flush says, that is, skip calls while every capability
 * hands its buffers over within the interval by itself (es_pace.h). The
 * caller turns pacing off when events of the RTS's global buffer must stay
 * live, as heap profile samples must. Any thread. */
void es_server_set_tick(struct es_server *s, es_tick_fn fn, void *ctx, unsigned interval_ms,
                        bool paced);

/* Loop thread: start or stop the tick timer to match the current state. */
void es_server_update_tick(struct es_server *s);

/* Block until the first client connects (0) or the server stops
 * (EVENTLOG_SOCKET_ESTOPPED). */
int es_server_wait_client(struct es_server *s);

/* Loop thread: a client has stopped being read for its write budget
 * (ES_CLIENT_READ_BUDGET); the server resumes it when its second is over. */
void es_server_reading_paused(struct es_server *s);

/* Loop thread: a control command from a client, through the rate limit. */
void es_server_command(struct es_server *s, uint8_t cmd);

/* Record an error from the loop thread: the first one is kept and logged. */
void es_server_async_error(struct es_server *s, int err, const char *what);

/* Loop thread: the server is stopping and every client has gone. */
void es_server_maybe_finish(struct es_server *s);

/* Loop thread: bytes held for clients (chunks, header, definitions). */
size_t es_server_held(const struct es_server *s);

/* Loop thread: refresh the held-bytes counters after memory changed. */
void es_server_publish(struct es_server *s);

#endif
