/* SPDX-License-Identifier: BSD-3-Clause */
/* The model of a running program that the `eventlog-socket` command builds
 * from its eventlog, fed one event at a time: who the program is, its heap
 * and GC figures with a short history, what its capabilities do, its heap
 * censuses, its user markers and messages, and the drop notices the
 * library put in the stream. Pure: no I/O, no clock, no UI; time is the
 * stream's own (nanoseconds since the RTS started). Every figure is kept in
 * bounded memory, so a model can follow a program for any length of time.
 *
 * Fed by es_stream (cbits/format/es_stream.h): call es_model_header once with the
 * parsed header, es_model_event for every event (block markers included:
 * they say which capability the following events belong to), and
 * es_model_end when the end-of-data marker arrived. `top` and `heap` read
 * the fields and the es_model_* queries between events. Inside, one file
 * per family of events owns its part of the struct below
 * (client/model/impl.h lists them).
 *
 * One model per stream, used by one thread at a time; no locking. */
#ifndef ES_MODEL_H
#define ES_MODEL_H

#include "format/es_events.h"
#include "format/es_header.h"
#include "format/es_stream.h"
#include "spans/spans.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The limits and the types of the model's families of figures. */
#include "families.h"

/* One info table's name (es_model's ipe table). */
struct es_model_ipe {
    uint64_t addr;
    char *name; /* "LABEL (FILE:SPAN)", es_model_label_name */
};

/* A recent cost-centre sample (es_model.costs.recent): its time and
 * innermost id (UINT32_MAX: MAIN before its id is known). */
struct es_model_recent_cost {
    uint64_t t;
    uint32_t id;
};

/* Spans' histograms (client/model/spans.c). */
#define ES_MODEL_SPAN_LABELS  64
#define ES_MODEL_SPAN_BUCKETS 16
/* The buckets' upper bounds in seconds (the last is +Inf). */
extern const double es_model_span_bounds[ES_MODEL_SPAN_BUCKETS - 1];
/* The fine histogram's buckets: exact below 64 ns, then 64 to an octave
 * (each at most 1/64 of its value wide) up to 2^48 ns (78 hours). */
#define ES_MODEL_SPAN_FINE (64 + 42 * 64)
struct es_model_span_label {
    char label[ES_SPANS_LABEL_MAX + 1];
    uint64_t count;
    uint64_t failed; /* of them, ended by an exception (FAIL) */
    double sum_s;
    uint64_t max_ns;
    uint64_t buckets[ES_MODEL_SPAN_BUCKETS]; /* each its own, not cumulative */
    /* For the percentiles the views show (not kept by a figures-only
     * model): NULL until the label's first span, or memory ran out. */
    uint32_t *fine;
};
/* A span of the latest: its label (index into the model's labels, or
 * ES_MODEL_SPAN_LABELS for `other`), the capability of its START (-1:
 * none), its times, whether it failed. */
#define ES_MODEL_SPAN_RECENT 256
struct es_model_span_recent {
    uint64_t start, end;
    uint16_t label;
    int16_t cap;
    bool failed;
};

/* The `q` quantile (0 to 1) of a label's durations in seconds, within
 * 1/128 of its value (the middle of its fine bucket, within the label's
 * largest); -1 without a fine histogram or spans. */
double es_model_span_quantile(const struct es_model_span_label *l, double q);
/* A label's durations as `n` bins of equal width on a log scale from the
 * shortest to the longest (each span in the bin of its fine bucket's
 * middle): *lo_s and *hi_s the ends, counts[n]. False without a fine
 * histogram or spans. */
bool es_model_span_bins(const struct es_model_span_label *l, unsigned n, double *lo_s, double *hi_s,
                        uint64_t *counts);

