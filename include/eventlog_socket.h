/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eventlog-socket: stream a GHC program's eventlog, live, over a Unix-domain
 * or TCP socket to any number of clients.
 *
 * This is the library's only public header. Typical use from a custom C main
 * (link the Haskell program with -no-hs-main):
 *
 *     #include <Rts.h>
 *     #include <eventlog_socket.h>
 *     extern StgClosure ZCMain_main_closure;
 *
 *     int main(int argc, char *argv[]) {
 *         RtsConfig conf = defaultRtsConfig;
 *         conf.rts_opts_enabled = RtsOptsAll;
 *         conf.rts_opts = "-l";
 *         conf.eventlog_writer = &SocketEventLogWriter;
 *         int err = eventlog_socket_init_unix("/tmp/my-program.eventlog.sock");
 *         if (err < 0)
 *             fprintf(stderr, "%s\n", eventlog_socket_error_message(err));
 *         return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
 *     }
 *
 * Every function of this API that can fail returns 0 on success or a
 * negative error code (one of the EVENTLOG_SOCKET_E* values below, or a
 * negated errno value that the operating system reported).
 * eventlog_socket_error_message() describes any of them. No function of
 * this library calls abort() or exit().
 *
 * Upstream eventlog-socket 0.1.3's C API is here too, with its names,
 * types and semantics (the sections marked "upstream" below), so that a C
 * main written for it compiles unchanged: eventlog_socket_from_env,
 * eventlog_socket_wrap_hs_main, EventLogSocketWriter, the
 * EventlogSocketStatus its functions return, and so on. Both APIs drive the
 * same server; a program may use either, or both.
 *
 * Define EVENTLOG_SOCKET_NO_RTS before including this header to get only the
 * parts that do not need GHC's <Rts.h> (everything but the writer and the
 * functions that take RTS types). The library's RTS-independent modules and
 * their unit tests do so.
 */
#ifndef EVENTLOG_SOCKET_H
#define EVENTLOG_SOCKET_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(EVENTLOG_SOCKET_NO_RTS)
#include <Rts.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* This package's version, as ghc-eventlog-socket.cabal, the .pc file and
 * `eventlog-socket --version` say it (tests/check-version.sh). */
#define EVENTLOG_SOCKET_VERSION "0.3.0.0"

/* The library is built with hidden visibility; only what is marked with this
 * is exported. */
#if defined(__GNUC__)
#define EVENTLOG_SOCKET_API __attribute__((visibility("default")))
#else
#define EVENTLOG_SOCKET_API
#endif

/* Error codes. The first group are negated errno values, so that an error
 * from the operating system and the library's own use of the same condition
 * compare equal. The second group has no errno equivalent. */
#define EVENTLOG_SOCKET_EINVAL       (-EINVAL)
#define EVENTLOG_SOCKET_ENOMEM       (-ENOMEM)
#define EVENTLOG_SOCKET_ENAMETOOLONG (-ENAMETOOLONG)
#define EVENTLOG_SOCKET_EADDRINUSE   (-EADDRINUSE)
#define EVENTLOG_SOCKET_EALREADY     (-EALREADY)
#define EVENTLOG_SOCKET_EEXIST       (-EEXIST)
#define EVENTLOG_SOCKET_ENOTSUP      (-ENOTSUP)
/* The Unix socket path exists and is not a socket; it was left untouched. */
#define EVENTLOG_SOCKET_ENOTSOCKET (-30001)
/* No socket was configured (no init call, or no environment variable). */
#define EVENTLOG_SOCKET_ENOTCONFIGURED (-30002)
/* The RTS could not start event logging (no eventlog support linked in). */
#define EVENTLOG_SOCKET_ENOEVENTLOG (-30003)
/* The server has stopped (the program is exiting or the loop failed). */
#define EVENTLOG_SOCKET_ESTOPPED (-30004)
/* The TCP host name could not be resolved. */
#define EVENTLOG_SOCKET_ERESOLVE (-30005)
/* eventlog_socket_start_*: event logging is off in this run (the program was
 * started without +RTS -l), so the stream would hold no events. */
#define EVENTLOG_SOCKET_EEVENTLOGOFF (-30006)
/* eventlog_socket_wait: the program was interrupted (SIGINT) before a
 * client connected. */
#define EVENTLOG_SOCKET_EINTR (-EINTR)

/* Control commands a client sends as the byte after the "GCTL" magic, or
 * as upstream eventlog-socket's frames in its namespace "eventlog-socket"
 * (ids 3, 4, 5, 1, 2 in this order; see protocol.md section 2). Heap
 * commands need a heap profiling mode (+RTS -h...), cost-centre commands a
 * profiled program (ghc -prof); otherwise they are ignored, with one log
 * line. */
#define EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING 0x01
#define EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING  0x02
#define EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS  0x03
/* Cost-centre (time) profiling: the RTS's startProfTimer/stopProfTimer.
 * Samples are PROF_SAMPLE_COST_CENTRE (167) events. */
#define EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING 0x04
#define EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING  0x05
/* Lossless delivery for the connection that sends it (upstream id 6): the
 * server never skips chunks for it or disconnects it for falling behind;
 * the program waits for it instead (see EVENTLOG_SOCKET_SLOW_CLIENT_WAIT).
 * Other connections keep the program's policy. */
#define EVENTLOG_SOCKET_CMD_LOSSLESS 0x06
/* Cost notices for the connection that sends it (upstream id 7): at most
 * once a second, that connection alone gets a notice in its stream saying
 * how much CPU time streaming cost the program since its previous one
 * (protocol.md, section 1.3). Other connections' streams are unchanged. */
