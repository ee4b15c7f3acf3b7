/* SPDX-License-Identifier: BSD-3-Clause */
/* Custom control commands and lifecycle hooks that the program registers
 * (eventlog_socket_register_namespace/_command, eventlog_socket_add_hook,
 * and upstream's eventlog_socket_control_register_namespace/_command and
 * eventlog_socket_register_hook, whose
 * handlers take a const pointer: es_upstream.c).
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
 * dropped. The POST_START hooks run first on the thread that declares the
 * RTS ready (es_registry_post_start), then on the hook thread: for a
 * client that joins later (es_registry_client_connected), and once for a
 * hook registered after the start.
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

/* Register a command or a hook: exactly one of `fn` (this library's
 * handler type) and `ufn` (upstream's) is set. Returns 0,
 * EVENTLOG_SOCKET_EINVAL, _EEXIST (a command id taken) or _ENOMEM. Any
 * thread. */
int es_registry_add_command(eventlog_socket_namespace *ns, uint8_t id,
                            eventlog_socket_command_fn fn, EventlogSocketControlCommandHandler *ufn,
                            const void *data);
int es_registry_add_hook(int hook, eventlog_socket_hook_fn fn, EventlogSocketHookHandler *ufn,
                         const void *data);

/* A client joined that did not get the stream from its start (every
 * client but the first): the POST_START hooks run for it (queued for the
 * hook thread), so that what they post reaches it. Loop thread. */
void es_registry_client_connected(void);

/* Event logging has started and the RTS is up: the first call runs the
 * POST_START hooks registered so far on the calling thread, in order, and
 * returns when they are done; later calls do nothing. A thread that holds
 * no capability (hooks may call into Haskell). */
void es_registry_post_start(void);

/* Let handlers run (the RTS is up), or not yet. Any thread. */
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

/* Tests: the next `n` starts of a handler thread fail, as when no thread
 * can be created for the moment. */
void es_registry_fail_thread_starts(unsigned n);

/* A namespace runs one command per `ms` at most, and after a command that
 * cost d ms not again before ES_GATE_COST_FACTOR * d
 * (GHC_EVENTLOG_CONTROL_INTERVAL_MS; 0: no limit; default 1000). A request
 * for a command already queued is folded into it. Any thread.
 *
 * What a command cost is its thread's CPU time, unless the RTS collected
 * while it ran (docs/haskell.md's example forces a major GC): a
 * collection stops every capability, whose GC threads work (or spin) as
 * long as the handler's does, so then it is that time for each
 * capability. */
void es_registry_set_interval(unsigned ms);

/* What the registry asks the RTS (rts-writer/): the number of collections
 * so far, and of capabilities. Without them a command costs its thread's
 * CPU time. Any thread, before handlers run. */
void es_registry_set_rts(uint64_t (*collections)(void), unsigned (*capabilities)(void));

#endif
