/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's families of figures (client/model/model.h): their limits and the
 * types struct es_model holds, by family: capabilities, the per-second
 * series and pause histograms, notes, census labels, the history of the
 * whole run, threads, generations, sparks. Included by model.h, before
 * struct es_model; the queries on them are model.h's. Pure, like the
 * model: one thread at a time. */
#ifndef ES_MODEL_FAMILIES_H
#define ES_MODEL_FAMILIES_H

#include "format/es_event_names.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Capabilities followed one by one; events of higher ones count in totals
 * only. */
#define ES_MODEL_MAX_CAPS 256
/* Points of each history series: one per second, the last two minutes. */
#define ES_MODEL_SERIES 120
/* Pause histograms: eight buckets per power of two from 1 us up (a
 * percentile is within about 4.5 % of the true value), one since the start
 * and one per second of the last ES_MODEL_SECONDS, so percentiles over the
 * last minute hold however many GCs there are. */
#define ES_MODEL_PAUSE_BUCKETS 320
#define ES_MODEL_SECONDS       64
/* Markers and messages kept, newest last. */
#define ES_MODEL_NOTES    32
#define ES_MODEL_NOTE_LEN 160
/* Distinct census labels (closure types, cost-centre stacks...) kept; more
 * are summed under "(other labels)". */
/* The event classes (ES_CLASSES_COUNT, cbits/format/es_classes.h), and the
 * gaps of them that have ended, kept newest last. */
#define ES_MODEL_CLASSES    6
#define ES_MODEL_CLASS_GAPS 16
/* The cut notice's reason, kept at most (bytes, NUL included). */
#define ES_MODEL_CUT_WHY    240
#define ES_MODEL_MAX_LABELS 65536
/* The names of -hi's info tables (IPE events) kept, in bytes (names and
 * table); the tables past it keep their addresses as names. A
 * figures-only model (`metrics`, which exports addresses) keeps none. */
#define ES_MODEL_MAX_IPE_BYTES ((size_t)32 << 20)
/* The whole run, downsampled (struct es_model_history): timeline buckets,
 * starting 10 ms wide and doubling in width whenever the run outgrows
 * them; GC pauses, censuses, markers and drop notices as points. */
#define ES_MODEL_TL_BUCKETS       512
#define ES_MODEL_TL_WIDTH0        10000000ull
#define ES_MODEL_HIST_PAUSES      4096
#define ES_MODEL_HIST_CENSUSES    512
#define ES_MODEL_HIST_CENSUS_ROWS 256
#define ES_MODEL_HIST_MARKS       1024
#define ES_MODEL_HIST_DROPS       256
/* Threads followed one by one (client/model/threads.c): past this many,
 * a new thread takes the place of a finished one that ran least (its
 * running time kept in a sum; client/model/thread_table.c), or is only
 * counted while nearly all are alive. Labels are cut to
 * ES_MODEL_THREAD_LABEL - 1 bytes. */
#define ES_MODEL_THREADS_KEPT 4096
#define ES_MODEL_THREAD_LABEL 64
/* Generations whose collections are counted one by one; collections of
 * later ones count in the last. */
#define ES_MODEL_MAX_GENS 8

/* What became of sparks (SPARK_COUNTERS, client/model/sparks.c). CREATED
 * counts every spark, as the RTS's `+RTS -s` "SPARKS: N" does: those put
 * in the pool and the duds and overflowed ones, which never were (the
 * event's own "created" field counts only the first). Each spark created
 * ends up in exactly one of the other five, or is still in the pool. */
enum es_model_spark {
    ES_SPARK_CREATED,
    ES_SPARK_DUD,
    ES_SPARK_OVERFLOWED,
    ES_SPARK_CONVERTED,
    ES_SPARK_GCD,
    ES_SPARK_FIZZLED,
    ES_SPARK_KINDS
};

/* Spark events (+RTS -lf: one per spark), counted per capability, in
 * GHC's id order; RUN and STEAL are both "converted" (STEAL on the
 * capability that stole it). */
enum es_model_spark_ev {
    ES_SPARK_EV_CREATE,
    ES_SPARK_EV_DUD,
    ES_SPARK_EV_OVERFLOW,
    ES_SPARK_EV_RUN,
    ES_SPARK_EV_STEAL,
    ES_SPARK_EV_FIZZLE,
    ES_SPARK_EV_GC,
    ES_SPARK_EV_KINDS
};

/* A capability's spark counters as one SPARK_COUNTERS event gave them
 * (running totals, enum es_model_spark) and the sparks then in its pool. */
struct es_model_spark_pt {
    uint64_t time;
    uint64_t v[ES_SPARK_KINDS];
    uint64_t pool;
};
/* Points kept per capability; when full, every other one is dropped. */
#define ES_MODEL_SPARK_POINTS 256
/* What a thread is doing (es_model_thread.state): after a STOP_THREAD,
 * what its status says (format/es_event_names.h). */
enum es_model_thread_state {
    ES_THREAD_RUNNABLE = ES_STOP_RUNNABLE, /* created, woken or yielded: in a run queue */
    ES_THREAD_BLOCKED = ES_STOP_BLOCKED,   /* on what: es_model_thread.why */
    ES_THREAD_FOREIGN = ES_STOP_FOREIGN,   /* in a foreign call */
    ES_THREAD_FINISHED = ES_STOP_FINISHED,
    ES_THREAD_RUNNING = ES_STOP_KINDS
};

struct es_model_thread_table;