#define EVENTLOG_SOCKET_CMD_COST_NOTICES 0x07
/* The window, for the connection that sends it (upstream id 8), as the
 * first thing it sends: in a program that keeps one
 * (eventlog_socket_options.retain_bytes), that connection gets the
 * definitions, a notice, the window's blocks in the order they came, then
 * the live stream; otherwise, or when asked after its stream has begun, a
 * notice saying why not, and the live stream (protocol.md, section 2). */
#define EVENTLOG_SOCKET_CMD_WINDOW 0x08
/* The event classes (upstream id 9), for the connection that sends it: it
 * alone gets a notice saying which classes are on, which off, and which
 * cannot be switched in this program (protocol.md, section 1.3). */
#define EVENTLOG_SOCKET_CMD_EVENT_CLASSES 0x09
/* Switch event classes on or off: "GCTL", this byte, then one byte of
 * EVENTLOG_SOCKET_EVENTS_* bits (the classes); in upstream's framing, id
 * EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON | classes (or _OFF | classes). Rate
 * limited as the heap commands are; every client's stream gets a notice of
 * the switch. See eventlog_socket_switch_event_classes. */
#define EVENTLOG_SOCKET_CMD_EVENTS_ON       0x0a
#define EVENTLOG_SOCKET_CMD_EVENTS_OFF      0x0b
#define EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON  0x40
#define EVENTLOG_SOCKET_UPSTREAM_EVENTS_OFF 0x80

/* The RTS's classes of events, as +RTS -l's letters choose them at start:
 * s, g, n, p, f, u. */
#define EVENTLOG_SOCKET_EVENTS_SCHEDULER      0x01u /* threads run, stop, migrate (-ls) */
#define EVENTLOG_SOCKET_EVENTS_GC             0x02u /* collections, heap sizes (-lg) */
#define EVENTLOG_SOCKET_EVENTS_NONMOVING_GC   0x04u /* the nonmoving heap's census (-ln) */
#define EVENTLOG_SOCKET_EVENTS_SPARKS_SAMPLED 0x08u /* spark counters (-lp) */
#define EVENTLOG_SOCKET_EVENTS_SPARKS_FULL    0x10u /* every spark event (-lf) */
#define EVENTLOG_SOCKET_EVENTS_USER           0x20u /* traceEvent, traceMarker (-lu) */
#define EVENTLOG_SOCKET_EVENTS_ALL            0x3fu

/* ---- Upstream: the status its functions return ----------------------
 *
 * Upstream eventlog-socket's functions return an EventlogSocketStatus
 * instead of an int. This library fills it in from its own error codes:
 *
 *   the library's code                  ess_status_code            ess_error_code
 *   0                                    EVENTLOG_SOCKET_OK         0
 *   a negated errno value -E             EVENTLOG_SOCKET_ERR_SYS    E
 *   EVENTLOG_SOCKET_ENOTSOCKET           EVENTLOG_SOCKET_ERR_SYS    ENOTSOCK
 *   EVENTLOG_SOCKET_ESTOPPED             EVENTLOG_SOCKET_ERR_SYS    ESHUTDOWN
 *   EVENTLOG_SOCKET_ENOTCONFIGURED       EVENTLOG_SOCKET_ERR_SYS    EINVAL
 *                                        (ERR_ENV_NOADDR from eventlog_socket_from_env)
 *   EVENTLOG_SOCKET_ERESOLVE             EVENTLOG_SOCKET_ERR_GAI    getaddrinfo's code
 *   EVENTLOG_SOCKET_ENOEVENTLOG          EVENTLOG_SOCKET_ERR_RTS_FAIL   the library's code
 *   EVENTLOG_SOCKET_EEVENTLOGOFF         EVENTLOG_SOCKET_ERR_RTS_FAIL   the library's code
 *   a namespace or command taken         EVENTLOG_SOCKET_ERR_CTL_EXISTS 0
 *
 * EVENTLOG_SOCKET_ERR_RTS_NOSUPPORT and _ERR_CTL_NOSUPPORT are never
 * returned: the library needs an eventlog-capable RTS to link, and control
 * commands are always built in. */
typedef enum EventlogSocketStatusCode {
    EVENTLOG_SOCKET_OK = 0,
    EVENTLOG_SOCKET_ERR_RTS_NOSUPPORT,
    EVENTLOG_SOCKET_ERR_RTS_FAIL,
    EVENTLOG_SOCKET_ERR_ENV_NOADDR,
    EVENTLOG_SOCKET_ERR_ENV_TOOLONG,
    EVENTLOG_SOCKET_ERR_ENV_NOHOST,
    EVENTLOG_SOCKET_ERR_ENV_NOPORT,
    EVENTLOG_SOCKET_ERR_CTL_NOSUPPORT,
    EVENTLOG_SOCKET_ERR_CTL_EXISTS,
    EVENTLOG_SOCKET_ERR_GAI,
    EVENTLOG_SOCKET_ERR_SYS,
} EventlogSocketStatusCode;

typedef struct EventlogSocketStatus {
    const EventlogSocketStatusCode ess_status_code;
    /* errno for ERR_SYS, getaddrinfo's code for ERR_GAI, the library's own
     * (negative) error code for ERR_RTS_FAIL, otherwise 0. */
    const int ess_error_code;
} EventlogSocketStatus;

/* A description of `status`, in memory from malloc that the caller frees
 * (upstream's contract); NULL with errno set when there is no memory, or
 * EINVAL for a status code that does not exist. Thread-safe. */
