/* SPDX-License-Identifier: BSD-3-Clause */
/* The dump at a failing exit (GHC_EVENTLOG_DUMP_ON_FAILURE): the flight
 * recorder's window written to a file once the server has stopped, so that
 * a program that fails with nobody connected leaves its last minutes
 * behind. The file's name may hold %p (the pid), %t (seconds since 1970)
 * and %% (a %); it is created with mode 0600 (an eventlog holds the
 * program's arguments and environment), replacing one already there but
 * never through a symbolic link. Runs on the exiting thread, after the
 * library's threads have ended. */
#ifndef ES_DUMP_H
#define ES_DUMP_H

#include "es_server.h"

#include <stddef.h>
#include <sys/types.h>

/* `pattern` with %p, %t and %% replaced (pid `pid`, time `now`) into
 * `out`; false when it does not fit. */
bool es_dump_path(char *out, size_t size, const char *pattern, pid_t pid, long long now);

/* The program exits with `status` (non-zero): write the window of `s`
 * (stopped first, if it is not yet) to `pattern`, and say so in a log
 * line. Returns 0 or a negative error code (logged). */
int es_dump_window(struct es_server *s, const char *pattern, int status);

#endif