/* A Haskell thread followed by the model (client/model/threads.c). */
struct es_model_thread {
    uint32_t id;
    uint16_t cap;       /* where it last ran or was sent; ES_GLOBAL_CAP: not known */
    uint8_t state;      /* enum es_model_thread_state */
    uint8_t why;        /* GHC's status in its latest STOP_THREAD (0: none) */
    uint64_t created;   /* its CREATE_THREAD's time; 0: it existed before the stream began */
    uint64_t state_t;   /* the time of the event that set `state` */
    uint64_t run_ns;    /* its closed runs (RUN_THREAD..STOP_THREAD) */
    uint64_t run_since; /* its run in progress began (0: not running) */
    char label[ES_MODEL_THREAD_LABEL]; /* labelThread's, "" when none */
};

/* A value per second: v[i] belongs to second `first + i` of the stream. */
struct es_model_series {
    uint64_t first; /* the second of v[0] */
    unsigned n;     /* points held, at most ES_MODEL_SERIES */
    unsigned head;  /* index of the oldest point in the ring */
    double v[ES_MODEL_SERIES];
};

/* One line of a census: a label and its live bytes. */
struct es_model_entry {
    uint32_t label; /* index into the model's labels */
    uint64_t bytes;
};

struct es_model_census {
    uint64_t time;  /* of its HEAP_PROF_SAMPLE_BEGIN */
    uint64_t era;   /* the RTS's census number */
    uint64_t total; /* sum of the entries' bytes */
    struct es_model_entry *e;
    size_t n, cap;
};

enum es_model_note_kind { ES_NOTE_MARKER, ES_NOTE_MESSAGE };

struct es_model_note {
    uint64_t time;
    enum es_model_note_kind kind;
    char text[ES_MODEL_NOTE_LEN]; /* cut to fit, always NUL-terminated */
};

/* A stretch of the run (es_model_history.tl). */
struct es_model_bucket {
    double heap_size, heap_live; /* the largest figure in it, -1: none */
    double allocated;            /* bytes allocated in it */
    uint64_t gc_ns;              /* pause time that ended in it */
    uint32_t minor, major;       /* collections in it */
};

/* A GC pause; after downsampling, the longest of the pauses it stands for. */
struct es_model_pause {
    uint64_t start, dur;
    bool major;
};

/* A census kept for the history: its largest labels (the rest summed under
 * "(other labels)"), bytes exact. */
struct es_model_census_pt {
    uint64_t time, total;
    uint32_t n;
    struct es_model_entry *e;
};

struct es_model_mark {
    uint64_t time;
    char text[ES_MODEL_NOTE_LEN];
};

struct es_model_drop {
    uint64_t time, chunks;
    double mib; /* the notice's figure: the size of the chunks lost */
};

/* The run since its start in bounded memory, for charts over the whole run
 * (the web view). Every list only grows, except when it is full: then its
 * points are halved (bucket pairs merged, every other census kept, pause
 * pairs reduced to the longer one) and `generation` increases, so a reader
 * that copies the lists incrementally knows to start over. */
struct es_model_history {
    uint64_t generation;
    uint64_t width; /* ns per bucket; bucket i covers [i * width, (i + 1) * width) */
    unsigned n;     /* buckets in use */
    /* The bucket es_model_tl_at found last, [at_lo, at_hi) (at_hi 0:
     * none): most events land in it, without a division. */
    uint64_t at_lo, at_hi;
    unsigned at_i;
    struct es_model_bucket tl[ES_MODEL_TL_BUCKETS];
    /* Per capability, NULL until seen: 2 * ES_MODEL_TL_BUCKETS figures,
     * [2i] ns running Haskell code and [2i + 1] ns in GC in bucket i. */
    uint64_t *cap_ns[ES_MODEL_MAX_CAPS];
    struct es_model_pause *pauses; /* ES_MODEL_HIST_PAUSES */
    size_t npauses;
    uint64_t pause_group; /* pauses each new point stands for (a power of 2) */
    uint64_t pause_pending;
    struct es_model_pause pending;
    struct es_model_census_pt *censuses; /* ES_MODEL_HIST_CENSUSES */
    size_t ncensuses;
    uint64_t census_stride; /* keep every census_stride-th census */
    uint64_t census_seen;
    struct es_model_mark marks[ES_MODEL_HIST_MARKS]; /* a ring: marks_n % size */
    uint64_t marks_n;
    struct es_model_drop drops[ES_MODEL_HIST_DROPS]; /* a ring: drops_n % size */
    uint64_t drops_n;
};

struct es_model_cap {
    uint64_t running_since;    /* time of its RUN_THREAD, 0 when not running */
    uint64_t busy_ns;          /* time spent running Haskell threads, closed runs */
    uint64_t gc_since;         /* time of its GC_START, 0 outside a GC */
    uint64_t gc_start, gc_end; /* its last GC interval not yet counted as a pause */
    bool gc_stats;             /* GC_STATS_GHC came within its current GC */
    bool gc_major;             /* and said it was a major one */
    uint64_t allocated;        /* its last HEAP_ALLOCATED total */
    bool after_gap;            /* a drop notice came since that total */
    bool seen;
    uint64_t first_block;            /* the start of its first block in the stream (0: none yet) */
    uint64_t sparks[ES_SPARK_KINDS]; /* its latest SPARK_COUNTERS (running totals) */
    uint64_t spark_pool;             /* and the sparks then in its pool */
    uint64_t spark_ev[ES_SPARK_EV_KINDS]; /* spark events (-lf) on it */
};

#endif