EVENTLOG_SOCKET_API char *eventlog_socket_strerror(EventlogSocketStatus status);

/* A description of one of this library's int error codes (0, an
 * EVENTLOG_SOCKET_E* value or a negated errno). Never returns NULL; unknown
 * codes get a generic description. Thread-safe; the string is static.
 * (Before 0.3 this was eventlog_socket_strerror, a name upstream uses for
 * the function above.) */
EVENTLOG_SOCKET_API const char *eventlog_socket_error_message(int err);

/* Custom control commands. A program (or a library in it) registers a
 * namespace and commands in it, numbered 1 to 255; a client sends one as an
 * upstream-framed control frame (protocol.md, section 2) with that
 * namespace and id, and the handler runs. Handlers run on a thread of the
 * library's, one per namespace (so a slow handler holds up only its own
 * namespace's commands, never the stream or other namespaces), that holds
 * no capability: a handler may call into Haskell. They run only between
 * the RTS's start (eventlog_socket_ready) and the beginning of hs_exit;
 * commands that arrive earlier wait, at most 64 per namespace wait at any
 * time. A handler must not call the library's start/stop functions.
 * Registration is thread-safe and may happen before or after the server
 * starts; nothing can be unregistered. */
typedef struct EventlogSocketControlNamespace eventlog_socket_namespace;
typedef void (*eventlog_socket_command_fn)(const eventlog_socket_namespace *ns, uint8_t command_id,
                                           void *user_data);

/* Register the namespace `name` (`len` bytes, 1 to 255, any bytes). Returns
 * EVENTLOG_SOCKET_EINVAL for an empty or too long name or the reserved
 * "eventlog-socket", EVENTLOG_SOCKET_EEXIST when it is registered already,
 * EVENTLOG_SOCKET_ENOMEM. */
EVENTLOG_SOCKET_API int eventlog_socket_register_namespace(const char *name, size_t len,
                                                           eventlog_socket_namespace **out);

/* Register command `command_id` (1 to 255) of `ns`. Returns
 * EVENTLOG_SOCKET_EINVAL for id 0 or a NULL handler, EVENTLOG_SOCKET_EEXIST
 * when that id is registered already. */
EVENTLOG_SOCKET_API int eventlog_socket_register_command(eventlog_socket_namespace *ns,
                                                         uint8_t command_id,
                                                         eventlog_socket_command_fn fn,
                                                         void *user_data);

/* The namespace's name, NUL-terminated (valid for the program's life). */
EVENTLOG_SOCKET_API const char *eventlog_socket_namespace_name(const eventlog_socket_namespace *ns);

/* Lifecycle hooks (upstream's, with upstream's names), each run in
 * registration order:
 * POST_START: once when event logging has started and the RTS is up,
 *   synchronously on the thread that declares the RTS ready, before
 *   anything else happens there: in eventlog_socket_hs_main and
 *   eventlog_socket_wrap_hs_main on the main thread, after hs_init_ghc and
 *   before the program's main runs (a hook that takes long delays main);
 *   in eventlog_socket_start_* and eventlog_socket_start before they
 *   return; otherwise in eventlog_socket_ready. That thread holds no
 *   capability: a hook may call into Haskell. The first client gets what
 *   the hook posted then, since it gets the stream from its start (unless
 *   more than the buffer limit arrived before it connected: then the hooks
 *   run once more for it). Each later client gets a run of its own, on a
 *   thread of the library's, after it has joined the stream: what the hook
 *   posts then reaches that client (the clients connected already see it
 *   again). A hook registered after the start runs once at registration,
 *   on the library's thread, then for each later client.
 * PRE_END: at the beginning of hs_exit, on the thread that exits, while the
 *   RTS still runs and clients still receive events. Event logging ends
 *   only there: a client that disconnects or connects ends nothing.
 *   (Programs started from Haskell and linked with -dynamic cannot reach
 *   the RTS's exit hook, so they run no PRE_END hooks.) */
typedef enum {
    EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING,
    EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING,
} EventlogSocketHook;

/* Upstream's handler type and registration (0.1.3). Returns
 * EVENTLOG_SOCKET_ERR_SYS with EINVAL for an unknown hook or a NULL
 * handler, or ENOMEM. Thread-safe. */
typedef void EventlogSocketHookHandler(const void *hook_data);
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_register_hook(
    EventlogSocketHook hook, EventlogSocketHookHandler *hook_handler, const void *hook_data);

/* The same with this library's int errors: EVENTLOG_SOCKET_EINVAL for an
 * unknown hook or a NULL handler, EVENTLOG_SOCKET_ENOMEM. (Before 0.3 this
 * was eventlog_socket_register_hook, a name upstream uses for the function
 * above.) */
typedef void (*eventlog_socket_hook_fn)(void *user_data);
EVENTLOG_SOCKET_API int eventlog_socket_add_hook(EventlogSocketHook hook,
                                                 eventlog_socket_hook_fn fn, void *user_data);

/* Memory and slow-client settings. Fill with eventlog_socket_options_init,
 * change fields, apply with eventlog_socket_set_options before init_*. */
