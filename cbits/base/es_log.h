/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging to stderr, one line per message, prefixed "eventlog-socket: ".
 *
 * Nothing here ever blocks the caller on stderr. A program's stderr may be
 * a pipe that nobody reads (a stalled log shipper, `prog 2>&1 | less`): a
 * write(2) to it would block, and the library's loop thread, stuck in one,
 * stopped serving every client and hung the program's exit. So es_log only
 * formats the line into a small buffer (ES_LOG_BUFFER bytes) and returns;
 * a logging thread of the library's own writes the buffer out, and it is
 * the only thread that can block on stderr. Lines that find the buffer full
 * are counted, and a line saying how many were lost follows once there is
 * room again. When no thread can be created for the moment, lines wait in
 * the buffer and the next line tries again; a stderr made non-blocking is
 * waited for by the thread as a blocking one would be.
 *
 * Causes that can repeat per client (a slow client, one that stopped
 * reading) are logged through a limiter (es_log_limit): the first
 * occurrence in a second is logged in full, the rest are summed into one
 * line, so a thousand misbehaving clients make a few lines, not a thousand.
 *
 * Any thread may log, RTS threads included. */
#ifndef ES_LOG_H
#define ES_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ES_LOG_BUFFER 16384

void es_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A cause told once: logs when `*said` is false and sets it; returns
 * whether it logged. `*said` is the caller's (zero-initialised, in the
 * state of the cause), under that state's own thread rule. */
bool es_log_once(bool *said, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Wait until what has been logged so far has been written, or for at most
 * `timeout_ms`. Returns whether everything was written. For the ends of
 * the library's life (the server's stop, process exit), so that its last
 * lines are not lost when stderr is being read. */
bool es_log_drain(unsigned timeout_ms);

/* From now on, the first line this thread logs (without the prefix and
 * the newline) is also copied into `buf` (`size` bytes, emptied now),
 * until es_log_capture(NULL, 0). So that a call refused with a code can
 * hand its caller the line that said why (the Haskell API's exceptions).
 * Per thread: lines of other threads are not taken. */
void es_log_capture(char *buf, size_t size);

/* Lines logged but lost because the buffer was full (tests). */
uint64_t es_log_lost(void);

/* Tests: the next `n` starts of the logging thread fail, as when no
 * thread can be created for the moment. */
void es_log_fail_thread_starts(unsigned n);

/* One repeating cause. `what` names an occurrence in the plural for the
 * summary line ("clients too slow"). Zero-initialise, then set `what`.
 * Used by one thread (the loop thread). */
struct es_log_limit {
    const char *what;
    uint64_t window_start_ms; /* when the current one-second window began */
    uint64_t suppressed;      /* occurrences in it that were not logged */
    bool seen;                /* any occurrence yet */
};

#define ES_LOG_LIMIT_WINDOW_MS 1000

/* An occurrence at `now_ms`: logged in full when it is the first of its
 * window, otherwise only counted. */
void es_log_limited(struct es_log_limit *l, uint64_t now_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Log the summary of a window that has ended ("N more clients too slow in
 * the last 1.0 s"); with `force`, of the current one too. */
void es_log_limit_flush(struct es_log_limit *l, uint64_t now_ms, bool force);

#endif
