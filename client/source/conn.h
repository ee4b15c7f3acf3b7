/* SPDX-License-Identifier: BSD-3-Clause */
/* A source of eventlog bytes for the `eventlog-socket` command: a
 * connection to a running program's eventlog-socket server (Unix or TCP,
 * with a connect timeout and optional retrying until the program appears),
 * or a FILE read from disk, both on a libuv loop and both delivering the
 * same callbacks: the header, every event with its stream offset, the raw
 * bytes, and how the stream ended. The first bytes must be a GHC eventlog
 * header; anything else ends the source with a one-line error. It also
 * sends control frames (protocol.md section 2, our GCTL framing), and
 * keeps what the stream tells about the program (struct es_conn_info).
 *
 * The stream half (es_conn_init_parser, es_conn_feed, es_conn_finish) does
 * no I/O, so tests and fuzz targets can drive it without a loop; the I/O
 * half (es_conn_open, es_conn_send, es_conn_close) feeds it. Both are
 * client/source/conn.c. Everything runs on the thread that runs the loop;
 * no locking. */
#ifndef ES_CONN_H
#define ES_CONN_H

#include "addr.h"
#include "format/es_events.h"
#include "format/es_stream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

/* How a source ended (es_conn_callbacks.on_end). */
enum es_conn_end {
    ES_CONN_COMPLETE, /* the end-of-data marker arrived (the program exited through hs_exit) */
    ES_CONN_CUT,      /* the stream stopped after the header, without the end marker */
    ES_CONN_FAILED,   /* no eventlog: cannot connect, not an eventlog-socket peer, malformed */
};

struct es_conn_options {
    double connect_timeout; /* seconds to connect and receive the header (default 5) */
    bool retry;             /* keep trying while nothing listens at the address */
    bool allow_file;        /* an existing regular file is read as a recorded eventlog */
    bool cost_notices;      /* ask the server for cost notices once the header arrives
                             * (EVENTLOG_SOCKET_CMD_COST_NOTICES; live views only: a
                             * recording keeps the program's own stream) */
    bool window;            /* ask for the program's window as the connection's first
                             * bytes (EVENTLOG_SOCKET_CMD_WINDOW; the answer is noted
                             * in struct es_conn_info) */
    bool quiet;             /* --retry: no "waiting for" line on stderr (a view that
                             * owns the screen, or shows a run already) */
    unsigned retry_max_ms;  /* --retry: while the same socket file (or none) refuses,
                             * the pause between attempts doubles from 100 ms up to
                             * this; a new file at the path starts it over (0: 100 ms
                             * always). A killed program's stale socket then costs
                             * an exporter a connect every few seconds, not ten a
                             * second forever. */
};

/* What the stream has told about the program so far. */
struct es_conn_info {
    char program[256]; /* basename of argv[0] (PROGRAM_ARGS); "" until seen */
    char args[1024];   /* the arguments, space-separated, RTS options included */
    bool have_args;
    uint32_t pid; /* OSPROCESS_PID */
    bool have_pid;
    char rts_ident[128];     /* RTS_IDENTIFIER, such as "GHC-9.6.6 rts_thr" */
    bool heap_prof;          /* a HEAP_PROF_BEGIN arrived: the program has a heap profiling mode */
    uint64_t heap_period_ns; /* its sampling interval */
    uint32_t heap_breakdown; /* its mode (es_model_breakdown_name), 0 until seen */
    uint64_t heap_samples;   /* HEAP_PROF_SAMPLE_BEGIN events */
    uint64_t last_sample_time; /* program time of the latest one */
    uint64_t drop_notices;     /* drop notices the server inserted (protocol.md 1.3) */
    uint64_t dropped_chunks;   /* the chunks they say were skipped */
    double dropped_mib;        /* and their MiB */
    uint64_t first_drop_time, last_drop_time; /* program time of the first and the last */
    /* The latest notice about lossless delivery for this connection
     * (refused, or ended; protocol.md 1.3), and how many came. */
    char lossless_notice[512];
    uint64_t lossless_notices;
    /* The answer to a window request (protocol.md 1.3): 1 the window
     * follows, -1 refused (window_why says why), 0 none (yet). The
     * window's blocks are the stream's bytes from window_start to
     * window_end; they cover window_from_s to window_to_s of program time. */
    int window;
    uint64_t window_start, window_end, window_blocks;
    double window_from_s, window_to_s;
    char window_why[256];
    uint64_t block_end; /* stream offset where the latest block read ends */
    /* Why the stream was cut short, from the cut notice before its end
     * marker (the library's when it ended this connection early, or
     * `record`'s in a recording of a cut stream); "" when none came. */
    char cut_notice[320];
    uint64_t bytes;       /* bytes received */
    uint64_t events;      /* events read, block markers included (after each piece read) */
    uint64_t latest_time; /* the latest event time seen (program time, ns; the same) */
};

