/* SPDX-License-Identifier: BSD-3-Clause */
/* A recording's file name, as `record` and `record --trigger` make it (and
 * `serve --record FILE` for the runs after the first, FILE.N): the
 * program's name and pid from the stream, else from the server's process
 * (GHC 9.0 names them only at exit: SO_PEERCRED on a Unix socket, the
 * owner of the connection's other end over loopback TCP), and a file
 * created anew for its user alone (outfile.h, mode 0600): never a file
 * already there (a previous recording, or one another user planted in
 * /tmp), never through a symbolic link; a taken name gets .1 to .99, then
 * six random characters, before its .eventlog. The loop thread. */
#ifndef ES_NAMING_H
#define ES_NAMING_H

#include "conn.h"

#include <stdbool.h>
#include <stddef.h>

/* The program's name (characters that need no quoting; "" when unknown)
 * and pid (0 when unknown) for the connection `c`. */
void es_naming_program(struct es_conn *c, char *prog, size_t size, unsigned long *pid);

/* The time now as it goes into a name: YYYYMMDD-HHMMSS (local time). */
void es_naming_stamp(char *out, size_t size);

/* A name's stem for the connection `c`: PROGRAM-PID, PROGRAM-DATE-TIME when
 * the pid is not known (`record`), or always PROGRAM-PID-DATE-TIME with
 * `stamped` (a file per moment: `record --trigger`); "eventlog-socket" for
 * an unknown program. */
void es_naming_stem(struct es_conn *c, bool stamped, char *out, size_t size);

/* Create `stem`.eventlog (or `stem`.N.eventlog, N from 1 to 99, then
 * `stem`.XXXXXX.eventlog, when taken); its name in `path`. Returns the
 * descriptor, or -1 with errno set. */
int es_naming_create(const char *stem, char *path, size_t size);

/* Create `base`.N (`flags`: O_WRONLY or O_RDWR), N the first number from
 * *num on whose name is free (100 of them, then `base`.N.XXXXXX), the
 * same way: anew, never through a link; its name in `path`, and the N
 * used in *num. Returns the descriptor, or -1 with errno set. */
int es_naming_create_numbered(const char *base, unsigned *num, int flags, char *path, size_t size);

#endif
