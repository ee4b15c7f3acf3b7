/* SPDX-License-Identifier: BSD-3-Clause */
#include "scan.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RETRY_MS     5000
#define RETRY_MAX_MS 80000

#define CAND(n)     ES_QUEUE_DATA(n, struct es_promscan_cand, node)
#define OWNED(n)    ES_QUEUE_DATA(n, struct es_promscan_cand, of_owner)
#define TURN(n)     ES_QUEUE_DATA(n, struct es_promscan_cand, turn)
#define OWNER_OF(n) ES_QUEUE_DATA(n, struct es_promscan_owner, node)

void es_promscan_init(struct es_promscan *sc) {
    memset(sc, 0, sizeof *sc);
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        es_queue_init(&sc->bucket[b]);
    es_queue_init(&sc->owners);
    sc->max = ES_PROMSCAN_MAX;
}

static size_t bucket_of(const char *source) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)source; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % ES_PROMSCAN_BUCKETS;
}

/* The owner of `uid`'s candidates, made when it has none yet; NULL when
 * out of memory. */
static struct es_promscan_owner *owner_of(struct es_promscan *sc, uid_t uid) {
    ES_QUEUE_FOREACH(n, &sc->owners) {
        if (OWNER_OF(n)->uid == uid)
            return OWNER_OF(n);
    }
    struct es_promscan_owner *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->uid = uid;
    es_queue_init(&o->cands);
    es_queue_init(&o->ready);
    es_queue_insert_tail(&sc->owners, &o->node);
    return o;
}

/* `c` leaves its owner's turn, if in it (the scan's next new path then
 * goes first, when `c` was its latest). */
static void unturn(struct es_promscan_cand *c) {
    struct es_promscan_owner *o = c->owner;
    if (!es_queue_contains(&o->ready, &c->turn))
        return;
    if (o->last_new == c)
        o->last_new = NULL;
    es_queue_remove(&o->ready, &c->turn);
}

/* `c` joins `o`'s candidates. */
static void join(struct es_promscan_cand *c, struct es_promscan_owner *o) {
    assert(c->owner == NULL && !c->trying);
    c->owner = o;
    es_queue_insert_head(&o->cands, &c->of_owner);
}

/* `c` leaves its owner (out of its turn), which goes once it has none. */
static void leave(struct es_promscan *sc, struct es_promscan_cand *c) {
    struct es_promscan_owner *o = c->owner;
    assert(o != NULL && !c->trying);
    unturn(c);
    es_queue_remove(&o->cands, &c->of_owner);
    c->owner = NULL;
    if (es_queue_empty(&o->cands)) {
        assert(es_queue_empty(&o->ready) && o->trying == 0);
        es_queue_remove(&sc->owners, &o->node);
        free(o);
    }
}

/* Take `c` out of its bucket `b` and its owner, and free it. */
static void drop(struct es_promscan *sc, size_t b, struct es_promscan_cand *c) {
    assert(sc->n > 0);
    leave(sc, c);
    es_queue_remove(&sc->bucket[b], &c->node);
    sc->n--;
    free(c);
}

/* `c`'s try is over. */
static void tried(struct es_promscan *sc, struct es_promscan_cand *c) {
    if (!c->trying)
        return;
    assert(sc->trying > 0 && c->owner->trying > 0);
    sc->trying--;
    c->owner->trying--;
    c->trying = false;
}

void es_promscan_destroy(struct es_promscan *sc) {
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        ES_QUEUE_FOREACH_SAFE(n, &sc->bucket[b]) {
            tried(sc, CAND(n));
            drop(sc, b, CAND(n));
        }
    assert(sc->n == 0 && es_queue_empty(&sc->owners));
}

void es_promscan_begin(struct es_promscan *sc) {
    ES_QUEUE_FOREACH(n, &sc->owners) {
        OWNER_OF(n)->last_new = NULL;
    }
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        ES_QUEUE_FOREACH(n, &sc->bucket[b]) {
            CAND(n)->matched = false;
        }
}

/* `c`, never tried (or a new file at its path): first in its owner's
 * turn, after those the scan under way found new before it. */
static void fresh(struct es_promscan_cand *c, uint64_t now) {
    struct es_promscan_owner *o = c->owner;
    c->failures = 0;
    c->due_ms = now;
    if (c->trying)
        return; /* its turn comes once this try ends */
    unturn(c);
    if (o->last_new != NULL)
        es_queue_insert_after(&o->ready, &o->last_new->turn, &c->turn);
    else
        es_queue_insert_head(&o->ready, &c->turn);
    o->last_new = c;
}

/* Room for a candidate of `uid` when sc->max are kept: an idle
 * candidate of the owner that holds the most goes, the oldest first,
 * unless that owner holds hardly more than `uid`'s. Returns whether there
 * is room. */
static bool make_room(struct es_promscan *sc, uid_t uid) {
    if (sc->n < sc->max)
        return true;
    struct es_promscan_owner *big = NULL;
    size_t most = 0, mine = 0;
    ES_QUEUE_FOREACH(n, &sc->owners) {
        struct es_promscan_owner *o = OWNER_OF(n);
        size_t len = es_queue_len(&o->cands);
        if (o->uid == uid)
            mine = len;
        if (len > most) {
            most = len;
            big = o;
        }
    }
    if (big == NULL || most <= mine + 1)
        return false;
    for (struct es_queue_node *n = es_queue_last(&big->cands); n != NULL;
         n = es_queue_prev(&big->cands, n))
        if (!OWNED(n)->trying) {
            drop(sc, bucket_of(OWNED(n)->source), OWNED(n));
            return true;
        }
    return false;
}

/* A new candidate for `source` (in bucket `b`), owned by `uid`; NULL when
 * it is not kept. */