struct es_conn;

struct es_conn_callbacks {
    /* The header has been read (c->stream.header). */
    void (*on_header)(struct es_conn *c, void *ctx);
    /* An event, at stream offset `offset` (from the header's first byte). */
    void (*on_event)(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx);
    /* Raw bytes, after their events have been reported; also the bytes in
     * which the stream turned out malformed (the events before the fault
     * have been reported), just before on_end. */
    void (*on_bytes)(struct es_conn *c, const uint8_t *data, size_t n, void *ctx);
    /* Once, at the end; c->error says why for ES_CONN_FAILED and ES_CONN_CUT. */
    void (*on_end)(struct es_conn *c, enum es_conn_end how, void *ctx);
    /* A write of es_conn_send has completed (0) or failed (a libuv error). */
    void (*on_sent)(struct es_conn *c, int status, void *ctx);
    void *ctx;
    /* Optional, for a consumer that needs only some event types one by
     * one (es_stream_callbacks' `want`, `window` and `on_skip`, which say
     * how): on_event gets those (and a few more), on_skip the runs of the
     * others in between, in stream order. Both must outlive the source. */
    const bool *want;
    const uint64_t *window;
    void (*on_skip)(struct es_conn *c, const struct es_stream_skip *run, void *ctx);
    /* Optional, in place of on_event and on_skip, for a consumer that needs
     * neither the source nor an event's stream offset and closes no source
     * from a callback: the reader calls these itself, with ctx, without a
     * hop through the source per event (es_stream_tap shows the source the
     * few types it notes first). */
    es_stream_fn on_stream_event;
    es_stream_skip_fn on_stream_skip;
};

struct es_conn_attempt;

struct es_conn {
    /* Read-only for users. */
    struct es_stream stream;
    struct es_conn_info info;
    char name[300];  /* the address (unix:..., tcp:...) or the file's path, for messages */
    char error[512]; /* why it ended, one line without the name */
    bool is_file;
    bool is_unix;
    bool ended;
    int peer_pid; /* the server's pid from SO_PEERCRED (Unix sockets), 0 when unknown;
                   * es_conn_peer_pid also finds it over loopback TCP */
    struct sockaddr_storage tcp_peer, tcp_local; /* a TCP connection's ends */
    bool have_tcp_addrs;
    bool tcp_pid_looked; /* es_conn_peer_pid has looked */

    /* Private. */
    uv_loop_t *loop;
    struct es_conn_options opt;
    struct es_conn_callbacks cb;
    struct es_addr addr;
    struct es_conn_attempt *attempt; /* the current connection */
    uv_timer_t timer;                /* the connect timeout, and the pause between retries */
    bool timer_open;
    uv_idle_t idle; /* reads a file */
    bool idle_open;
    int file_fd;
    bool said_waiting;      /* the "waiting for" line was printed */
    unsigned retry_ms;      /* the pause before the next attempt (0: none yet) */
    uint64_t retry_file[4]; /* the socket file it was for: device, inode, mtime */
    bool feeding;           /* inside es_conn_feed */
    /* The event types read one by one when the callbacks' `want` is set:
     * those and the ones struct es_conn_info is made of. */
    bool want[ES_MAX_EVENT_TYPES];
    bool destroy_pending; /* closed meanwhile: free the reader on the way out */
};

/* What the stream's drop notices add up to, in the words every
 * subcommand that judges a stream's end says them in: "with gaps: 37
 * chunks (4.1 MiB) missing in 2 drop notices, the first at 1.204 s, the
 * last at 3.410 s" ("in 1 drop notice, at 1.204 s"; program time), or ""
 * without drop notices. Returns snprintf's count. */