struct eventlog_socket_options {
    /* Bytes held for clients at most (chunks, header, definitions), and
     * kept for the first client before it connects. Default 64 MiB. The
     * process uses more: up to 4 free chunk buffers (8 MiB) that the
     * library keeps so that RTS threads copy into memory already faulted
     * in, and after chunks were skipped for a slow client, the skipped
     * chunks' buffers until new chunks take them; up to 4 MiB of
     * unfinished writes of clients that stopped reading (beyond that they
     * are disconnected); and, only while the library's own threads lag
     * behind the program, chunks not yet taken in by them, at most half of
     * this (at least 8 MiB; beyond that chunks are dropped and counted). */
    size_t max_buffer;
    /* Unsent bytes one client may fall behind before the slow-client
     * policy applies. Default 64 MiB. */
    size_t client_buffer;
    /* EVENTLOG_SOCKET_SLOW_CLIENT_DROP (default): skip whole chunks for it
     * and put a notice in its stream; _DISCONNECT: close its connection;
     * _WAIT: lose nothing, the program waits for it (refused with
     * lossless_clients EVENTLOG_SOCKET_LOSSLESS_NONE). */
    int slow_client;
    /* How long exit waits for clients to take the rest of their stream:
     * every client that keeps reading gets this long (default 2000); a
     * client that reads nothing for half of it (250 ms when it never read,
     * all of it once it has read during the exit) is cut at once. What the
     * library cuts ends on an event boundary, with a cut notice and the
     * end marker when the socket takes them (at most 5000 ms more). */
    unsigned linger_ms;
    /* Control commands that cost the program (a heap census; start/stop of
     * profiling) act at most once per this many milliseconds, each kind on
     * its own, across all clients, and one that took d ms to act (a census
     * of a big heap) not again before 50 d ms; requests in between are
     * folded into one that acts when it may. Custom commands likewise, per
     * namespace, d being what the last run cost (its thread's CPU time,
     * times the capabilities when the RTS collected meanwhile). Default
     * 1000; 0: no limit. */
    unsigned control_interval_ms;
    /* Clients served at once; one more is refused (closed at once, with a
     * log line). Default 1024. Whatever this says, a client is also
     * refused when its connection would take one of the last descriptors
     * of the program's RLIMIT_NOFILE (an eighth of it, 32 to 1024), so
     * that the program's own open() and accept() never fail for them. */
    unsigned max_clients;
    /* TCP only. A client connecting from this machine is served only when
     * its socket belongs to the user the program runs as (or root), as
     * with the Unix socket's mode 0600; others are refused with a log
     * line. Non-zero serves every user. Clients from other machines (when
     * a non-loopback address is bound) cannot be checked. Default 0. */
    int allow_other_users;
    /* Who may have lossless delivery (EVENTLOG_SOCKET_CMD_LOSSLESS, and
     * every client under EVENTLOG_SOCKET_SLOW_CLIENT_WAIT):
     * EVENTLOG_SOCKET_LOSSLESS_OWNER (default): only clients of the
     * program's own user or root, over the Unix socket or from loopback TCP
     * (the peer's user is checked), never another user or another machine;
     * _ALL: any client that may connect; _NONE: nobody. A refused request
     * is logged, and the client gets a notice in its stream (protocol.md,
     * 1.3) and keeps slow_client's policy (drop under _WAIT). */
    int lossless_clients;
    /* A lossless client that reads nothing for this many milliseconds
     * while the program waits for it loses lossless delivery (a log line,
     * a notice in its stream; from then on slow_client's policy, drop
     * under _WAIT). Default 10000; 0: never; at most 3600000. */
    unsigned lossless_stall_ms;
    /* Past linger_ms, exit waits for a client only while it drains its
     * backlog at a pace that brings it to the end within this many
     * milliseconds of the exit's start, and never longer (default 10000;
     * linger_ms when that is longer; at most 600000). Exit never waits for
     * the library longer than this plus 5500 ms. */
    unsigned linger_max_ms;
    /* The flight recorder. Keep the most recent retain_bytes of the
     * eventlog (whole blocks, as they came) at all times: while nobody is
     * connected and after clients leave, so that a client that asks
     * (EVENTLOG_SOCKET_CMD_WINDOW) gets the program's last minutes. 0 (the
     * default): no window, and nothing changes. At least 64 KiB otherwise.
     * The window's memory comes on top of max_buffer (chunks both hold
     * count once). While a window is kept the RTS's buffers are flushed
     * at the flush interval even with no client, so that the window is
     * current. */
    size_t retain_bytes;
    /* At most this many seconds of program time in the window (blocks
     * that ended earlier are let go). 0 (default): only retain_bytes
     * limits it. Needs retain_bytes; at most 604800. */
    unsigned retain_seconds;
    /* When the program exits with a failure (a non-zero exit status: an
     * uncaught exception, exitWith (ExitFailure n), an exhausted heap),
     * write the window to this file (mode 0600, replaced if it
     * exists; %p in it is the pid, %t the time in seconds since 1970, %%
     * a %). NULL (default): nowhere. Needs retain_bytes. The string is
     * copied (at most 1023 bytes). Not on Ctrl-C (the RTS ends the program
     * by the signal), a fatal signal or SIGKILL (README, "Flight
     * recorder"). */
    const char *dump_on_failure;
};
#define EVENTLOG_SOCKET_LOSSLESS_OWNER         0
#define EVENTLOG_SOCKET_LOSSLESS_ALL           1
#define EVENTLOG_SOCKET_LOSSLESS_NONE          2
#define EVENTLOG_SOCKET_SLOW_CLIENT_DROP       0
#define EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT 1
/* Lose nothing: every client is lossless (EVENTLOG_SOCKET_CMD_LOSSLESS).
 * When one has more than client_buffer unsent, the program thread handing
 * over the next buffer waits until there is room, as it would for a slow
 * disk: the program runs at the pace of its slowest client, and a client
 * that stops reading stops the program until it reads again or
 * disconnects. At exit no wait lasts beyond linger_ms. */
