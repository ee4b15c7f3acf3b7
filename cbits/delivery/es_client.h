/* SPDX-License-Identifier: BSD-3-Clause */
/* One connected client: its socket, its place in the chunk store, its
 * outgoing writes. It knows nothing of the modules above it: what it
 * needs of the stream and whom it tells when a write or the connection
 * ends come in a struct es_client_env, filled in by the server
 * (es_server.c: the seam is upward, ARCHITECTURE.md); its place in the
 * list of clients belongs to es_fanout.h, the decisions about slow
 * clients to es_bound.h, reading what it writes to es_reader.h. Loop
 * thread only. */
#ifndef ES_CLIENT_H
#define ES_CLIENT_H

#include "format/es_control.h"
#include "base/es_counters.h"
#include "base/es_queue.h"
#include "format/es_header.h"
#include "es_notice.h"
#include "es_store.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* At most this much goes into one write (but always at least one whole
 * chunk), so one client cannot hold the loop for long, and a client that
 * stops reading pins little memory in its unfinished write. */
#define ES_CLIENT_MAX_BUFS  64
#define ES_CLIENT_MAX_WRITE (2u << 20)

/* At exit the server does not wait for a client that has stopped reading:
 * one that has never read a byte of its stream is closed once it has read
 * nothing for ES_EXIT_NEVER_READ_MS (it was never going to); one that has
 * been reading gets half the linger time (1 s by default) without progress
 * before it is closed, so that a client that is merely slow (a busy
 * machine, a collector pause) does not lose the end of its stream. The
 * same "while" tells a stuck client (es_client_stuck). */
#define ES_EXIT_NEVER_READ_MS 250

/* A client that asked for cost notices gets at most one per this many
 * milliseconds, in a write that also carries chunks of the stream. */
#define ES_COST_NOTICE_MS 1000

/* A client that shut down its writing side may still be reading (`nc`
 * once its input ends: protocol.md, section 2) or be gone for good, and
 * the kernel tells which only when asked (es_client_check_peer): over a
 * Unix socket at once; over TCP only once the peer has answered bytes
 * sent to it with a reset, so such a TCP client with nothing else to get
 * is sent an empty block when its writing side ends, and again at most
 * once per ES_CLIENT_PROBE_MS while the program writes nothing for it. */
#define ES_CLIENT_PROBE_MS 10000

/* A client that skips chunks keeps the notices for every client among
 * them (a wait notice: what the program waited is told even to a client
 * that lagged) up to this many bytes until its next write; past it, or
 * out of memory, they are skipped with the rest and counted in its drop
 * notice. A wait notice is about 130 bytes, one a second at most. */
#define ES_CLIENT_KEPT_MAX 16384

/* Notices for one client that follow one still unsent share its block
 * (es_fanout_tell) up to this many bytes; past it, while the client reads
 * nothing, the next ones are not told (a client that asks for reports
 * and never reads pins no more). */
#define ES_CLIENT_NOTICE_MAX 16384

struct es_client;

/* A client's state: one word of named bits (struct es_client.flags),
 * changed only through es_client_set_flags, which asserts the legal
 * transitions:
 * - bits marked "once" are never cleared;
 * - nothing begins on a closing client: STARTED, WRITING, FINISHING,
 *   READ_PAUSED, COST_NOTICES, LOSSLESS and HELD are never set once
 *   CLOSING is (a write that finished before the close may still set
 *   HEADER_SENT, a look at its progress EVER_READ);
 * - STARTED, WRITING, FINISHING, CLOSING, LOSSLESS and HELD are set only
 *   when clear, and WRITING, LOSSLESS and HELD cleared only when set;
 * - HELD is set only at the start: on a STARTED client that has written
 *   and been read nothing yet;
 * - never both LOSSLESS and LOSSLESS_OVER, WRITING and FINISHING, or
 *   READ_PAUSED and READ_EOF; WRITE_HEADER only with WRITING and before
 *   HEADER_SENT. */
