/* State shared by the modules that run on RTS threads or call the RTS. The
 * writer callbacks have no context argument, so the library's one server
 * is reached through this struct. */
#ifndef ES_RTS_H
#define ES_RTS_H

#include "eventlog_socket.h"
#include "es_server.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct es_rts {
    /* Set before the writer is started, read by every writer callback. */
    _Atomic(struct es_server *) server;
    /* True in a forked child: the server's loop thread lives only in the
     * parent, so the child discards its eventlog. */
    atomic_bool forked;

    /* Control commands; guarded by control_lock. Commands that arrive
     * before eventlog_socket_ready() are remembered (the last start/stop
     * and whether a census was asked for) and applied then. */
    pthread_mutex_t control_lock;
    bool ready;
    uint8_t pending_profiling; /* 0, or the last start/stop command */
    bool pending_census;
};

extern struct es_rts es_rts;

/* Apply one control command to the RTS now (heap_control.c). Thread-safe;
 * without a heap profiling mode (-h) it does nothing. */
void es_rts_heap_control(uint8_t cmd);

/* The loop thread's command callback (api.c). */
void es_rts_on_command(uint8_t cmd, void *ctx);

#endif
