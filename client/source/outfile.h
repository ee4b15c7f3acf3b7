/* SPDX-License-Identifier: BSD-3-Clause */
/* The files the `eventlog-socket` command writes (recordings, HTML
 * reports, CSV, .hp): its user's alone, as the socket it reads is (the
 * eventlog holds the program's arguments and environment). A file the
 * command creates gets mode 0600, less what the umask takes away; a file
 * that exists already is written as it is, keeping the mode its owner
 * gave it. Each output is checked before anything is connected or read
 * (es_outfile_check), so that a program held by GHC_EVENTLOG_WAIT is not
 * released for a recording that cannot be written, and no work is done
 * for an output that cannot exist. Called by the thread that runs the
 * subcommand. */
#ifndef ES_OUTFILE_H
#define ES_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

/* The mode of a file the command creates. */
#define ES_OUTFILE_MODE 0600

/* open(2) of `path` with `flags` (O_CREAT and the like; O_CLOEXEC is
 * added), creating it with ES_OUTFILE_MODE. -1 and errno on failure. */
int es_outfile_open(const char *path, int flags);

/* A new file at `path`, for its user alone (ES_OUTFILE_MODE): never a
 * file that is there already, never through a symbolic link (either is
 * EEXIST); `flags` O_WRONLY or O_RDWR (O_CLOEXEC is added). How the
 * command creates every name it makes itself: `record`'s default names,
 * `watch`'s files, `serve --record FILE`'s FILE.N (naming.h). -1 and
 * errno on failure. */
int es_outfile_create(const char *path, int flags);

/* The same, read and write, with six random characters in place of the
 * XXXXXX that `path` holds `suffix_len` characters before its end
 * (mkstemps(3)); `path` then holds the name. */
int es_outfile_create_random(char *path, int suffix_len);

/* fopen(3) of `path` for writing ("w" or "wb"): created with
 * ES_OUTFILE_MODE, truncated if it exists. NULL and errno on failure. */
FILE *es_outfile_fopen(const char *path, const char *mode);

/* Whether `path` ("-": stdout, always) can be created, or written if it
 * exists: not a directory, its directory there and writable. Nothing is
 * created or changed. False after "eventlog-socket CMD: cannot write
 * PATH: WHY" on stderr (`what`, if not NULL, names the file: "the
 * recording"). */
bool es_outfile_check(const char *cmd, const char *what, const char *path);

#endif