#define EVENTLOG_SOCKET_SLOW_CLIENT_WAIT 2

/* Counters, for monitoring the library itself. Dropped chunks are counted
 * once per client that missed them, plus those lost before the first
 * client connected (chunks dropped before reaching any client, because the
 * library's threads fell behind or memory ran out, count once per client
 * connected then; chunks_lost counts those once each). */
struct eventlog_socket_stats {
    uint64_t clients_connected; /* now */
    uint64_t clients_accepted;  /* since start */
    uint64_t clients_lagged;    /* disconnected because they fell behind or stopped reading */
    uint64_t bytes_received;    /* handed over by the RTS */
    uint64_t bytes_sent;        /* written to clients, all together */
    uint64_t chunks_dropped;
    uint64_t bytes_dropped;
    uint64_t bytes_held;      /* memory held for clients now */
    uint64_t bytes_held_peak; /* and at most so far */
    uint64_t flushes;         /* RTS buffer flushes the library made (GHC >= 9.2) */
    uint64_t flush_us;        /* time spent in them; the program stops for part of it */
    uint64_t clients_refused; /* turned away at max_clients or the descriptor reserve */
    /* What streaming costs the program, in CPU time (nanoseconds) by thread
     * role: the program's own threads inside writeEventLog (the copy), the
     * library's walker thread (reading each chunk once) and its loop thread
     * (the sockets). Divide by bytes_received for a cost per byte, or take
     * two readings for CPU time per second. Chunks under 512 bytes (the
     * library's notices, a C span's among them) are not timed: reading the
     * clock would cost more than they do. */
    uint64_t cpu_ns_writer;
    uint64_t cpu_ns_walker;
    uint64_t cpu_ns_loop;
    /* What lossless delivery cost the program: lossless clients connected
     * now, how often a program thread waited for one to make room, the
     * time spent waiting in all (nanoseconds) and the longest wait. */
    uint64_t clients_lossless;
    uint64_t lossless_waits;
    uint64_t lossless_wait_ns;
    uint64_t lossless_wait_max_ns;
    /* Chunks (and their bytes) the library lost before any client got
     * them, once each: the hand-off from the RTS was full (its threads
     * fell behind), or memory ran out for a chunk's copy. Every client
     * gets a drop notice where they are missing, and each cause is
     * logged. */
    uint64_t chunks_lost;
    uint64_t bytes_lost;
    /* The flight recorder: bytes in the window now (also in bytes_held),
     * and how many clients were sent it. */
    uint64_t window_bytes;
    uint64_t windows_sent;
};

/* Start serving the eventlog on a Unix-domain socket at `path`.
 * Call once, before hs_init_* (or use eventlog_socket_start_unix for an RTS
 * that is already running). The socket file is created with mode 0600. A
 * stale socket file (no process listening) is replaced; a live one gives
 * EVENTLOG_SOCKET_EADDRINUSE; a path that exists and is not a socket gives
 * EVENTLOG_SOCKET_ENOTSOCKET and is left untouched; a path longer than a
 * socket address can hold gives EVENTLOG_SOCKET_ENAMETOOLONG. The socket file
 * is removed when the program exits through hs_exit.
 * Not thread-safe: call it from the main thread before the RTS starts. */
EVENTLOG_SOCKET_API int eventlog_socket_init_unix(const char *path);

/* Start serving the eventlog on TCP. `host` NULL or "" means 127.0.0.1 (never
 * all interfaces: pass "0.0.0.0" or "::" explicitly for that). `port` "0"
 * picks a free port; the chosen address is logged to stderr as
 * "eventlog-socket: listening on HOST:PORT" and can be read back with
 * eventlog_socket_tcp_port(). Same rules as eventlog_socket_init_unix. */
EVENTLOG_SOCKET_API int eventlog_socket_init_tcp(const char *host, const char *port);

/* Configure from the environment:
 *   GHC_EVENTLOG_UNIX_PATH            serve on this Unix socket, or
 *   GHC_EVENTLOG_INET_HOST / _PORT    serve on TCP (host defaults to 127.0.0.1)
 *   GHC_EVENTLOG_WAIT                 1/true/yes/on (any case): block until a
 *                                     client connects; 0/false/no/off, empty or
 *                                     unset: do not wait; anything else: EINVAL
 *   GHC_EVENTLOG_FLUSH_INTERVAL_MS    see eventlog_socket_set_flush_interval_ms
 *   GHC_EVENTLOG_MAX_BUFFER           see eventlog_socket_options.max_buffer;
 *   GHC_EVENTLOG_CLIENT_BUFFER        bytes, with an optional K, M, G or T suffix
 *                                     (powers of 1024; KiB and KB the same;
 *                                     the sizes of GHC_EVENTLOG_RETAIN too)
 *   GHC_EVENTLOG_SLOW_CLIENT          drop, disconnect or wait (any case; empty
 *                                     or unset: drop; anything else: EINVAL):
 *                                     see eventlog_socket_options.slow_client;
 *                                     wait with GHC_EVENTLOG_LOSSLESS_CLIENTS=
 *                                     none is EINVAL
 *   GHC_EVENTLOG_CONTROL_INTERVAL_MS  see eventlog_socket_options.control_interval_ms
 *   GHC_EVENTLOG_MAX_CLIENTS          see eventlog_socket_options.max_clients
 *   GHC_EVENTLOG_ALLOW_OTHER_USERS    1: see eventlog_socket_options.allow_other_users
 *   GHC_EVENTLOG_GRACEFUL_SIGTERM     1: eventlog_socket_hs_main makes SIGTERM
 *                                     interrupt the program as SIGINT does,
 *                                     so that it exits through hs_exit
 *   GHC_EVENTLOG_RETAIN               see eventlog_socket_options.retain_bytes
 *   GHC_EVENTLOG_RETAIN_SECONDS       see ...retain_seconds (alone: a 64 MiB window)
 *   GHC_EVENTLOG_DUMP_ON_FAILURE      see ...dump_on_failure (alone: a 64 MiB window)
 * Returns EVENTLOG_SOCKET_ENOTCONFIGURED when neither a path nor a port is
 * set, EVENTLOG_SOCKET_EINVAL (with a log line naming the variable) for an
 * invalid value or when both a path and a port are set. */
