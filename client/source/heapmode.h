/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a program runs with a heap profiling mode (+RTS -h...), from its
 * stream (struct es_heapmode) and, where the stream cannot say yet, from
 * what a client can see of it: its arguments (the stream's
 * PROGRAM_ARGS, or /proc/PID/cmdline of the server's process) and its
 * GHCRTS variable (the stream's PROGRAM_ENV, or /proc/PID/environ). GHC
 * 9.0 sends its HEAP_PROF_BEGIN, arguments and environment only at exit,
 * so `control` and `top` look at the server's process meanwhile. Options
 * built into the program (-with-rtsopts, a C main's rts_opts) are not
 * visible this way. Pure but for es_heapmode_of_pid and
 * es_heapmode_header; one thread per es_heapmode. */
#ifndef ES_HEAPMODE_H
#define ES_HEAPMODE_H

#include "format/es_events.h"
#include "format/es_header.h"

#include <stdbool.h>
#include <stddef.h>

/* Which RTS options the functions below look for: a heap profiling mode
 * (-h...), or cost-centre time profiling started at start-up (-p, -pa,
 * -pj, -P). */
enum es_heapmode_opt { ES_HEAPMODE_HEAP, ES_HEAPMODE_TIME };

/* Option `which` among NUL-separated arguments' RTS options, in GHCRTS, in
 * process `pid`'s (as the functions below for -h). */
bool es_heapmode_opt_in_args(enum es_heapmode_opt which, const char *args, size_t len);
bool es_heapmode_opt_in_env(enum es_heapmode_opt which, const char *env, size_t len);
int es_heapmode_opt_of_pid(enum es_heapmode_opt which, int pid);

/* An -h option among the RTS options of NUL-separated arguments (argv[0]
 * first, `len` bytes): between +RTS and -RTS (or the end), before --RTS. */
bool es_heapmode_in_args(const char *args, size_t len);

/* An -h option in NUL-separated NAME=VALUE strings' GHCRTS. */
bool es_heapmode_in_env(const char *env, size_t len);

/* The same for process `pid`: 1 an -h option in its arguments or GHCRTS,
 * 0 none, -1 cannot tell (no pid, or its /proc/PID/cmdline unreadable). */
int es_heapmode_of_pid(int pid);

/* What a stream has said about its heap profiling mode so far. */
struct es_heapmode {
    bool no_flush;  /* GHC 9.0's header */
    int proc;       /* 9.0: es_heapmode_of_pid of the server */
    bool on;        /* HEAP_PROF_BEGIN, a heap sample, or an -h option in
                     * PROGRAM_ARGS or PROGRAM_ENV's GHCRTS */
    bool args;      /* PROGRAM_ARGS came */
    bool heap_info; /* HEAP_INFO_GHC came: the start-up definitions are in */
    bool capsets;   /* CAPSET_CREATE or CAP_CREATE came: the RTS started this
                     * eventlog itself (a program started from Haskell
                     * restarts it, and a restart re-posts neither these nor
                     * HEAP_PROF_BEGIN, so their absence says nothing) */
};

enum es_heapmode_verdict { ES_HEAPMODE_UNKNOWN, ES_HEAPMODE_ON, ES_HEAPMODE_OFF };

/* The header has come, from the server with pid `peer_pid` (0: unknown):
 * resets `hm`. */
void es_heapmode_header(struct es_heapmode *hm, const struct es_header *hdr, int peer_pid);
/* Every event of the stream. */
void es_heapmode_event(struct es_heapmode *hm, const struct es_event *ev);
/* On: the stream (or on 9.0 the server's process) shows a heap profiling
 * mode. Off: the definitions came without one (GHC 9.2+ flushes them at
 * once; 9.0 at exit) in an eventlog the RTS started itself, or on 9.0
 * the server's arguments and GHCRTS have none. A program started from
 * Haskell streams no HEAP_PROF_BEGIN (a restart does not re-post it), so
 * its -h option is looked for in its arguments and GHCRTS too. */
enum es_heapmode_verdict es_heapmode_verdict(const struct es_heapmode *hm);

/* The line for a stream without a heap profiling mode. */
#define ES_HEAPMODE_OFF_TEXT                                                                       \
    "the program runs without a heap profiling mode, so heap commands are ignored and no "         \
    "heap sample can come: start it with +RTS -hT (or another -h mode)"

#endif