struct es_model {
    /* Who the program is (empty until the events arrive). */
    char program[256];     /* program name: basename of argv[0] */
    char args[1024];       /* the whole command line, space-separated */
    char rts_id[128];      /* RTS_IDENTIFIER, e.g. "GHC-9.6.6 rts_thr" */
    char ghc_version[32];  /* from it, e.g. "9.6.6" */
    uint32_t pid;          /* 0 until OSPROCESS_PID */
    uint64_t wall_start_s; /* WALL_CLOCK_TIME at the RTS's time 0 (0: unknown) */
    /* The header declares no IPE events (169, new in GHC 9.2): the program
     * runs GHC 9.0, whose RTS cannot flush, so its events arrive in 2 MiB
     * steps and at exit (docs/performance.md, "GHC 9.0 cannot flush").
     * Known from the header, long before RTS_IDENTIFIER (which 9.0 sends
     * at exit). */
    bool no_flush;
    /* CAPSET_CREATE or CAP_CREATE came: the RTS started this eventlog
     * itself and its start-up events are in the stream (see
     * es_model_late_start). */
    bool rts_started;

    /* Stream time. */
    uint64_t first_time, now; /* first event's time and the latest time seen */
    uint64_t cap_blocks_from; /* the latest start of a capability's first block (0: none yet) */
    uint64_t events;          /* events fed, block markers included */
    uint64_t next_second;     /* stream time at which the next second starts */
    bool ended;               /* the end-of-data marker arrived */
    /* For a reader that skims (es_stream_callbacks, es_conn_callbacks):
     * the event types the model reads one by one, and the window of times
     * the others may be skimmed in; es_model_skip takes the runs. */
    bool want[ES_MAX_EVENT_TYPES];
    uint64_t window[2];
    /* es_model_figures_only: no history (the timeline, the per-second
     * series, pause, census and spark points, busy-time snapshots, the
     * lists of markers and messages). */
    bool figures_only;

    /* Heap, from HEAP_SIZE / HEAP_LIVE / HEAP_ALLOCATED / HEAP_INFO_GHC. */
    uint64_t heap_size, heap_live, allocated; /* latest; allocated summed over caps */
    uint64_t max_heap_size, max_heap_live;
    double alloc_rate;    /* bytes/s between the two latest allocation figures */
    uint64_t alloc_rated; /* allocated, less each capability's first figure */
    uint64_t alloc_rate_time, alloc_rate_bytes;
    struct es_model_series s_size, s_live, s_alloc; /* s_alloc: bytes allocated per second */
    unsigned generations;                           /* from HEAP_INFO_GHC (default 2) */

    /* GC. */
    uint64_t gcs, minor_gcs, major_gcs;
    uint64_t gen_gcs[ES_MODEL_MAX_GENS]; /* by the generation collected (GC_STATS_GHC) */
    uint64_t gc_ns;                      /* sum of pauses */
    uint64_t pause_max;
    uint64_t pause_n; /* pauses recorded (pauses since start) */
    uint64_t pause_hist[ES_MODEL_PAUSE_BUCKETS];
    struct es_model_second {
        uint64_t sec;   /* the second of stream time this slot holds (+1; 0: empty) */
        uint64_t gc_ns; /* pauses that ended in it */
        uint64_t max;
        uint32_t hist[ES_MODEL_PAUSE_BUCKETS];
    } secs[ES_MODEL_SECONDS]; /* slot sec % ES_MODEL_SECONDS */
    uint64_t last_copied;     /* bytes copied by the latest GC (GC_STATS_GHC) */

    /* Capabilities: running share from RUN_THREAD/STOP_THREAD. */
    unsigned ncaps; /* highest capability seen + 1 */
    struct es_model_cap caps[ES_MODEL_MAX_CAPS];
    uint16_t block_cap;             /* capability of the current block, ES_GLOBAL_CAP: global */
    uint64_t block_left;            /* bytes of the current block not yet fed */
    struct es_model_cap *block_rec; /* its record (caps[0] for the global
                                     * buffer), NULL past ES_MODEL_MAX_CAPS */
    uint64_t snap_t[8];             /* once-a-second snapshots of every busy_ns, */
    uint64_t snap_busy[8][ES_MODEL_MAX_CAPS]; /* running runs included */
    unsigned snap_n;

    uint64_t threads_created; /* CREATE_THREAD events (client/model/threads.c) */