enum es_client_flag {
    ES_CLIENT_STARTED = 1u << 0,      /* es_client_start ran: on_closed is due at the
                                       * close (once) */
    ES_CLIENT_HEADER_SENT = 1u << 1,  /* a write with the header finished (once) */
    ES_CLIENT_WRITING = 1u << 2,      /* a write is in flight */
    ES_CLIENT_WRITE_HEADER = 1u << 3, /* ... and it carries the header */
    ES_CLIENT_EVER_READ = 1u << 4,    /* it has consumed part of its stream (once) */
    ES_CLIENT_READ_PAUSED = 1u << 5,  /* not read until its budget window ends
                                       * (es_reader.h) */
    ES_CLIENT_READ_EOF = 1u << 6,     /* it shut down its writing side (once) */
    ES_CLIENT_COST_NOTICES = 1u << 7, /* it asked for cost notices (once) */
    /* Lossless delivery (es_lossless.h, the only writer of these two):
     * never skipped or disconnected for lag, the program waits for it
     * instead; refused or ended for good (once). */
    ES_CLIENT_LOSSLESS = 1u << 8,
    ES_CLIENT_LOSSLESS_OVER = 1u << 9,
    ES_CLIENT_FINISHING = 1u << 10, /* everything sent, shutdown requested (once) */
    ES_CLIENT_CLOSING = 1u << 11,   /* the handle is closing (once) */
    /* In a program that keeps a window: only the header is sent until the
     * client has written something (a window request, es_client_place),
     * its hold time has passed or the server stops (set at the start). */
    ES_CLIENT_HELD = 1u << 12,
};

/* What every client is given. The pointers stay valid as long as any
 * client lives. The three functions are the client's owner's (the
 * server's), called from libuv's completions. */
struct es_client_env {
    uv_loop_t *loop;
    struct es_store *store;         /* the chunks, and the header to send first */
    const struct es_header *header; /* the parsed header, for drop notices */
    const bool *stopping;           /* the server is stopping: a client that has
                                     * everything is shut down */
    unsigned linger_ms;             /* how long exit waits for slow clients */
    struct es_counters *counters;   /* bytes_sent */
    /* A program that keeps a window holds a new client's stream for this
     * long (0: not at all), so that it can ask before its stream begins
     * (es_hold.h ends holds that are due). */
    unsigned hold_ms;
    /* A write ended and released its chunks: what the library holds may
     * have fallen. */
    void (*on_released)(void *ctx);
    /* The connection is closed: unlink the client; it is freed after. */
    void (*on_closed)(struct es_client *c, void *ctx);
    /* What streaming has cost the program so far, for cost notices
     * (EVENTLOG_SOCKET_CMD_COST_NOTICES). */
    void (*read_cost)(struct es_cost *out, void *ctx);
    void *ctx;
};

