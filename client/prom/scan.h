/* SPDX-License-Identifier: BSD-3-Clause */
/* The paths `metrics`'s globs match that it does not follow yet
 * (client/prom/metrics.c): each is a candidate, tried as a target of its own
 * (client/prom/target.h) a few at a time, until it sends an eventlog
 * header; from then on it is followed as a program. A path that is not a
 * socket is never tried. One that sends no eventlog (a file of another
 * kind, a socket that never answers or refuses) is tried again later and
 * later (5 s, doubling up to 80 s), or at once when another file appears
 * at its path (a program started again there), and new paths go first.
 * So whatever a glob matches (thousands of files and sockets planted in a
 * directory others may write) costs a path's name each, at most
 * ES_PROMSCAN_TRIALS connections at once, and one line on stderr a second,
 * while a program that starts among them is tried at the next free turn.
 *
 * Loop thread. */
#ifndef ES_PROMSCAN_H
#define ES_PROMSCAN_H

#include "base/es_queue.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Candidates tried at once, at most (each a connection). */
#define ES_PROMSCAN_TRIALS 64
/* Candidates kept, at most: more paths are not followed (and said so). */
#define ES_PROMSCAN_MAX 65536
/* Hash buckets of the candidates, by path. */
#define ES_PROMSCAN_BUCKETS 4096

struct es_promscan_cand {
    struct es_queue_node node; /* in its bucket, newest first */
    dev_t dev;                 /* the socket file's identity when last seen */
    ino_t ino;
    uint64_t due_ms;   /* when it may be tried next (the loop's clock) */
    unsigned failures; /* tries in a row that found no eventlog */
    bool matched;      /* found by the scan under way (or the latest) */
    bool trying;       /* a target is trying it now */
    char source[];     /* "unix:PATH" */
};

struct es_promscan {
    struct es_queue bucket[ES_PROMSCAN_BUCKETS]; /* of es_promscan_cand */
    size_t n;
    unsigned trying;
    /* What es_promscan_report says next: the first failure since the
     * last report, how many more, and paths not kept (ES_PROMSCAN_MAX). */
    char first[400];
    unsigned failed, not_kept;
};

void es_promscan_init(struct es_promscan *sc);
void es_promscan_destroy(struct es_promscan *sc);

/* A scan begins: no candidate is matched yet. */
void es_promscan_begin(struct es_promscan *sc);
/* `path`, which a glob matched and no target follows: a candidate, new or
 * known (due at once when the file at `path` is another than before);
 * left out when it is not a socket. */
void es_promscan_match(struct es_promscan *sc, const char *path, uint64_t now);
/* The scan is over: candidates it did not match go, unless being tried. */
void es_promscan_end(struct es_promscan *sc);

/* The candidate to try now, marked as being tried, or NULL (none due, or
 * ES_PROMSCAN_TRIALS being tried): fewest failures first, then the
 * earliest due. */
struct es_promscan_cand *es_promscan_next(struct es_promscan *sc, uint64_t now);
/* Its try found a program (a target follows it from now on), or its path
 * went away: forgotten. */
void es_promscan_forget(struct es_promscan *sc, struct es_promscan_cand *c);
/* Its try found no eventlog (`why`): tried again later, said in the next
 * report when it is the first failure in a row. */
void es_promscan_failed(struct es_promscan *sc, struct es_promscan_cand *c, const char *why,
                        uint64_t now);
/* One line on stderr, at most, for what failed since the last report
 * (called once a second). */
void es_promscan_report(struct es_promscan *sc);

#endif