    /* Threads one by one (client/model/threads.c): the table is its own. */
    struct {
        struct es_model_thread_table *tb; /* NULL until the first thread event */
        uint32_t kept;                    /* threads followed now */
        uint64_t finished;                /* threads seen finishing (all, followed or not) */
        uint64_t evicted, evicted_ns;     /* finished threads no longer followed, their run time */
        uint32_t min_created;             /* the lowest id created in the stream (0: none) */
        uint32_t max_seen;                /* the highest id seen */
        /* Scheduler events were switched off (an event classes notice),
         * the first time when threads up to id gap_after had been seen:
         * a thread seen, never created, with a higher id began while
         * they were off. */
        bool sched_gap;
        uint32_t gap_after;
        uint64_t evicted_before;          /* evicted threads that began before the stream */
        uint64_t untracked, untracked_ns; /* threads never followed (all kept were alive) */
        uint64_t run_ns;                  /* all threads' closed runs */
    } thr;

    /* Heap profile. */
    bool heap_prof;            /* a HEAP_PROF_BEGIN arrived */
    uint32_t breakdown;        /* its breakdown (1 cost centre ... 7 closure type, 8 info table) */
    uint64_t heap_interval_ns; /* its sampling period */
    char **labels;             /* interned census labels */
    uint32_t *label_len;       /* by label: its length (ES_MODEL_LABEL_NOT_SENT: renamed) */
    uint32_t *label_pos;       /* by label: its line in `building` + 1, 0 when none */
    uint32_t *label_hash;      /* open addressing: label index + 1, 0 = empty */
    size_t nlabels, labels_hash_cap;
    uint32_t label_guess; /* the label the next census line is tried as first */
    uint64_t *prev_bytes; /* by label: bytes in the previous census (trend) */
    struct es_model_census cur, prev, building;
    bool in_census;
    uint64_t censuses; /* censuses completed: a change tells a reader a new one is in `cur` */
    char **cc_label;   /* cost centre labels by id (HEAP_PROF_COST_CENTRE); a CAF's is M.CAF */
    bool *cc_caf;      /* by id: the cost centre is a CAF's (no '/' after it in a stack) */
    size_t ncc;
    /* Time profile (client/model/costs.c): cost-centre samples counted by
     * their innermost cost centre (by id, `n` of them; an empty stack is
     * MAIN's, counted in `main_early` until MAIN's id is known), and those of an
     * id past the bound. */
    struct es_model_costs {
        char **frame;    /* by id: MODULE.LABEL, the RTS's own by label; NULL: undefined */
        uint64_t *ticks; /* by id: samples with it innermost */
        bool *builtin;   /* by id: one of the RTS's own */
        size_t n;
        uint64_t samples, main_early, unknown;
        uint32_t main_id; /* MAIN's id, once defined (have_main) */
        bool have_main;
        /* The latest samples (their time and innermost id; UINT32_MAX:
         * MAIN before its id is known), a ring of ES_MODEL_RECENT_COSTS,
         * for `top`'s last seconds; not kept by es_model_figures_only. */
        struct es_model_recent_cost *recent;
        size_t recent_next, recent_n;
    } costs;
    /* Spans (client/model/spans.c): START/STOP markers matched per thread
     * (client/spans/spans.h), each label's durations as a histogram of
     * ES_MODEL_SPAN_BUCKETS; the first ES_MODEL_SPAN_LABELS labels seen
     * have their own, later ones share `other` (counters never move from
     * one series to another). */
    struct es_model_spans {
        struct es_spans *match; /* NULL until the first START or STOP */
        struct es_model_span_label *labels;
        size_t n;
        struct es_model_span_label *other; /* with `labels`, after them */
        /* The latest ES_MODEL_SPAN_RECENT spans ended, a ring (for the
         * page's timeline; not kept by a figures-only model). */
        struct es_model_span_recent *recent;
        size_t recent_next, recent_n;
    } spans;
    /* IPE events (GHC >= 9.2, -finfo-table-map): each info table's name for
     * people, by address; open addressing, addr 0 = empty. */
    struct es_model_ipe *ipe;
    size_t ipe_cap, ipe_n;
    size_t ipe_bytes;     /* names and table, at most ES_MODEL_MAX_IPE_BYTES */
    uint64_t ipe_dropped; /* IPE events past that bound, not kept */