struct es_client {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } io;
    const struct es_client_env *env;
    struct es_queue_node fan_node; /* es_fanout's list of clients */
    uint64_t id;                   /* from 1 once joined (es_client_join); 0 before */

    /* The first chunk still to send, or NULL when everything has been
     * handed to the socket. The client holds a reference on every chunk
     * from it to the newest: each appended chunk counts every client. */
    struct es_chunk *next_chunk;
    unsigned flags;        /* enum es_client_flag */
    struct es_chunk *defs; /* definitions block still to send (a reference) */
    uint64_t joined_at;    /* stream offset when it joined; backlog before it is
                            * not counted against the client's limit */

    /* Chunks skipped since the last drop notice. */
    uint64_t gap_chunks, gap_bytes, gap_time;

    uv_write_t wreq;
    /* The chunks of the write in flight, first to last along the list; the
     * client's references on them belong to the write until it ends. */
    struct es_chunk *write_first, *write_last;
    struct es_chunk *notice;         /* a notice for this client alone, still to
                                      * send (a reference; es_client_notice) */
    struct es_chunk *kept;           /* notices for every client that its skips
                                      * passed over, their blocks one after
                                      * another, still to send (a reference;
                                      * es_client_drop) */
    struct es_chunk *write_extra[6]; /* header, definitions, the client's own
                                      * notice, kept notices, drop notice and
                                      * cost notice in the write (references),
                                      * or NULL */
    size_t write_bytes;
    /* Progress, for the exit rule (ES_EXIT_NEVER_READ_MS): bytes of
     * finished writes, how many bytes the client had consumed at the last
     * look, when that last grew (or the client had nothing left to read),
     * and whether it ever consumed anything. */
    uint64_t bytes_done;
    uint64_t consumed_seen;
    uint64_t moved_ms;
    /* What it had consumed when the program's exit began (es_linger.h,
     * its only writer), for its pace since. */
    uint64_t exit_consumed;
    /* Its stream being ended on an event boundary (es_cut.h, the owner),
     * or NULL; while it is, the close callback first calls closed_hook,
     * which says whether the client lives on (on a reopened handle). */
    struct es_cut *cut;
    bool (*closed_hook)(struct es_client *c);
    uv_shutdown_t sreq;
    /* Since when (loop clock, 0: not) a lossless client has held the
     * program up (es_lossless.h, its only writer). */
    uint64_t lossless_held_ms;
    /* Since when (loop clock, 0: not) it has been past its own limit under
     * the disconnect policy (es_bound.h, its only writer). */
    uint64_t over_limit_ms;
    /* Cost notices (ES_CLIENT_COST_NOTICES): when its last one went out (or
     * it asked), the cost then, and the end time of the last block it was
     * sent, which stamps the next notice. */
    uint64_t cost_ms;
    struct es_cost cost_seen;
    uint64_t sent_time;
    /* When (loop clock, 0: never) it was last sent an empty block to learn
     * whether its peer is still there (es_client_check_peer). */
    uint64_t probed_ms;

    uint64_t hold_until; /* ES_CLIENT_HELD: when the hold ends (loop clock) */
    /* It asked for the window before the stream's header came, when no
     * answer can be made: es_fanout (its only writer) answers once the
     * header has. */
    bool window_early;
    /* Texts of notices for it alone from before the header (es_client_owe):
     * each ends with its NUL, one after another; malloc'd. */
    char *owed;
    size_t owed_len;

    /* Reading what it writes is es_reader.h's; the client keeps, for it
     * and through the functions below only: the reader (set once), the
     * control-frame parser its bytes go through, and what it wrote in the
     * current window of ES_CLIENT_READ_WINDOW_MS. */
    void *reader;
    struct es_control_parser control;
    uint64_t read_window_ms;
    size_t read_bytes;
};

/* The window a client's reads are counted in (es_reader.h's budget). */
#define ES_CLIENT_READ_WINDOW_MS 1000

/* Whether every bit of `f` is set. */
static inline bool es_client_is(const struct es_client *c, unsigned f) {
    return (c->flags & f) == f;
}

/* Whether any bit of `f` is set. */
static inline bool es_client_is_any(const struct es_client *c, unsigned f) {
    return (c->flags & f) != 0;
}

/* Its number, from 1 once joined (es_client_join); 0 before. */
static inline uint64_t es_client_id(const struct es_client *c) {
    return c->id;
}

/* When (loop clock) its consumed bytes last grew, or it had nothing left
 * to read (es_client_note_progress). */
static inline uint64_t es_client_moved_ms(const struct es_client *c) {
    return c->moved_ms;
}

/* The program's exit begins: what the client has consumed so far (as of
 * the last es_client_note_progress) is where its pace at exit counts
 * from (es_linger.h). */
static inline void es_client_mark_exit(struct es_client *c) {
    c->exit_consumed = c->consumed_seen;
}
static inline uint64_t es_client_consumed_since_exit(const struct es_client *c) {
    return c->consumed_seen - c->exit_consumed;
}

/* Since when (loop clock, 0: not) a lossless client has held the program
 * up: kept here for es_lossless, its only writer. */
static inline uint64_t es_client_held_since(const struct es_client *c) {
    return c->lossless_held_ms;
}
static inline void es_client_set_held_since(struct es_client *c, uint64_t ms) {
    c->lossless_held_ms = ms;
}

/* Since when (loop clock, 0: not) it has been past its own limit under
 * the disconnect policy: kept here for es_bound, its only writer. */
static inline uint64_t es_client_over_since(const struct es_client *c) {
    return c->over_limit_ms;
}
static inline void es_client_set_over_since(struct es_client *c, uint64_t ms) {
    c->over_limit_ms = ms;
}

/* Whether it asked for the window before the header came: kept here for
 * es_fanout, its only writer. */
