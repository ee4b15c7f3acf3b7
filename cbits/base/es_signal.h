/* SPDX-License-Identifier: BSD-3-Clause */
/* The program's signals, as far as the library must see them.
 *
 * SIGINT (Ctrl-C; SIGTERM too under GHC_EVENTLOG_GRACEFUL_SIGTERM, which
 * sends SIGINT) asks the program for an orderly exit: GHC's main installs
 * a handler (through the RTS) whose work, throwing UserInterrupt to the
 * main thread, runs in Haskell and so needs a capability. A program
 * thread that waits for a lossless client in writeEventLog holds one, so
 * with one capability (or a GC waiting for that one) the exit would wait
 * for that client. The library therefore chains a handler of its own in
 * front of whatever SIGINT handler is installed: it only counts the signal
 * (an atomic, async-signal-safe) and calls that handler, which goes on as
 * before; the loop thread sees the count change and releases the waits
 * (es_lossless.h), and a thread waiting for the first client
 * (eventlog_socket_wait_for_client) returns. Since the program (GHC's main first of
 * all) may install its handler after the library has chained, the chain is
 * renewed when a client becomes lossless and right before a program thread
 * begins to wait for a lossless client, in front of the handler installed
 * then. A handler installed while such a wait goes on is not seen until
 * the next wait.
 *
 * Before the RTS is up (a C main waiting for its first client under
 * GHC_EVENTLOG_WAIT) SIGINT and SIGTERM have their default action, which
 * ends the process at once: while that wait lasts, a guard handler removes
 * the socket file first (through `cleanup`, which must be
 * async-signal-safe), then lets the signal end the process as it would
 * have.
 *
 * Any thread; the handlers run on whichever thread takes the signal (the
 * library's own threads block every signal). */
#ifndef ES_SIGNAL_H
#define ES_SIGNAL_H

#include <stdbool.h>

/* Put the counting handler in front of the current SIGINT handler, unless
 * it is there already, or SIGINT is ignored. Any thread (concurrent calls:
 * one of them does it). */
void es_signal_chain(void);

/* SIGINTs the chained handler has seen. */
unsigned es_signal_count(void);

/* For tests: count one, as the handler does. */
void es_signal_note(void);

/* While a wait lasts: for SIGINT and SIGTERM whose action is the default
 * (ending the process), call `cleanup(ctx)` first. es_signal_unguard
 * restores the previous actions. Any thread; guards taken while one is in
 * force (two threads waiting at once) count: the first one's cleanup
 * serves them all (one server per process), and the last unguard
 * restores. */
void es_signal_guard(void (*cleanup)(void *), void *ctx);
void es_signal_unguard(void);

#endif