EVENTLOG_SOCKET_API int eventlog_socket_init_from_env(void);

/* How often the RTS's eventlog buffers are flushed while clients are
 * connected, so that events reach them promptly even when the program is
 * quiet: default 100 ms, 0 turns it off, at most 60000. A flush stops the
 * program briefly; it is skipped while every capability hands a full buffer
 * over within the interval by itself (but made at least every ten intervals,
 * and always without skipping under a heap profiling mode). GHC >= 9.2 only, and
 * only for programs started through eventlog_socket_hs_main or switched over
 * by eventlog_socket_start_* in a statically linked program (flushing must
 * stop safely before shutdown, through an exit hook that -dynamic cannot
 * reach); on GHC 9.0, which cannot flush, a
 * non-zero value returns EVENTLOG_SOCKET_ENOTSUP. Thread-safe; takes effect
 * at once. */
EVENTLOG_SOCKET_API int eventlog_socket_set_flush_interval_ms(unsigned ms);

/* Fill `opts` with the defaults. */
EVENTLOG_SOCKET_API void eventlog_socket_options_init(struct eventlog_socket_options *opts);

/* Use these settings for the server that init_* starts. Call before it.
 * Returns EVENTLOG_SOCKET_EINVAL for a buffer under 64 KiB, an unknown
 * policy, a control interval over 60000 ms or max_clients 0, EVENTLOG_SOCKET_EALREADY when the
 * server is already running. The environment (GHC_EVENTLOG_MAX_BUFFER, _CLIENT_BUFFER,
 * _SLOW_CLIENT, _CONTROL_INTERVAL_MS, _MAX_CLIENTS) overrides them in
 * eventlog_socket_init_from_env. Not thread-safe. */
EVENTLOG_SOCKET_API int eventlog_socket_set_options(const struct eventlog_socket_options *opts);

/* Current counters. Returns EVENTLOG_SOCKET_ENOTCONFIGURED (and zeros)
 * when no server was started. Thread-safe, cheap, never blocks on clients. */
EVENTLOG_SOCKET_API int eventlog_socket_stats(struct eventlog_socket_stats *out);

/* The TCP port the library listens on (useful after asking for port "0"),
 * or a negative error code when it does not listen on TCP. Thread-safe. */
EVENTLOG_SOCKET_API int eventlog_socket_tcp_port(void);

/* Declare the RTS initialised: control commands (heap profiling start/stop,
 * census requests) received before this call are held back, and applied now;
 * later ones are applied as they arrive. The first call also runs the
 * POST_START hooks on the calling thread (see EventlogSocketHook), and, in
 * a statically linked program, puts the library's exit hook into the RTS,
 * which ends periodic flushing and runs the PRE_END hooks when hs_exit
 * begins. eventlog_socket_hs_main and eventlog_socket_start_* call it for
 * you. Call it after hs_init_* returns, from a thread that holds no
 * capability. Thread-safe. */
EVENTLOG_SOCKET_API void eventlog_socket_ready(void);

/* Block the calling thread until the first client has connected (at once
 * when one has, even if it has left since). Returns 0,
 * EVENTLOG_SOCKET_ENOTCONFIGURED when no server was started, or
 * EVENTLOG_SOCKET_ESTOPPED when the server stopped first. Never call it from
 * a thread that holds a capability (for instance from a Haskell foreign call
 * marked unsafe). (Before 0.3 this was eventlog_socket_wait, a name upstream
 * uses for a function that returns an EventlogSocketStatus.) */
EVENTLOG_SOCKET_API int eventlog_socket_wait_for_client(void);

/* The event classes on now (`*on`) and those this program can switch
 * (`*switchable`), as EVENTLOG_SOCKET_EVENTS_* bits; either may be NULL.
 * Returns 0, or EVENTLOG_SOCKET_ENOTSUP when none can be switched (a
 * program linked with -dynamic, whose RTS keeps its switches to itself, or
 * a GHC other than 9.0, 9.6 to 9.10, whose switches this library was not
 * checked against). Thread-safe; after the RTS is initialised. */
EVENTLOG_SOCKET_API int eventlog_socket_event_classes(unsigned *on, unsigned *switchable);

/* Switch the classes `on` on and `off` off in the running program (no bit
 * in both): the RTS posts their events from its next ones on (those already
 * in its buffers are delivered). Every client's stream gets a notice of the
 * switch, so that a gap is never taken for an idle program. Switching GC
 * events on also makes the RTS collect the statistics their end needs
 * (as +RTS -lg does at start). Returns 0; EVENTLOG_SOCKET_EINVAL for a bit
 * outside EVENTLOG_SOCKET_EVENTS_ALL or in both; EVENTLOG_SOCKET_ENOTSUP,
 * with a log line saying which class and why, when a class cannot be
 * switched here (nothing is switched then); EVENTLOG_SOCKET_ENOTCONFIGURED
 * before eventlog_socket_ready. Thread-safe. */
