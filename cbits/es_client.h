/* One connected client: its place in the chunk store, its outgoing write
 * and its control-frame parser. Loop thread only. */
#ifndef ES_CLIENT_H
#define ES_CLIENT_H

#include "es_store.h"
#include "es_control.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_server;

/* At most this much goes into one write (but always at least one whole
 * chunk), so one client cannot hold the loop for long, and a client that
 * stops reading pins little memory in its unfinished write. */
#define ES_CLIENT_MAX_BUFS  64
#define ES_CLIENT_MAX_WRITE (2u << 20)

struct es_client {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } io;
    struct es_server *server;
    struct es_client *prev, *next;
    uint64_t id;

    /* The first chunk still to send, or NULL when everything has been
     * handed to the socket. The client holds a reference on every chunk
     * from it to the newest: each appended chunk counts every client. */
    struct es_chunk *next_chunk;
    bool header_sent;
    struct es_chunk *defs; /* definitions block still to send (a reference) */
    uint64_t joined_at;    /* stream offset when it joined; backlog before it is
                            * not counted against the client's limit */

    /* Chunks skipped since the last drop notice. */
    uint64_t gap_chunks, gap_bytes, gap_time;

    uv_write_t wreq;
    bool writing;
    /* The chunks of the write in flight, first to last along the list; the
     * client's references on them belong to the write until it ends. */
    struct es_chunk *write_first, *write_last;
    struct es_chunk *write_extra[3]; /* header, definitions, drop notice in
                                      * the write (references), or NULL */
    bool write_has_header;
    size_t write_bytes;
    /* Progress, for the exit rule (es_exit_stall_ms): bytes of finished
     * writes, how many bytes the client had consumed at the last look, when
     * that last grew (or the client had nothing left to read), and whether
     * it ever consumed anything. */
    uint64_t bytes_done;
    uint64_t consumed_seen;
    uint64_t moved_ms;
    bool ever_read;
    uv_shutdown_t sreq;
    bool finishing; /* shutdown requested: everything has been sent */
    bool closing;

    struct es_control_parser control;
    /* What the client wrote in the current one-second window; past
     * ES_CLIENT_READ_BUDGET its socket is not read until the window ends. */
    uint64_t read_window_ms;
    size_t read_bytes;
    bool read_paused; /* reading stopped for the budget */
    bool read_eof;    /* the client has shut down its writing side */
};

/* Bytes a client may write per second. Control frames are 5 bytes, and a
 * client may bury them in megabytes of other bytes (protocol.md, section
 * 2), but past this the server stops reading that client until the second
 * is over, so that the kernel makes a client flooding the socket wait
 * instead of the loop thread reading and parsing for it: a client writing
 * census requests as fast as it could kept the loop thread busy on one of
 * two cores and made the program 3 times slower. Reads go into one buffer
 * of the server's (ES_SERVER_READ_BUF), 64 KiB at a time. */
#define ES_CLIENT_READ_BUDGET ((size_t)4 << 20)

/* Accept a pending connection on the server's listener. */
void es_client_accept(struct es_server *s);

/* A chunk was appended: a client that had sent everything starts there. */
void es_client_on_append(struct es_client *c, struct es_chunk *chunk);

/* Start the next write if the client is idle and has something to send;
 * while the server stops, a client that has everything is shut down. */
void es_client_pump(struct es_client *c);

/* Apply the slow-client policy when more than the client limit waits. */
void es_client_check_lag(struct es_client *c);

/* Bytes waiting for the client that are not yet in a write (it could skip
 * them). */
uint64_t es_client_droppable(const struct es_client *c);

/* Skip whole chunks that are not yet in a write until at most `target`
 * bytes wait; never the end-of-data chunk. The client is told with a drop
 * notice before its next chunk. Returns the number of chunks skipped. */
uint64_t es_client_drop(struct es_client *c, uint64_t target);

/* A client whose write is unfinished and that has consumed nothing of its
 * stream for a while is "stuck": what that write holds (up to
 * ES_CLIENT_MAX_WRITE, or one chunk) cannot be skipped, only freed by
 * closing the connection, which es_server.c's enforce_bound does when stuck
 * clients pin more than the bound allows. A while is the exit rule's
 * (es_exit_stall_ms): 250 ms for a client that never read anything, half
 * the linger time for one that did. Returns whether the client is stuck at
 * `now_ms`; if so, `*since` is the stream offset where its write begins
 * and `*unique` the bytes that closing it would free (chunks only its
 * write still holds). */
bool es_client_stuck(const struct es_client *c, uint64_t now_ms, uint64_t *since, uint64_t *unique);

/* Disconnect a client that fell `lag` bytes behind, with a log line. */
void es_client_disconnect_lagging(struct es_client *c, uint64_t lag, const char *limit);

/* Note whether the client's stream moved since the last look. */
void es_client_note_progress(struct es_client *c, uint64_t now_ms);

/* While the server stops: close the client if its stream has not moved
 * for es_exit_stall_ms. */
void es_client_check_exit_stall(struct es_client *c, uint64_t now_ms);

/* Resume reading a client whose budget window has ended (paused ones
 * only). Returns whether it is still paused. */
bool es_client_resume_reading(struct es_client *c, uint64_t now_ms);

/* Close the connection; the client is freed when libuv has closed it. */
void es_client_close(struct es_client *c);

#endif
