/* SPDX-License-Identifier: BSD-3-Clause */
/* SocketEventLogWriter (also EventLogSocketWriter): the callbacks the RTS calls. They run on
 * arbitrary RTS threads, concurrently, possibly holding a capability or with the world stopped, so
 * they only copy and queue: no socket I/O, no waiting on clients, no calls back into the RTS, and
 * writeEventLog always returns true (false would make the RTS drop the buffer and damage the
 * stream). */
#include "es_rts.h"

#include "base/es_log.h"

#include <unistd.h>

static void writer_init(void) {
    struct es_server *s = es_instance_server();
    if (s == NULL) {
        es_log("SocketEventLogWriter is installed but no socket is configured (call "
               "eventlog_socket_init_* before hs_init_ghc); the eventlog is discarded");
        return;
    }
    if (es_server_pid(s) != getpid() && !atomic_exchange(&es_rts.forked, true))
        es_log("event logging restarted in forked child %ld; its eventlog is not streamed",
               (long)getpid());
}

static bool writer_write(void *buf, size_t size) {
    struct es_server *s = es_instance_server();
    if (s != NULL && !atomic_load_explicit(&es_rts.forked, memory_order_relaxed))
        es_server_submit(s, buf, size);
    return true;
}

/* Nothing to do: every chunk is queued for the clients as soon as it is
 * written, so this library holds nothing back. */
static void writer_flush(void) {
}

/* Runs on the thread that ends event logging (hs_exit): deliver the rest,
 * end marker included, to every client within the linger time. */
static void writer_stop(void) {
    struct es_server *s = es_instance_server();
    if (s != NULL && !atomic_load(&es_rts.forked))
        es_server_stop(s);
}

const EventLogWriter SocketEventLogWriter = {
    .initEventLogWriter = writer_init,
    .writeEventLog = writer_write,
    .flushEventLog = writer_flush,
    .stopEventLogWriter = writer_stop,
};

/* Upstream's name for it since 0.1.2: the same object (one address). */
extern const EventLogWriter EventLogSocketWriter __attribute__((alias("SocketEventLogWriter")));
