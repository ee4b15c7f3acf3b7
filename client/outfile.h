/* The files the subcommands write (record -o, heap --hp/--csv, table and
 * compare --csv, report -o, serve --record): checked before anything is
 * connected or read, so that a program held by GHC_EVENTLOG_WAIT is not
 * released for a recording that cannot be written, and no work is done
 * for an output that cannot exist. Nothing is created or changed by the
 * check. Main thread (before the loop runs). */
#ifndef ES_OUTFILE_H
#define ES_OUTFILE_H

#include <stdbool.h>

/* Whether `path` ("-": stdout, always) can be created, or written if it
 * exists: not a directory, its directory there and writable. False after
 * "eventlog-socket CMD: cannot write PATH: WHY" on stderr (`what`, if not
 * NULL, names the file: "the recording"). */
bool es_outfile_check(const char *cmd, const char *what, const char *path);

#endif