    /* Sparks (client/model/sparks.c): a SPARK_COUNTERS event arrived
     * (each capability's latest figures are in caps[].sparks), a spark
     * event (-lf) arrived; each capability's counters over time, NULL
     * until its first, halved when full (spark_generation counts that). */
    bool sparks_seen, spark_events_seen;
    struct es_model_spark_pt *spark_pts[ES_MODEL_MAX_CAPS];
    unsigned spark_npts[ES_MODEL_MAX_CAPS];
    uint64_t spark_generation;

    /* Markers and messages: a ring, ES_MODEL_NOTES newest. */
    struct es_model_note notes[ES_MODEL_NOTES];
    uint64_t notes_n; /* notes ever seen */

    /* Drop notices from the library (protocol.md 1.3). */
    uint64_t drops, dropped_chunks;
    double dropped_mib;
    uint64_t last_drop_time;
    /* The cut notice `record` and `serve --record` end a file with when
     * the program's own end marker never came (client/source/blocks.h): the
     * recording was cut, whatever end marker follows. */
    bool cut;
    char cut_why[ES_MODEL_CUT_WHY];
    /* Wait notices (protocol.md 1.3): the program waited for lossless
     * clients; summed over the notices. */
    uint64_t wait_notices, lossless_waits;
    double lossless_wait_ms;
    uint64_t last_wait_time;
    /* Cost notices (protocol.md 1.3), which the live views ask for: the
     * latest one's CPU milliseconds per second of the program's run, in
     * all and by thread role, and the totals over every notice, for CPU
     * seconds per GiB sent. Not kept as messages. */
    uint64_t cost_notices;
    double cost_ms_per_s, cost_rts_ms_per_s, cost_walker_ms_per_s, cost_loop_ms_per_s;
    double cost_total_ms, cost_total_mib;

    /* The event classes (their notices, protocol.md 1.3): once a switch
     * has been told, which classes are on, since when each one off has
     * been off (0: on), and the latest gaps that have ended, so that a
     * view tells a gap in the record from an idle program. A class off
     * before the first switch was off from the start (0 ns). */
    bool classes_known;
    unsigned classes_on;
    uint64_t class_off_since[ES_MODEL_CLASSES];
    bool class_off[ES_MODEL_CLASSES];
    struct es_model_class_gap {
        unsigned classes; /* EVENTLOG_SOCKET_EVENTS_* bits */
        uint64_t from, to;
    } class_gaps[ES_MODEL_CLASS_GAPS];
    uint64_t class_gaps_n; /* gaps ever ended */

    /* The whole run, downsampled. */
    struct es_model_history h;

    bool oom; /* some label or thread could not be kept for lack of memory */
};

void es_model_init(struct es_model *m);
/* After init, for a consumer that reads the model's figures and nothing
 * over time (metrics): the history that charts, lists and `top`'s recent
 * shares read (es_model_tl_*, es_model_series_*, es_model_hist_*, the
 * busy-time snapshots, the spark points, the markers and messages) is not
 * kept, and markers are not in `want`: a sixth of the work per event.
 * Lasts through es_model_reset. */
void es_model_figures_only(struct es_model *m);

/* What every view says about a stream of GHC 9.0 (es_model.no_flush). */
#define ES_MODEL_GHC90_NOTE "GHC 9.0: events arrive in 2 MiB steps and at exit"
/* Whether `hdr` is GHC 9.0's (es_header_no_flush). */
static inline bool es_model_header_no_flush(const struct es_header *hdr) {
    return es_header_no_flush(hdr);
}

/* Whether the stream began after the program's start: its RTS switched
 * to eventlog-socket while running (a start from Haskell, docs/haskell.md,
 * "What a start from Haskell loses"), so the start-up events never came (on GHC
 * 9.0 also the name, arguments, pid and the heap profile's set-up). Known
 * once the stream ended without CAPSET_CREATE or CAP_CREATE, or (9.2+)
 * once the RTS_IDENTIFIER a restart posts came without them before it. */
bool es_model_late_start(const struct es_model *m);
/* What the views say of it. */
#define ES_MODEL_LATE_START_NOTE                                                                   \
    "started from Haskell: the events written before the start (the program's start-up: on "       \
    "GHC 9.0 also its name, pid and the heap profile's kind) were not streamed"

