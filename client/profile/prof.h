/* SPDX-License-Identifier: BSD-3-Clause */
/* The time profile in a stream: the cost-centre samples the RTS posts while
 * cost-centre profiling runs (PROF_SAMPLE_COST_CENTRE, 167: one per tick
 * per capability, the running cost-centre stack innermost first, MAIN left
 * out), with the cost centres' names (HEAP_PROF_COST_CENTRE, 161) and the
 * tick interval (PROF_BEGIN, 168). `profile` (client/tables/profile.c)
 * feeds it and write.c writes it out; `table profile` names its rows' frames
 * with it (client/tables/rows.c).
 *
 * Memory stays bounded by what the program is, not by how long it runs:
 * each distinct stack is kept once (interned, with its sample count).
 * Only a time-ordered view (speedscope's) needs more:
 * with keep_runs, each capability's samples as runs of one stack (a
 * stack, its first time, how many ticks in a row), at most
 * ES_PROF_MAX_RUNS of them.
 * A hostile or garbled event is counted in `bad` and left out.
 *
 * Pure, single-threaded (the reader's loop thread). */
#ifndef ES_PROF_H
#define ES_PROF_H

#include "format/es_events.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cost-centre ids above this are not kept (a profiled program has a few
 * thousand; GHC numbers them from 0). */
#define ES_PROF_MAX_CC (1u << 20)
/* The capabilities kept apart (more are folded into the last). */
#define ES_PROF_MAX_CAPS 1024
/* The runs kept for a time-ordered view, in all (16 bytes each): past it
 * the counts go on, the time order stops (runs_dropped counts them). */
#define ES_PROF_MAX_RUNS (4u << 20)

struct es_prof_cc {
    char *label;  /* "heavy", "GC", "CAF" */
    char *module; /* "Main"; the RTS's own: "GC", "SYSTEM", "MAIN", ... */
    char *srcloc; /* "Main.hs:6:1-64", "<built-in>", "<entire-module>" */
    bool defined; /* its HEAP_PROF_COST_CENTRE event was seen */
    bool caf;
};

/* A distinct stack: `depth` cost-centre ids in es_prof.frames from
 * `first`, root first (MAIN, the root of every stack, is not among them;
 * depth 0 is MAIN itself). */
struct es_prof_stack {
    uint32_t first;
    uint32_t depth;
    uint64_t samples; /* taken within [from, to) */
    uint32_t next;    /* the next stack in its hash bucket, + 1 (0: none) */
};

/* `ticks` samples in a row of one capability with stack `stack`, the
 * first at `time`. */
struct es_prof_run {
    uint64_t time;
    uint32_t stack;
    uint32_t ticks;
};

struct es_prof_cap {
    struct es_prof_run *runs;
    size_t n, cap;
};

/* A sample kept in the tail (--since on a recording). */
struct es_prof_tail_sample {
    uint64_t t;
    uint32_t cap, stack;
};

struct es_prof {
    /* Read by the writers; set by es_prof_event. */
    struct es_prof_cc *cc; /* by id, `ncc` of them */
    uint32_t ncc;
    uint32_t *frames; /* the stacks' ids, root first */
    size_t nframes, frames_cap;
    struct es_prof_stack *stacks;
    uint32_t nstacks, stacks_cap;
    struct es_prof_cap caps[ES_PROF_MAX_CAPS];
    uint32_t ncaps;       /* 1 + the highest capability seen */
    uint64_t tick_ns;     /* PROF_BEGIN's interval (0: not seen) */
    bool began;           /* PROF_BEGIN seen */
    uint64_t samples;     /* taken within [from, to) */
    uint64_t outside;     /* samples before `from` or from `to` on */
    uint64_t first, last; /* the times of the first and last sample taken */
    uint64_t bad;         /* events too short or otherwise unreadable */
    /* WALL_CLOCK_TIME: the wall clock (ns since the epoch) at program time
     * `wall_at` (have_wall false until one is seen). */
    bool have_wall;
    uint64_t wall_ns, wall_at;
    bool oom; /* an allocation failed: the profile is incomplete */

    /* Set by the caller: the program times whose samples are taken, and
     * whether to keep the runs. */
    uint64_t from, to;
    bool keep_runs;
    uint64_t tail_ns;      /* with es_prof_tail_end: only the last tail_ns of samples */
    uint64_t nruns;        /* runs kept, in all */
    uint64_t runs_dropped; /* samples not in a run: past ES_PROF_MAX_RUNS */

    /* Private: the stacks' hash table (2^k buckets, each a stack + 1), and
     * the tail's samples, a ring of tail_cap from tail_head. */
    uint32_t *buckets;
    uint32_t nbuckets;
    struct es_prof_tail_sample *tail;
    size_t tail_head, tail_n, tail_cap;
};

void es_prof_init(struct es_prof *p);
void es_prof_destroy(struct es_prof *p);

/* Read `ev` if it is one of the three event types above or
 * WALL_CLOCK_TIME; others are ignored. */
void es_prof_event(struct es_prof *p, const struct es_event *ev);

/* Read a PROF_SAMPLE_COST_CENTRE event: its capability and its stack's
 * ids root first (`ids` room for 255), their number in *depth. False for
 * an event cut short, or an id of ES_PROF_MAX_CC or more. */
bool es_prof_read_sample(const struct es_event *ev, uint32_t *cap, uint32_t *ids, uint32_t *depth);

/* With tail_ns set (--since on a recording): after the last event, the
 * profile is of the samples of the last tail_ns before the latest one,
 * exactly (each kept until it falls out of that time); the runs, if kept,
 * are made now. */
void es_prof_tail_end(struct es_prof *p);

/* The frame name of cost centre `id` as GHC prints it, "Main.heavy"; the
 * RTS's own (source "<built-in>") by their label alone ("GC", "IDLE");
 * "cost centre N" for an id never defined. Into `buf` of `size`. */
const char *es_prof_name(const struct es_prof *p, uint32_t id, char *buf, size_t size);

/* Whether cost centre `id` is one of the RTS's own (GC, IDLE, SYSTEM,
 * MAIN, PINNED, OVERHEAD_of, DONT_CARE), which a .prof file's %time
 * leaves out. */
bool es_prof_builtin(const struct es_prof *p, uint32_t id);

/* The source file and line of cost centre `id` ("Main.hs", 6 from
 * "Main.hs:6:1-64" or "Main.hs:(12,1)-(18,46)"); NULL and 0 when it has
 * none. The file is copied into `buf` of `size`. */
const char *es_prof_file(const struct es_prof *p, uint32_t id, char *buf, size_t size,
                         int64_t *line);

/* The ids of stack `s`, root first, and their number. */
const uint32_t *es_prof_frames(const struct es_prof *p, uint32_t s, uint32_t *depth);

#endif