static struct es_promscan_cand *add(struct es_promscan *sc, size_t b, const char *source,
                                    uid_t uid) {
    size_t len = strlen(source) + 1;
    struct es_promscan_cand *c = NULL;
    struct es_promscan_owner *o = NULL;
    if (!make_room(sc, uid) || (o = owner_of(sc, uid)) == NULL ||
        (c = calloc(1, sizeof *c + len)) == NULL) {
        if (o != NULL && es_queue_empty(&o->cands)) {
            es_queue_remove(&sc->owners, &o->node);
            free(o);
        }
        sc->not_kept++;
        return NULL;
    }
    memcpy(c->source, source, len);
    es_queue_insert_head(&sc->bucket[b], &c->node);
    sc->n++;
    join(c, o);
    return c;
}

/* Its path's name now belongs to `uid`: `c` moves to that owner's
 * candidates (or goes, out of memory). Returns whether it is kept. */
static bool rehome(struct es_promscan *sc, size_t b, struct es_promscan_cand *c, uid_t uid) {
    if (c->trying)
        return true; /* moved once this try ends, by a later scan */
    leave(sc, c);
    struct es_promscan_owner *o = owner_of(sc, uid);
    if (o == NULL) {
        es_queue_remove(&sc->bucket[b], &c->node);
        sc->n--;
        free(c);
        return false;
    }
    join(c, o);
    return true;
}

void es_promscan_match(struct es_promscan *sc, const char *path, uint64_t now) {
    struct stat st, name;
    if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return; /* not a socket: never a program's eventlog-socket */
    /* Who made the name: a symlink's owner, not its target's. */
    uid_t uid = lstat(path, &name) == 0 ? name.st_uid : st.st_uid;
    char source[300];
    if ((size_t)snprintf(source, sizeof source, "unix:%s", path) >= sizeof source)
        return; /* longer than any Unix socket path */
    size_t b = bucket_of(source);
    struct es_promscan_cand *c = NULL;
    ES_QUEUE_FOREACH(n, &sc->bucket[b]) {
        if (strcmp(CAND(n)->source, source) == 0) {
            c = CAND(n);
            break;
        }
    }
    bool renew = c == NULL || c->dev != st.st_dev || c->ino != st.st_ino ||
                 c->mtime.tv_sec != st.st_mtim.tv_sec || c->mtime.tv_nsec != st.st_mtim.tv_nsec;
    if (c == NULL && (c = add(sc, b, source, uid)) == NULL)
        return;
    if (c->owner->uid != uid && !rehome(sc, b, c, uid))
        return;
    /* New, or another file at the path: a program started there again. */
    if (renew)
        fresh(c, now);
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    c->mtime = st.st_mtim;
    c->matched = true;
}

void es_promscan_end(struct es_promscan *sc, uint64_t now) {
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        ES_QUEUE_FOREACH_SAFE(n, &sc->bucket[b]) {
            struct es_promscan_cand *c = CAND(n);
            if (c->trying)
                continue;
            if (!c->matched)
                drop(sc, b, c);
            else if (c->due_ms <= now && !es_queue_linked(&c->turn))
                es_queue_insert_tail(&c->owner->ready, &c->turn);
        }
}

struct es_promscan_cand *es_promscan_next(struct es_promscan *sc) {
    if (sc->trying >= ES_PROMSCAN_TRIALS)
        return NULL;
    struct es_promscan_owner *best = NULL;
    ES_QUEUE_FOREACH(n, &sc->owners) {
        struct es_promscan_owner *o = OWNER_OF(n);
        if (es_queue_empty(&o->ready))
            continue;
        if (best == NULL || o->trying < best->trying ||
            (o->trying == best->trying && es_queue_len(&o->ready) < es_queue_len(&best->ready)))
            best = o;
    }
    if (best == NULL)
        return NULL;
    struct es_promscan_cand *c = TURN(es_queue_first(&best->ready));
    assert(!c->trying && c->owner == best);
    unturn(c);
    c->trying = true;
    best->trying++;
    sc->trying++;
    return c;
}

void es_promscan_forget(struct es_promscan *sc, struct es_promscan_cand *c) {
    tried(sc, c);
    drop(sc, bucket_of(c->source), c);
}

void es_promscan_failed(struct es_promscan *sc, struct es_promscan_cand *c, const char *why,
                        uint64_t now) {
    tried(sc, c);
    uint64_t pause = RETRY_MS;
    for (unsigned i = 0; i < c->failures && pause < RETRY_MAX_MS; i++)
        pause *= 2;
    c->due_ms = now + (pause < RETRY_MAX_MS ? pause : RETRY_MAX_MS);
    if (c->failures++ > 0)
        return; /* said when it first failed */
    if (sc->failed++ == 0)
        snprintf(sc->first, sizeof sc->first, "%.200s: %.180s", c->source, why);
}

void es_promscan_report(struct es_promscan *sc) {
    char more[200] = "";
    if (sc->not_kept > 0)
        snprintf(more, sizeof more,
                 "%s%u more sockets not followed (the globs match more than %zu, and their "
                 "users hold as many)",
                 sc->failed > 0 ? "; " : "", sc->not_kept, sc->max);
    if (sc->failed == 1)
        fprintf(stderr, "eventlog-socket metrics: %s (tried again later)%s\n", sc->first, more);
    else if (sc->failed > 1)
        fprintf(stderr,
                "eventlog-socket metrics: %s, and %u more paths the globs match sent no eventlog "
                "(tried again later, less and less often)%s\n",
                sc->first, sc->failed - 1, more);
    else if (more[0] != '\0')
        fprintf(stderr, "eventlog-socket metrics: %s\n", more);
    sc->failed = sc->not_kept = 0;
}