/* What the views say, in one place for `top` and the page (which gets
 * the texts in its state, client/web/json.c), so that both say the same.
 *
 * The heap profile's kind when no HEAP_PROF_BEGIN came: why, in words:
 * "its kind was not streamed: started from Haskell" beside censuses, or
 * "no heap profile seen yet: GHC 9.0 sends it at exit (with +RTS -hT)"...
 * `over`: the run is over (the stream ended, a file, the program exited).
 * Its breakdown's name when one came. */
const char *es_model_profile_kind(const struct es_model *m, bool over);

/* Whether RTS_IDENTIFIER `rts_id` ("GHC-9.6.6 rts_thr_p") names a profiling
 * RTS: its way, after the version, has a "_p" part. */
bool es_model_rts_profiled(const char *rts_id);
/* " (and N begun before the stream)" when the stream told of threads that
 * began before it (a late joiner, a start from Haskell), then " (and N
 * first seen after scheduler events were off)" for threads first seen after a
 * gap in scheduler events, else "". */
void es_model_threads_before_note(const struct es_model *m, char *buf, size_t size);
/* The program time the stream's counts (GCs, pauses, threads) run from:
 * 0 when the stream holds the program's start, else the latest start of a
 * capability's first block in it (from then on it holds every
 * capability's events): a client that joined a running program, a start
 * from Haskell (threads began before the stream). */
uint64_t es_model_counted_from(const struct es_model *m);
/* The same in words: "since start", or "since 12.3 s" (the stream's
 * start). */
void es_model_counted_since(const struct es_model *m, char *buf, size_t size);

/* The event classes switched off, in words for every view: "scheduler, gc
 * events off since 12.3 s" for those switched off now, then "; scheduler
 * events were off from 3.0 s to 7.5 s" (or "from the start") for the
 * latest gap that ended (and how many more). Returns false (and "") when
 * no class was ever switched. */
bool es_model_classes_words(const struct es_model *m, char *buf, size_t size);
/* Whether the class bit `bit` (EVENTLOG_SOCKET_EVENTS_*) is off now,
 * switched off while the program ran (an event classes notice said so):
 * the views' figures of that class are absent, not stale or zero. */
bool es_model_class_switched_off(const struct es_model *m, unsigned bit);

/* CPU seconds that streaming cost per GiB sent, over every cost notice so
 * far; negative when nothing was sent yet. */
double es_model_cost_s_per_gib(const struct es_model *m);
void es_model_destroy(struct es_model *m);
/* Forget the program (a new connection to a restarted one): as after init. */
void es_model_reset(struct es_model *m);

void es_model_header(struct es_model *m, const struct es_header *hdr);
void es_model_event(struct es_model *m, const struct es_event *ev);
/* A run of events of types not in m->want, all timed inside m->window:
 * the same as feeding them one by one, at the cost of a few additions. */
void es_model_skip(struct es_model *m, const struct es_stream_skip *run);
void es_model_end(struct es_model *m);

/* Extend the timeline to the latest event's time (m->now), so that charts
 * over it, and the runs and GCs still in progress (es_model_cap's
 * running_since and gc_since), reach "now". Events extend it only as far
 * as the time of those that fill a bucket; a caller that shows the
 * timeline live calls this before it does. */
void es_model_extend_to_now(struct es_model *m);

/* The text of label `i` of a census entry. */
/* Heap profile breakdowns (HEAP_PROF_BEGIN; GHC's EventLogFormat.h). */
enum {
    ES_MODEL_BY_CCS = 1,
    ES_MODEL_BY_MODULE = 2,
    ES_MODEL_BY_DESCR = 3,
    ES_MODEL_BY_TYPE = 4,
    ES_MODEL_BY_RETAINER = 5,
    ES_MODEL_BY_BIOGRAPHY = 6,
    ES_MODEL_BY_CLOSURE_TYPE = 7,
    ES_MODEL_BY_INFO_TABLE = 8,
    ES_MODEL_BY_ERA = 9,
};
/* A breakdown's name with its +RTS flag, e.g. "cost-centre stack (-hc)". */
const char *es_model_breakdown_name(uint32_t breakdown);
/* NULL, or, while no label has come (`have_labels` false), a sentence
 * saying why a retainer or biographical profile shows nothing yet (-hb:
 * censuses only at exit; GHC < 9.0: never) and where its samples are. */