EVENTLOG_SOCKET_API int eventlog_socket_switch_event_classes(unsigned on, unsigned off);

/* The longest label of a span of C code, in bytes. */
#define EVENTLOG_SOCKET_SPAN_LABEL_MAX 200

/* A span of C code: begin one labelled `label` in the calling OS thread;
 * eventlog_socket_span_end with the same label ends the innermost one open
 * in that thread (`failed`: it ended in failure). Spans nest; each thread
 * pairs its own. Every view reads them as it reads Haskell's withSpan
 * (docs/spans.md): each is a notice in the stream, stamped with the RTS's
 * clock (protocol.md, section 3). Any thread, known to the RTS or not;
 * no wait on clients, but a hand-off to the library's threads per call
 * (7 to 9 us a call on this project's machines, BENCHMARKS.md section 15:
 * mark requests, not inner loops). Returns 0; EVENTLOG_SOCKET_EINVAL
 * for a label that is NULL, empty, longer than
 * EVENTLOG_SOCKET_SPAN_LABEL_MAX or with a line break;
 * EVENTLOG_SOCKET_ENOTCONFIGURED when no server was started;
 * EVENTLOG_SOCKET_ENOTSUP in a program linked with -dynamic, whose RTS
 * keeps its clock to itself. */
EVENTLOG_SOCKET_API int eventlog_socket_span_begin(const char *label);
EVENTLOG_SOCKET_API int eventlog_socket_span_end(const char *label, bool failed);

/* The first error that happened asynchronously on the library's socket
 * thread (it is also logged to stderr once), or 0. Thread-safe. */
EVENTLOG_SOCKET_API int eventlog_socket_last_error(void);

/* ---- Upstream: addresses, options, starting ----------------------------
 *
 * Upstream eventlog-socket 0.1.3's way to configure and start, as a C main
 * written for it uses them. They drive the same server as the functions
 * above (one per process). */

typedef enum EventlogSocketTag {
    EVENTLOG_SOCKET_UNIX,
    EVENTLOG_SOCKET_INET,
} EventlogSocketTag;

typedef struct EventlogSocketUnixAddr {
    char *esa_unix_path;
} EventlogSocketUnixAddr;

/* An empty or NULL host means 127.0.0.1 (eventlog_socket_init_tcp). */
typedef struct EventlogSocketInetAddr {
    char *esa_inet_host;
    char *esa_inet_port;
} EventlogSocketInetAddr;

typedef struct EventlogSocketAddr {
    EventlogSocketTag esa_tag;
    union {
        EventlogSocketUnixAddr esa_unix_addr;
        EventlogSocketInetAddr esa_inet_addr;
    };
} EventlogSocketAddr;

/* eso_wait: eventlog_socket_start and eventlog_socket_wrap_hs_main wait for
 * the first client (eventlog_socket_init does not). eso_sndbuf is accepted
 * and ignored (the library keeps bounded buffers of its own). eso_linger:
 * when positive, the seconds exit waits at most for slow clients
 * (eventlog_socket_options.linger_ms). */
typedef struct EventlogSocketOpts {
    bool eso_wait;
    int eso_sndbuf;
    int eso_linger;
} EventlogSocketOpts;

/* Free the strings of an address that eventlog_socket_from_env filled in
 * (not the struct itself). NULL is allowed. */
EVENTLOG_SOCKET_API void eventlog_socket_addr_free(EventlogSocketAddr *addr);

/* The default options: no wait, sndbuf and linger 0 (the library's own). */
EVENTLOG_SOCKET_API void eventlog_socket_opts_init(EventlogSocketOpts *opts);

/* Options hold no memory; kept for upstream's programs. */
EVENTLOG_SOCKET_API void eventlog_socket_opts_free(EventlogSocketOpts *opts);

#define EVENTLOG_SOCKET_ENV_UNIX_PATH "GHC_EVENTLOG_UNIX_PATH"
#define EVENTLOG_SOCKET_ENV_INET_HOST "GHC_EVENTLOG_INET_HOST"
#define EVENTLOG_SOCKET_ENV_INET_PORT "GHC_EVENTLOG_INET_PORT"
#define EVENTLOG_SOCKET_ENV_WAIT      "GHC_EVENTLOG_WAIT"

/* Read the address and options from the environment, and apply the
 * library's other GHC_EVENTLOG_* settings (buffers, slow clients, flush
 * interval, ...: see eventlog_socket_init_from_env) to the server that
 * eventlog_socket_init starts next. It starts nothing. Returns:
 *   EVENTLOG_SOCKET_OK: *addr_out is filled in (free it with
 *     eventlog_socket_addr_free); *opts_out too when not NULL (eso_wait
 *     from GHC_EVENTLOG_WAIT, which wants a yes/no value here as
 *     everywhere in this library). A port without a host means 127.0.0.1.
 *   EVENTLOG_SOCKET_ERR_ENV_NOADDR: no socket is configured; nothing
 *     filled in.
 *   EVENTLOG_SOCKET_ERR_ENV_TOOLONG (path longer than 107 bytes),
 *     _ERR_ENV_NOPORT (a host without a port): both outputs filled in, for
 *     the error message only.
 *   EVENTLOG_SOCKET_ERR_SYS: an invalid value (EINVAL; a log line names
 *     the variable), or a path that cannot work; nothing filled in.
 * Not thread-safe (it reads the environment). */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_from_env(EventlogSocketAddr *addr_out,
                                                                  EventlogSocketOpts *opts_out);