int es_conn_gaps_text(const struct es_conn_info *in, char *buf, size_t size);
/* A stream that ended with the program's end marker, as the last lines
 * say it: "complete, the program's end marker arrived", or after drop
 * notices "with gaps: ...; the program's end marker arrived". */
void es_conn_complete_words(const struct es_conn_info *in, char *buf, size_t size);
/* "; with gaps: ..." added to the text in `buf` (`size` bytes) after drop
 * notices, for a stream that was cut. */
void es_conn_add_gaps(const struct es_conn_info *in, char *buf, size_t size);
/* A signal, as a stopped command says it: "interrupted (SIGINT)" or
 * "terminated (SIGTERM)". */
const char *es_conn_signal_name(int signum);
/* A stream a signal ended, as the last line says it: the signal's name
 * (es_conn_signal_name), then its gaps (es_conn_add_gaps). */
void es_conn_signal_words(const struct es_conn_info *in, int signum, char *buf, size_t size);
/* How the stream's end ends a subcommand that reads it whole (`heap`,
 * `table`): its exit status, 0 complete, 1 cut (by the program, or in a
 * recording, which `cut_why` says when it is not NULL), 2 failed, and the
 * last line's words for it in `buf`, gaps included. */
int es_conn_end_words(const struct es_conn *c, enum es_conn_end how, const char *cut_why, char *buf,
                      size_t size);

/* Skim within `window` from now on (the callbacks' `window`, replaced):
 * for a consumer that puts another model in place of the one it opened
 * the source with, from its on_header at the latest. */
void es_conn_skim_window(struct es_conn *c, const uint64_t *window);

/* Fill in defaults (5 s, no retry, no files). */
void es_conn_default_options(struct es_conn_options *o);

/* A common option of every subcommand at argv[*i] (--connect-timeout S,
 * --retry): returns 1 when it was one (and *i points at its last word), 0
 * when it is not, -1 after printing a usage error. */
int es_conn_parse_option(struct es_conn_options *o, int argc, char **argv, int *i);

/* Start reading `source` (an address, or a file when allowed). Returns 0,
 * or -EINVAL for an argument that is no address (c->error says why; then
 * no callback is made). Otherwise on_end is called exactly once. */
/* The checks es_conn_open makes before it connects, alone: a file where a
 * program's socket is expected (without opt->allow_file), an address that
 * does not parse, a Unix socket that is not there (without --retry).
 * Fills c->name and c->addr, and on an error c->error. Returns 0 or
 * -EINVAL. Nothing is connected. */
int es_conn_address(struct es_conn *c, const char *source, const struct es_conn_options *opt);
int es_conn_open(struct es_conn *c, uv_loop_t *loop, const char *source,
                 const struct es_conn_options *opt, const struct es_conn_callbacks *cb);

/* Send `n` bytes to the server (control frames). Returns 0 or a negative
 * libuv error; the bytes are copied. */
int es_conn_send(struct es_conn *c, const void *data, size_t n);

/* Send one GCTL frame ("GCTL" and the command byte). */
int es_conn_send_command(struct es_conn *c, uint8_t command);

/* The server's pid: peer_pid, or for a loopback TCP connection the local
 * process that owns its other end (client/source/peerpid.h; looked up once, on
 * the first call); 0 when unknown. */
int es_conn_peer_pid(struct es_conn *c);

/* Stop reading and close every handle (no further callbacks). The loop
 * then runs dry once the caller's own handles are closed. */
void es_conn_close(struct es_conn *c);

/* The loop-free half: set up `c` for parsing only (no source). */
void es_conn_init_parser(struct es_conn *c, const struct es_conn_callbacks *cb);
/* Start the reader afresh (a new connection of the same es_conn): the
 * stream and what was noted of it (client/source/conn.c). */
void es_conn_reset_parser(struct es_conn *c);
/* Parse received bytes; returns 0, or -1 after the stream was found not
 * to be an eventlog or malformed (c->error says why; on_end not called). */
int es_conn_feed(struct es_conn *c, const uint8_t *data, size_t n);
/* The bytes have ended: what kind of end it is (c->error set unless complete). */
enum es_conn_end es_conn_finish(struct es_conn *c);
/* Free what the parser holds. */
void es_conn_destroy_parser(struct es_conn *c);

#endif