const char *es_model_breakdown_lack(uint32_t breakdown, bool have_labels);
/* A census label as people read it: for an info-table profile (-hi) the
 * table's label (else its name without _info) and source location from
 * its IPE event, e.g. "main (Main.hs:(21,7)-(27,26))" or "Circle_con";
 * otherwise the label itself. */
const char *es_model_label_name(const struct es_model *m, uint32_t i);
const char *es_model_label(const struct es_model *m, uint32_t i);

/* Census labels (client/model/label.c): what the model keeps of the label a
 * program sends, the one text every output writes. A plain label (valid
 * UTF-8, no control character, at most ES_MODEL_LABEL_MAX bytes, not the
 * model's "(other labels)", not ending as a suffix does) is kept as sent;
 * any other is made plain (U+FFFD for each byte that starts no character
 * and for each control character, cut between characters) and given a
 * suffix: '~' and 16 hex digits of a hash of all the bytes sent, the same
 * in every run. So labels a program told apart are apart in every output. */
#define ES_MODEL_LABEL_MAX        511 /* bytes, the NUL not counted */
#define ES_MODEL_LABEL_SUFFIX_LEN 17  /* "~0123456789abcdef" */
/* Whether the `n` bytes at `s` are a plain label. */
bool es_model_label_plain(const char *s, size_t n);
/* The label of the `n` bytes at `raw` (up to a NUL, if any), into `out`
 * (ES_MODEL_LABEL_MAX + 1 bytes); returns its length. */
size_t es_model_label_clean(char *out, const uint8_t *raw, size_t n);
/* For an output that must show label `of` otherwise (its own reserved
 * name, a format's rule): `shown` (may be `out`) cut between characters to
 * leave room, then the suffix of `of`'s hash, into `out` (`size` bytes,
 * more than ES_MODEL_LABEL_SUFFIX_LEN). Returns the length. Never a plain
 * label, so never another label's text. */
size_t es_model_label_rename(char *out, size_t size, const char *shown, const char *of);
/* Bytes of label `i` in the census before `cur`, or -1 when it was absent
 * (or there was none). */
int64_t es_model_prev_bytes(const struct es_model *m, uint32_t i);
/* Indices of `cur`'s entries by bytes, largest first: fills up to `n` of
 * `out`, returns how many. */
size_t es_model_top_entries(const struct es_model *m, size_t *out, size_t n);

/* Time profile: the ids of the (at most) `n` cost centres with the most
 * samples as the innermost, most first, into `out`; how many. */
size_t es_model_top_costs(const struct es_model *m, uint32_t *out, size_t n);
/* The samples of the last `window_ns` of stream time (at most the
 * ES_MODEL_RECENT_COSTS latest): into `ids` and `counts` the (at most) `n`
 * cost centres most often innermost, most first, the RTS's IDLE left out;
 * how many. `*all` gets the samples counted, `*idle` IDLE's among them. */
size_t es_model_recent_costs(const struct es_model *m, uint64_t window_ns, uint32_t *ids,
                             uint64_t *counts, size_t n, uint64_t *all, uint64_t *idle);
#define ES_MODEL_RECENT_COSTS 65536
/* Cost centre `id`'s name ("Main.heavy", "GC"), or "cost centre N" in
 * `buf` when it was never defined (MAIN for UINT32_MAX). */
const char *es_model_cost_name(const struct es_model *m, uint32_t id, char *buf, size_t size);

/* Pause percentiles (0 < p <= 1), in ns, from the histograms: over the
 * last `window_ns` of stream time in whole seconds, at most
 * ES_MODEL_SECONDS (window_ns 0: since start). 0 when there were none. */
uint64_t es_model_pause_pct(const struct es_model *m, double p, uint64_t window_ns);
/* The largest pause in the last `window_ns` (0: since start). */
uint64_t es_model_pause_max(const struct es_model *m, uint64_t window_ns);
/* Share of stream time spent in GC, 0..1, over the last `window_ns` (whole
 * seconds, at most ES_MODEL_SECONDS; 0: since the first event). */
