/* SPDX-License-Identifier: BSD-3-Clause */
#include "scan.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RETRY_MS     5000
#define RETRY_MAX_MS 80000

#define CAND(n) ES_QUEUE_DATA(n, struct es_promscan_cand, node)

void es_promscan_init(struct es_promscan *sc) {
    memset(sc, 0, sizeof *sc);
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        es_queue_init(&sc->bucket[b]);
}

/* Take `c` out of its bucket `b` and free it. */
static void drop(struct es_promscan *sc, size_t b, struct es_promscan_cand *c) {
    assert(sc->n > 0);
    es_queue_remove(&sc->bucket[b], &c->node);
    sc->n--;
    free(c);
}

void es_promscan_destroy(struct es_promscan *sc) {
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        ES_QUEUE_FOREACH_SAFE(n, &sc->bucket[b]) {
            drop(sc, b, CAND(n));
        }
    assert(sc->n == 0);
}

static size_t bucket_of(const char *source) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)source; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % ES_PROMSCAN_BUCKETS;
}

void es_promscan_begin(struct es_promscan *sc) {
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        ES_QUEUE_FOREACH(n, &sc->bucket[b]) {
            CAND(n)->matched = false;
        }
}

void es_promscan_match(struct es_promscan *sc, const char *path, uint64_t now) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return; /* not a socket: never a program's eventlog-socket */
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
    if (c == NULL) {
        size_t len = strlen(source) + 1;
        if (sc->n >= ES_PROMSCAN_MAX || (c = calloc(1, sizeof *c + len)) == NULL) {
            sc->not_kept++;
            return;
        }
        memcpy(c->source, source, len);
        es_queue_insert_head(&sc->bucket[b], &c->node);
        sc->n++;
        c->due_ms = now;
    } else if (c->dev != st.st_dev || c->ino != st.st_ino) {
        /* Another file at the path: a program started there again. */
        c->failures = 0;
        c->due_ms = now;
    }
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    c->matched = true;
}

void es_promscan_end(struct es_promscan *sc) {
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        ES_QUEUE_FOREACH_SAFE(n, &sc->bucket[b]) {
            if (!CAND(n)->matched && !CAND(n)->trying)
                drop(sc, b, CAND(n));
        }
}

struct es_promscan_cand *es_promscan_next(struct es_promscan *sc, uint64_t now) {
    if (sc->trying >= ES_PROMSCAN_TRIALS)
        return NULL;
    struct es_promscan_cand *best = NULL;
    for (size_t b = 0; b < ES_PROMSCAN_BUCKETS; b++)
        ES_QUEUE_FOREACH(n, &sc->bucket[b]) {
            struct es_promscan_cand *c = CAND(n);
            if (!c->trying && c->due_ms <= now &&
                (best == NULL || c->failures < best->failures ||
                 (c->failures == best->failures && c->due_ms < best->due_ms)))
                best = c;
        }
    if (best != NULL) {
        best->trying = true;
        sc->trying++;
    }
    return best;
}

void es_promscan_forget(struct es_promscan *sc, struct es_promscan_cand *c) {
    if (c->trying) {
        assert(sc->trying > 0);
        sc->trying--;
    }
    drop(sc, bucket_of(c->source), c);
}

void es_promscan_failed(struct es_promscan *sc, struct es_promscan_cand *c, const char *why,
                        uint64_t now) {
    if (c->trying) {
        assert(sc->trying > 0);
        sc->trying--;
    }
    c->trying = false;
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
    char more[160] = "";
    if (sc->not_kept > 0)
        snprintf(more, sizeof more, "%s%u more sockets not followed (the globs match more than %d)",
                 sc->failed > 0 ? "; " : "", sc->not_kept, ES_PROMSCAN_MAX);
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