/* Start the server on `addr` (eventlog_socket_init_unix or _tcp), before
 * the RTS starts; eso_wait is not looked at here. `opts` may be NULL. */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_init(const EventlogSocketAddr *addr,
                                                              const EventlogSocketOpts *opts);

/* For an RTS that is already running: eventlog_socket_init, then switch
 * the RTS to this library's writer as eventlog_socket_start_* do (the
 * POST_START hooks run before it returns), then wait for the first client
 * when opts->eso_wait. Call from a thread that holds no capability. */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_start(const EventlogSocketAddr *addr,
                                                               const EventlogSocketOpts *opts);

/* eventlog_socket_ready; always EVENTLOG_SOCKET_OK. */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_signal_ghc_rts_ready(void);

/* Wait until the first client has connected (eventlog_socket_wait_for_client). */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_wait(void);

/* The library's thread's first error (eventlog_socket_last_error), or OK.
 * Commands are read by the same thread: both report the same. */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_worker_status(void);
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_control_status(void);

/* ---- Upstream: custom control commands ----------------------------------
 *
 * Upstream's names for the custom commands above (the same registry, the
 * same threads and rules). */
#define EVENTLOG_SOCKET_CONTROL_PROTOCOL_VERSION 0

typedef struct EventlogSocketControlNamespace EventlogSocketControlNamespace;
typedef uint8_t EventlogSocketControlCommandId;
typedef void EventlogSocketControlCommandHandler(const EventlogSocketControlNamespace *const ns,
                                                 const EventlogSocketControlCommandId command_id,
                                                 const void *command_data);

/* The namespace's name; NULL for NULL. */
EVENTLOG_SOCKET_API const char *
eventlog_socket_control_strnamespace(EventlogSocketControlNamespace *ns);

/* Register the namespace `name` of `name_len` bytes (1 to 255; the length
 * comes first, as upstream has it). Returns EVENTLOG_SOCKET_ERR_CTL_EXISTS
 * when it is registered already or is the built-in "eventlog-socket",
 * EVENTLOG_SOCKET_ERR_SYS with EINVAL for an empty name or a NULL pointer,
 * or ENOMEM. */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_control_register_namespace(
    uint8_t name_len, const char *name, EventlogSocketControlNamespace **ns_out);

/* Register command `command_id` (1 to 255) of `ns`. Returns
 * EVENTLOG_SOCKET_ERR_CTL_EXISTS when that id is registered already,
 * EVENTLOG_SOCKET_ERR_SYS with EINVAL for id 0 or a NULL pointer. */
EVENTLOG_SOCKET_API EventlogSocketStatus eventlog_socket_control_register_command(
    EventlogSocketControlNamespace *ns, EventlogSocketControlCommandId command_id,
    EventlogSocketControlCommandHandler *command_handler, const void *command_data);

#if !defined(EVENTLOG_SOCKET_NO_RTS)

/* The writer to install as RtsConfig.eventlog_writer before hs_init_ghc.
 * Its callbacks copy each chunk and return at once; they never block on a
 * client and never call back into the RTS. EventLogSocketWriter is
 * upstream's name (since 0.1.2) for the same object. */
EVENTLOG_SOCKET_API extern const EventLogWriter SocketEventLogWriter;
EVENTLOG_SOCKET_API extern const EventLogWriter EventLogSocketWriter;

/* Switch an RTS that is already running to this library's writer and serve
 * the eventlog on a Unix socket (or TCP). The previous writer (for instance
 * the RTS's file writer) is stopped. With `wait`, block until the first
 * client connects. Call from a thread that holds no capability.
 * Returns the init_* errors, EVENTLOG_SOCKET_EALREADY when the library is
 * already serving, EVENTLOG_SOCKET_EEVENTLOGOFF when the program runs
 * without +RTS -l (the RTS would write a header and no events), or
 * EVENTLOG_SOCKET_ENOEVENTLOG when the RTS refused. Events the RTS wrote
 * before the switch went to the previous writer, not to clients. */
EVENTLOG_SOCKET_API int eventlog_socket_start_unix(const char *path, bool wait);
EVENTLOG_SOCKET_API int eventlog_socket_start_tcp(const char *host, const char *port, bool wait);

/* Run a Haskell program from a custom C main: hs_init_ghc(&argc, &argv,
 * conf), eventlog_socket_ready() (so the POST_START hooks run here, before
 * the program's main), evaluate `main_closure` (normally
 * &ZCMain_main_closure), then shut the RTS down and exit the process with
 * the program's exit code, as GHC's own generated main does. It does not
 * return. */
EVENTLOG_SOCKET_API int eventlog_socket_hs_main(int argc, char *argv[], RtsConfig conf,
                                                StgClosure *main_closure);

/* Upstream's entry point: eventlog_socket_init(addr, opts), install
 * EventLogSocketWriter in `conf`, then as eventlog_socket_hs_main, waiting
 * for the first client after the POST_START hooks and before `main_closure`
 * when opts->eso_wait. If the server cannot start, says why on stderr and
 * runs the program without streaming. It does not return. */
EVENTLOG_SOCKET_API void eventlog_socket_wrap_hs_main(int argc, char *argv[], RtsConfig conf,
                                                      StgClosure *main_closure,
                                                      const EventlogSocketAddr *addr,
                                                      const EventlogSocketOpts *opts);

#endif /* !EVENTLOG_SOCKET_NO_RTS */

#ifdef __cplusplus
}
#endif

#endif /* EVENTLOG_SOCKET_H */
