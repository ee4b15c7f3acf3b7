/* SPDX-License-Identifier: BSD-3-Clause */
/* The paths `metrics`'s globs match that it does not follow yet
 * (client/prom/metrics.c): each is a candidate, tried as a target of its own
 * (client/prom/target.h) until it sends an eventlog header; from then on it
 * is followed as a program. A path that is not a socket is never tried.
 *
 * Tries are shared out by owner: the user who owns the path's name (the
 * symlink's, for a symlink) is the candidate's owner, and the next try goes
 * to the owner with the fewest tries under way (then the fewest paths
 * waiting), so another user's planted
 * sockets, however many, take their owner's share of the
 * ES_PROMSCAN_TRIALS connections and never hold up a program of someone
 * else's beyond the end of one try. Within an owner, paths never tried go
 * first, those of the latest scan first (in the glob's order); then the
 * others as they fall due. One that
 * sends no eventlog (a file of another kind, a socket that never answers or
 * refuses) is tried again later and later (5 s, doubling up to 80 s), or
 * at once when another file appears at its path (a program started again
 * there: its device, inode and time of making are remembered).
 *
 * At most ES_PROMSCAN_MAX candidates are kept (about 200 bytes each); when
 * full, a new path of one owner takes the place of an idle path of the
 * owner that holds the most, so one user's planted names cannot crowd out
 * another's program. So whatever a glob matches costs a path's name each,
 * at most ES_PROMSCAN_TRIALS connections at once, and one line on stderr a
 * second.
 *
 * Loop thread. */
#ifndef ES_PROMSCAN_H
#define ES_PROMSCAN_H

#include "base/es_queue.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Candidates tried at once, at most (each a connection). */
#define ES_PROMSCAN_TRIALS 64
/* Candidates kept, at most (es_promscan.max): more paths are not followed
 * (and said so). */
#define ES_PROMSCAN_MAX 65536
/* Hash buckets of the candidates, by path. */
#define ES_PROMSCAN_BUCKETS 4096

/* The candidates of one user, and their turn. */
struct es_promscan_owner {
    struct es_queue_node node; /* in the scan's owners */
    uid_t uid;
    struct es_queue cands; /* all its candidates (es_promscan_cand.of_owner), newest first */
    struct es_queue ready; /* those to try now (es_promscan_cand.turn), in this order */
    struct es_promscan_cand *last_new; /* in ready: the latest the scan under way made new */
    unsigned trying;                   /* of its candidates, being tried */
};

struct es_promscan_cand {
    struct es_queue_node node;     /* in its bucket, newest first */
    struct es_queue_node of_owner; /* in its owner's cands */
    struct es_queue_node turn;     /* in its owner's ready, while due and not being tried */
    struct es_promscan_owner *owner;
    dev_t dev; /* the socket file's identity when last seen (an inode */
    ino_t ino; /* is soon reused: its mtime, when it was made, too) */
    struct timespec mtime;
    uint64_t due_ms;   /* when it may be tried next (the loop's clock) */
    unsigned failures; /* tries in a row that found no eventlog */
    bool matched;      /* found by the scan under way (or the latest) */
    bool trying;       /* a target is trying it now */
    char source[];     /* "unix:PATH" */
};

struct es_promscan {
    struct es_queue bucket[ES_PROMSCAN_BUCKETS]; /* of es_promscan_cand */
    struct es_queue owners;                      /* of es_promscan_owner, each with a candidate */
    size_t n;
    size_t max; /* candidates kept at most: ES_PROMSCAN_MAX (a test lowers it) */
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
 * known (tried first among its owner's when new, or when the file at `path`
 * is another than before); left out when it is not a socket. */
void es_promscan_match(struct es_promscan *sc, const char *path, uint64_t now);
/* The scan is over: candidates it did not match go, unless being tried;
 * those due by `now` wait for their turn. */
void es_promscan_end(struct es_promscan *sc, uint64_t now);

/* The candidate to try now, marked as being tried, or NULL (none due, or
 * ES_PROMSCAN_TRIALS being tried): the next of the owner with the fewest
 * being tried, then with the fewest waiting. */
struct es_promscan_cand *es_promscan_next(struct es_promscan *sc);
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
