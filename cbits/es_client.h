/* One connected client: its place in the chunk store, its outgoing write
 * and its control-frame parser. Loop thread only. */
#ifndef ES_CLIENT_H
#define ES_CLIENT_H

#include "es_chunk.h"
#include "es_control.h"

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct es_server;

/* At most this much goes into one write, so one client cannot hold the
 * loop for long and the store can free memory behind it as it goes. */
#define ES_CLIENT_MAX_BUFS  64
#define ES_CLIENT_MAX_WRITE (8u << 20)

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

    struct es_chunk *cursor; /* last chunk handed to the socket (a reference) */
    bool header_sent;
    uint64_t joined_at; /* stream offset when it joined; backlog before it is
                         * not counted against the client's limit */

    uv_write_t wreq;
    bool writing;
    struct es_chunk *write_header; /* header in the write in flight (a reference) */
    struct es_chunk *write_last;   /* last chunk in the write in flight */
    uv_shutdown_t sreq;
    bool finishing; /* shutdown requested: everything has been sent */
    bool closing;

    struct es_control_parser control;
    uint8_t rbuf[256];
};

/* Accept a pending connection on the server's listener. */
void es_client_accept(struct es_server *s);

/* Start the next write if the client is idle and has something to send;
 * while the server stops, a client that has everything is shut down. */
void es_client_pump(struct es_client *c);

/* Disconnect when more than the client limit is waiting for it. */
void es_client_check_lag(struct es_client *c);

/* Close the connection; the client is freed when libuv has closed it. */
void es_client_close(struct es_client *c);

#endif