static inline bool es_client_window_early(const struct es_client *c) {
    return c->window_early;
}
static inline void es_client_set_window_early(struct es_client *c, bool on) {
    c->window_early = on;
}

/* A notice for this client alone that cannot be made yet: the stream has
 * no header (a notice needs its event types). Its text is kept, after any
 * kept before, until es_client_take_owed; at most ES_CLIENT_OWED_MAX bytes
 * in all (a client that sends command after command before the header
 * holds no more). Returns false when it was not kept (no room, out of
 * memory). */
#define ES_CLIENT_OWED_MAX 4096
bool es_client_owe(struct es_client *c, const char *text);

/* The texts kept by es_client_owe, oldest first, each ending with its
 * NUL, `*len` bytes in all; the caller frees them. NULL when none. */
char *es_client_take_owed(struct es_client *c, size_t *len);

/* The notice for this client alone still to send (es_client_notice), or
 * NULL: what a new one is to carry over. */
static inline const struct es_chunk *es_client_unsent_notice(const struct es_client *c) {
    return c->notice;
}

/* Set (`on`) or clear the bits `f`: the one place a client's state
 * changes; asserts that the transition is legal (enum es_client_flag). */
void es_client_set_flags(struct es_client *c, unsigned f, bool on);

/* A client on the accepted connection `fd` (a Unix socket or TCP), or NULL
 * with *err set (then `fd` is still the caller's to close). */
struct es_client *es_client_new(const struct es_client_env *env, int fd, bool is_unix, int *err);

/* The connection's socket, and its libuv stream (for es_reader.h, which
 * reads it). */
int es_client_fd(const struct es_client *c);
static inline uv_stream_t *es_client_stream(struct es_client *c) {
    return &c->io.stream;
}

/* Its reader (es_reader.h), set once when reading begins, with a fresh
 * control-frame parser; es_client_reader returns it (never NULL once
 * set: asserted). */
void es_client_set_reader(struct es_client *c, void *reader);
void *es_client_reader(const struct es_client *c);

/* The next control frame in what it wrote, through its own parser
 * (es_control_next: returns the bytes taken, at least one); and a custom
 * frame that was no registered command (es_control_ignored). */
size_t es_client_next_frame(struct es_client *c, const uint8_t *buf, size_t len,
                            struct es_control_found *f);
void es_client_frame_ignored(struct es_client *c);

/* Its reads: `n` more bytes read at `now_ms`, counted in the current
 * window (a new one begins once ES_CLIENT_READ_WINDOW_MS have passed);
 * returns the bytes the window has counted. es_client_restart_reads
 * begins a window at `now_ms` that has counted `bytes` already (past the
 * budget: the client is not read until it ends); es_client_reads_due
 * says whether the window has ended at `now_ms`. */
size_t es_client_count_read(struct es_client *c, uint64_t now_ms, size_t n);
void es_client_restart_reads(struct es_client *c, uint64_t now_ms, size_t bytes);
bool es_client_reads_due(const struct es_client *c, uint64_t now_ms);

/* Whether the client has been handed the stream's end marker, or has it
 * in the write in flight: the store has ended and it has no chunk left to
 * take. Nothing may follow it. */
bool es_client_has_end(const struct es_client *c);

/* Send the notice `n` (the caller's reference moves here) to this client
 * alone, before its next chunk; it replaces one still unsent (whose
 * events es_fanout_tell carries over into `n`). */
void es_client_notice(struct es_client *c, struct es_chunk *n);

/* Place a new client in the stream, once, before es_client_start; the
 * places are es_fanout_join's to compute: its number `id` (from 1), the
 * first chunk it is to get (`first`, NULL: the next appended; the store's
 * references from it on, es_store_join, move to the client), the stream
 * offset it joins at (backlog before it is not held against it) and the
 * block of definitions it missed (a reference that moves here, or NULL). */
void es_client_join(struct es_client *c, uint64_t id, struct es_chunk *first, uint64_t joined_at,
                    struct es_chunk *defs);

/* Begin serving an accepted client that es_fanout_join placed in the
 * stream: send what it has (its header only while held: ES_CLIENT_HELD,
 * when env->hold_ms is set). Reading it is es_reader_start's. */
