/* SPDX-License-Identifier: BSD-3-Clause */
/* State shared by the modules that run on RTS threads or call the RTS. The
 * writer callbacks have no context argument: the library's one server is
 * reached through es_instance_server(). */
#ifndef ES_RTS_H
#define ES_RTS_H

#include "eventlog_socket.h"
#include "format/es_commands.h"
#include "server/es_instance.h"

/* Rts.h does not define the GHC version; without this header every
 * `#if __GLASGOW_HASKELL__ >= 902` would silently take the 9.0 path. */
#include <ghcversion.h>
#if !defined(__GLASGOW_HASKELL__) || __GLASGOW_HASKELL__ < 900
#error "eventlog-socket needs GHC >= 9.0's ghcversion.h"
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct es_rts {
    /* True in a forked child: the server's loop thread lives only in the
     * parent, so the child discards its eventlog. */
    atomic_bool forked;

    /* Control commands; guarded by control_lock. Commands that arrive
     * before eventlog_socket_ready() are remembered, the last of each
     * kind (its row's gate, format/es_commands.h: the last heap
     * start/stop, whether a census was asked for, the last cost-centre
     * start/stop), and applied then in the kinds' order. */
    pthread_mutex_t control_lock;
    bool ready;
    uint8_t pending[ES_COMMANDS_GATES]; /* 0, or the last command of that kind */
    /* The event classes' switches that came before, composed in order
     * (the classes to switch on, and off; never one in both). */
    uint8_t pending_on, pending_off;

    /* Periodic RTS flushes (GHC >= 9.2). flush_lock is held for the whole
     * of each flush, so clearing flush_allowed under it also waits for a
     * flush in progress to end. */
    pthread_mutex_t flush_lock;
    bool flush_allowed; /* from eventlog_socket_hs_main's start to hs_exit */
    int flush_ms;       /* the interval; -1 for the default */

    /* GHC_EVENTLOG_GRACEFUL_SIGTERM: eventlog_socket_hs_main makes SIGTERM
     * interrupt the program as SIGINT does (hs_main.c). */
    bool graceful_sigterm;
};

extern struct es_rts es_rts;

/* A command that acts on the program (its row's scope is
 * ES_COMMANDS_PROGRAM, format/es_commands.h), from the loop thread: the
 * instance's on_command (control.c). Applied now, by its row's target,
 * when the program is ready; otherwise the last of its kind waits. */
void es_rts_on_command(uint8_t cmd, void *ctx);

/* The event classes on now, those this program can switch, and why the
 * others cannot (event_classes.c; the instance's event_classes). Returns
 * 0, or EVENTLOG_SOCKET_ENOTSUP when none can. Any thread. */
int es_rts_event_classes(unsigned *on, unsigned *can, const char **why);

/* Switch the classes `on` on and `off` off, and tell every client's stream
 * so, naming who asked (`by`: "the program", "a client"): 0,
 * EVENTLOG_SOCKET_EINVAL or EVENTLOG_SOCKET_ENOTSUP (logged; nothing
 * switched). Any thread, once the RTS is up (event_classes.c). */
int es_rts_switch_classes(unsigned on, unsigned off, const char *by);

/* The RTS's clock, which stamps its events (ns since it began to start):
 * false where this program's RTS keeps it to itself (-dynamic). Any
 * thread (spans.c). */
bool es_rts_now(uint64_t *ns);

/* eventlog_socket_ready: the program is ready for commands; those that
 * waited are applied now, in the kinds' order (control.c). */
void es_rts_control_ready(void);

/* Start flushing the RTS's buffers periodically while clients are connected
 * (flush.c). Only call it once exit_hook is in place (eventlog_socket_hs_main,
 * or es_rts_install_exit_hook returned true), because only that guarantees
 * that flushing stops before shutdown begins. No-op before 9.2. */
void es_rts_flush_enable(void);

/* Run a major GC now, so that a census just requested is taken at once
 * even in an idle program (flush.c). Only while flushing is allowed (from
 * eventlog_socket_hs_main's start to hs_exit); otherwise nothing. Any
 * thread that holds no capability. */
void es_rts_census_gc(void);

/* Make the hook that stops flushing the first thing hs_exit does, ahead of
 * the program's own onExitHook, in the configuration `conf` that
 * eventlog_socket_hs_main is about to start the RTS with (exit_hook.c). */
void es_rts_take_exit_hook(RtsConfig *conf);

/* For a program that GHC's own main started (eventlog_socket_start_*): put
 * the hook that stops flushing first into hs_exit, ahead of the program's own
 * (exit_hook.c). Returns false when the RTS's configuration cannot be reached
 * (a program linked with -dynamic); then there must be no periodic flushes.
 * True at once when eventlog_socket_hs_main installed it already. */
bool es_rts_install_exit_hook(void);

/* The RTS's error messages into the stream as notices, and with
 * GHC_EVENTLOG_DUMP_ON_FAILURE set, the window written to that file when
 * the program exits with a non-zero status (failure.c, through the RTS's
 * errorMsgFn and exitFn). Once; any thread, after the server has started. */
void es_rts_watch_failure(void);

/* Stop flushing; waits for a flush in progress. Any thread except the loop
 * thread; must run before hs_exit shuts the RTS down. */
void es_rts_flush_disable(void);

/* Apply a new interval to a running flush timer. */
void es_rts_flush_update(void);

/* Switch the running RTS to this library's writer, for the server that
 * init_* started (api.c): stop the current writer, start ours, then
 * eventlog_socket_ready (the POST_START hooks run), then with `wait` wait
 * for the first client. On an error the server is stopped. Returns 0,
 * EVENTLOG_SOCKET_ENOEVENTLOG, _EEVENTLOGOFF, or what the wait returns.
 * A thread that holds no capability. */
int es_rts_switch_writer(bool wait);
/* Whether the running RTS can be switched over (before anything is set up):
 * 0, EVENTLOG_SOCKET_ENOEVENTLOG (an RTS without -eventlog) or
 * EVENTLOG_SOCKET_EEVENTLOGOFF (run without +RTS -l). */
int es_rts_can_switch(void);

/* eventlog_socket_hs_main, with a wait for the first client after the
 * POST_START hooks and before `main_closure` runs when `wait`
 * (hs_main.c; eventlog_socket_wrap_hs_main's). Does not return. */
int es_rts_hs_main(int argc, char *argv[], RtsConfig conf, StgClosure *main_closure, bool wait);

#endif
