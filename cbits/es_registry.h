/* Custom control commands and lifecycle hooks that the program registers
 * (eventlog_socket_register_namespace/_command/_hook).
 *
 * A client sends a registered command in the upstream framing (a namespace
 * and a command id, protocol.md section 2). The loop thread only looks the
 * namespace up and queues the command: handlers never run on it, so a slow
 * handler cannot stop the stream. Each namespace has a thread of its own
 * that runs its handlers in order, so a slow or stuck handler holds up only
 * its own namespace's commands; hooks run on one more thread. Those
 * threads hold no capability and are not the RTS's: a handler may call into
 * Haskell (a function pointer made with "foreign import ccall wrapper"),
 * which makes it a bound Haskell thread for the call.
 *
 * Commands are rate-limited per namespace like the built-in costly ones,
 * and repeated requests are folded (es_registry_set_interval).
 *
 * Handlers run only while the RTS is up: commands that arrive before
 * es_registry_set_running(true) wait for it; once es_registry_quiesce has
 * run (hs_exit is beginning) nothing runs any more and what waits is
 * dropped.
 *
 * Thread ownership: registration from any thread (a mutex); dispatch from
 * the loop thread; handlers on the registry's threads. */
#ifndef ES_REGISTRY_H
#define ES_REGISTRY_H

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Commands that may wait for one namespace's thread; more are dropped,
 * with a log line. */
#define ES_REGISTRY_QUEUE 64

/* A frame for a namespace that is not the built-in one arrived. Returns
 * whether the namespace and command are registered (then the command is
 * queued for its handler). Loop thread. */
bool es_registry_dispatch(const uint8_t *ns, size_t ns_len, uint8_t id);

/* A client connected: the POST_START hooks run for it (queued). Loop
 * thread. */
void es_registry_client_connected(void);

/* Let handlers run (the RTS is up), or not yet. With `true` the first time,
 * the POST_START hooks run once for event logging's start. Any thread. */
void es_registry_set_running(bool running);

/* hs_exit is beginning: run the PRE_END hooks on the calling thread, then
 * stop every handler thread from starting another handler, drop what
 * waits, and wait at most `timeout_ms` for handlers that are running.
 * Any thread that holds no capability; once. */
void es_registry_quiesce(unsigned timeout_ms);

/* Commands run and dropped so far, and requests folded into one already
 * queued (tests). */
void es_registry_counts(uint64_t *run, uint64_t *dropped);
uint64_t es_registry_folded(void);

/* A namespace runs one command per `ms` at most, and after a command that
 * took d ms of CPU time not again before ES_GATE_COST_FACTOR * d
 * (GHC_EVENTLOG_CONTROL_INTERVAL_MS; 0: no limit; default 1000). A request
 * for a command already queued is folded into it. Any thread. */
void es_registry_set_interval(unsigned ms);

#endif