void es_client_start(struct es_client *c);

/* The client asked for cost notices (EVENTLOG_SOCKET_CMD_COST_NOTICES):
 * from now on, once a second at most, in a write that carries chunks of
 * its stream. */
void es_client_want_cost_notices(struct es_client *c);

/* A chunk was appended: a client that had sent everything starts there. */
void es_client_on_append(struct es_client *c, struct es_chunk *chunk);

/* Start the next write if the client is idle and has something to send;
 * while the server stops, a client that has everything is shut down.
 * Nothing before es_client_start. */
void es_client_pump(struct es_client *c);

/* Bytes waiting for the client that are not yet in a write (it could skip
 * them). */
uint64_t es_client_droppable(const struct es_client *c);

/* What es_client_drop skipped. */
struct es_skipped {
    uint64_t chunks, bytes;
    unsigned reusable; /* buffers freed that the pool may keep (es_pool_lend) */
};

/* Bytes of the stream the client has not received: from its write in
 * flight, or its next chunk, to the newest chunk. */
uint64_t es_client_unsent(const struct es_client *c);

/* Skip whole chunks that are not yet in a write until at most `target`
 * bytes wait; never the end-of-data chunk. The client is told with a drop
 * notice before its next chunk. A notice among them (ES_CHUNK_NOTICE) is
 * kept instead and sent before that drop notice (ES_CLIENT_KEPT_MAX). */
struct es_skipped es_client_drop(struct es_client *c, uint64_t target);

/* A client whose write is unfinished and that has consumed nothing of its
 * stream for a while (the exit rule's, ES_EXIT_NEVER_READ_MS) is "stuck":
 * what that write holds (up to ES_CLIENT_MAX_WRITE, or one chunk) cannot
 * be skipped, only freed by closing the connection (es_bound.h). Returns
 * whether the client is stuck at `now_ms`; if so, `*since` is the stream
 * offset where its write begins and `*unique` the bytes that closing it
 * would free (chunks only its write still holds). */
bool es_client_stuck(const struct es_client *c, uint64_t now_ms, uint64_t *since, uint64_t *unique);

/* Note whether the client's stream moved since the last look. */
void es_client_note_progress(struct es_client *c, uint64_t now_ms);

/* Whether the client's stream has not moved for the exit rule's while (it
 * has stopped reading). */
bool es_client_stalled(struct es_client *c, uint64_t now_ms);

/* That while, in ms: half the linger time for a client that has read,
 * ES_EXIT_NEVER_READ_MS for one that never did. */
unsigned es_client_stall_ms(const struct es_client *c);

/* A held client (ES_CLIENT_HELD) that asked for the window: from now on
 * its stream goes on at `first` (NULL: where it was), the references on
 * the chunks between the two places taken or released as it moves, after
 * the block `defs` (a reference that moves here, replacing its pending
 * definitions block), then the client's hold ends. */
void es_client_place(struct es_client *c, struct es_chunk *first, struct es_chunk *defs);

/* End the client's hold (if any) when it is due at `now_ms` (or at once
 * with `now`), and send what it has. Returns the milliseconds the hold
 * still has, 0 when it is over. */
uint64_t es_client_end_hold(struct es_client *c, uint64_t now_ms, bool now);

/* For a client that shut down its writing side (ES_CLIENT_READ_EOF):
 * whether its peer is gone for good, and if so close it. The kernel says
 * so for a Unix socket the peer closed; over TCP once the peer answered
 * bytes with a reset, so a TCP client with nothing else to send is first
 * sent an empty block, unless it was sent one less than `probe_gap_ms`
 * ago (ES_CLIENT_PROBE_MS). False for any other client, and one that is
 * closing already. */
bool es_client_check_peer(struct es_client *c, uint64_t now_ms, uint64_t probe_gap_ms);

/* Close the connection at once; the client is freed when libuv has
 * closed it (unless closed_hook keeps it). The library's own closes go
 * through es_cut_client (es_cut.h), which ends the stream on an event
 * boundary first. */
void es_client_close(struct es_client *c);

/* Close the handle that closed_hook's owner (es_cut.h) reopened on the
 * client's socket. */
void es_client_close_reopened(struct es_client *c);

#endif
