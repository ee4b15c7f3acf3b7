/* SPDX-License-Identifier: BSD-3-Clause */
/* The dump at a failing exit (GHC_EVENTLOG_DUMP_ON_FAILURE): the flight
 * recorder's window written to a file once the server has stopped, so that
 * a program that fails with nobody connected leaves its last minutes
 * behind. The file's name may hold %p (the pid), %t (seconds since 1970)
 * and %% (a %).
 *
 * An eventlog holds the program's arguments and environment, and the name
 * is often guessable (a pid is visible for the program's whole life), so
 * the file is never opened where it is named: the window goes into a new
 * file beside it, created exclusively with mode 0600 (never through a
 * link, never a FIFO or a device, so the exit never waits on it), which
 * is then renamed over the name. Whatever was at the name (the program's
 * own earlier dump, a file or a link planted there) is replaced, never
 * written into; where it cannot be replaced (another user's entry in a
 * sticky directory such as /tmp, a directory), the window stays in the new
 * file and the log line names it.
 *
 * es_dump_check runs at the start, on the thread that starts the library;
 * es_dump_window on the exiting thread, after the library's threads have
 * ended. */
#ifndef ES_DUMP_H
#define ES_DUMP_H

#include "es_server.h"

#include <stddef.h>
#include <sys/types.h>

/* `pattern` with %p, %t and %% replaced (pid `pid`, time `now`) into
 * `out`; false when it does not fit. */
bool es_dump_path(char *out, size_t size, const char *pattern, pid_t pid, long long now);

/* Whether a dump could be written as `pattern` says: its expansion fits,
 * its directory exists and this process may create files in it, no %t in
 * the directory (its value is known only at the exit), the name is a
 * file's. 0, or EVENTLOG_SOCKET_EINVAL with a log line that names the
 * setting, the value and what to do. */
int es_dump_check(const char *pattern);

/* The program exits with `status` (non-zero): write the window of `s`
 * (stopped first, if it is not yet) to `pattern`, and say so in a log
 * line. Returns 0 or a negative error code (logged). */
int es_dump_window(struct es_server *s, const char *pattern, int status);

#endif