double es_model_gc_share(const struct es_model *m, uint64_t window_ns);
/* Share of time capability `cap` ran Haskell code over about the last
 * `window_ns` (whole seconds; 0: since the first event), 0..1. */
double es_model_cap_share(const struct es_model *m, unsigned cap, uint64_t window_ns);
/* Live threads: created (or seen without their creation: they began
 * before the stream) and not finished (client/model/threads.c). */
size_t es_model_threads(const struct es_model *m);
/* Threads one by one (client/model/threads.c): up to `n` of the followed
 * threads into `out`, most running time first; returns how many. */
size_t es_model_threads_top(const struct es_model *m, const struct es_model_thread **out, size_t n);
/* Threads the stream told of: created, or seen (running, labelled...)
 * without their CREATE_THREAD (they began before the stream). */
uint64_t es_model_threads_known(const struct es_model *m);
/* A thread's running time so far, its run in progress included; and all
 * threads' (the followed, the forgotten and the never followed). */
uint64_t es_model_thread_run_ns(const struct es_model *m, const struct es_model_thread *th);
uint64_t es_model_threads_run_ns(const struct es_model *m);
/* Its state in words: "running", "runnable", "blocked on MVar", ...,
 * "finished". */
const char *es_model_thread_state(const struct es_model_thread *th);
/* Live threads at the end of buckets `from` to `to` - 1 of `width` ns,
 * into out[0 ..]: -1 before the first thread. The model keeps the changes
 * of the whole run in at most ES_MODEL_TL_BUCKETS stretches, so the count
 * is exact at the end of each of its stretches. */
void es_model_threads_live(const struct es_model *m, uint64_t width, unsigned from, unsigned to,
                           long *out);
/* Sparks so far by what became of them, summed over the capabilities
 * (meaningful once m->sparks_seen), and of capability `cap` alone. */
void es_model_sparks(const struct es_model *m, uint64_t out[ES_SPARK_KINDS]);
void es_model_cap_sparks(const struct es_model *m, unsigned cap, uint64_t out[ES_SPARK_KINDS]);
/* The program made sparks: counters arrived and say some were created
 * (a program without sparks posts counters of zeros). */
bool es_model_has_sparks(const struct es_model *m);
/* Sparks in the pools now (the latest counters), of one capability or,
 * for ES_MODEL_MAX_CAPS, of all. */
uint64_t es_model_spark_pool(const struct es_model *m, unsigned cap);
/* Sparks created per second by capability `cap` (ES_MODEL_MAX_CAPS:
 * summed over the capabilities): over the second or more before its
 * latest counters, or since the first event when the run is younger. */
double es_model_spark_rate(const struct es_model *m, unsigned cap);
/* Capability `cap`'s counters over time, oldest first: sets *pts, returns
 * how many. */
size_t es_model_spark_points(const struct es_model *m, unsigned cap,
                             const struct es_model_spark_pt **pts);
/* Spark events (-lf) by kind, summed over the capabilities. */
void es_model_spark_events(const struct es_model *m, uint64_t out[ES_SPARK_EV_KINDS]);
/* Seconds capability `cap` ran Haskell code since the first event, the
 * run in progress included. */
double es_model_cap_busy_s(const struct es_model *m, unsigned cap);

/* Mark `i` (0 = oldest kept) and drop notice `i` of the history's rings,
 * and how many each holds. */
size_t es_model_marks_kept(const struct es_model *m);
const struct es_model_mark *es_model_mark_at(const struct es_model *m, size_t i);
size_t es_model_drops_kept(const struct es_model *m);
const struct es_model_drop *es_model_drop_at(const struct es_model *m, size_t i);
/* The model's span labels one by one, as every view walks them: its own
 * labels in the order first seen (index 0 to spans.n - 1, each with a span
 * at least), then `other` (index spans.n, once a span went there); NULL
 * past them. Also a recent span's label by its index (a model's own, or
 * ES_MODEL_SPAN_LABELS for `other`). */
const struct es_model_span_label *es_model_span_label_at(const struct es_model *m, size_t i);

/* Point `i` (0 = oldest) of a series. */
double es_model_series_at(const struct es_model_series *s, unsigned i);

#endif
