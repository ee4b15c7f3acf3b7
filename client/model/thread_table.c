/* SPDX-License-Identifier: BSD-3-Clause */
/* The threads the model follows one by one (client/model/impl.h):
 * threads.c's table. A hash from thread id to record, the records,
 * and what decides which thread makes room for a new one: at most
 * ES_MODEL_THREADS_KEPT threads are followed; a new thread then takes the
 * place of a finished thread that has settled (ended SETTLE_NS ago, so its
 * runs on other capabilities, whose blocks may come later, were counted),
 * the one that matters least: unlabelled before labelled, then the least
 * running time (a min-heap). RESERVE settled finished threads are always
 * kept: while the live threads fill the rest, new ones are only counted. */
#include "impl.h"

#include <assert.h>
#include <stdlib.h>

/* Finished threads kept whatever comes: a new thread takes a finished
 * one's place only while more are kept (so the threads that ran most stay
 * listed even when the live ones fill the table). */
#define RESERVE 256
/* A finished thread may be forgotten once the stream is this far past its
 * end: its runs on other capabilities may still be on their way (their
 * blocks arrive at each flush, or on GHC 9.0 when 2 MiB are full). */
#define SETTLE_NS NS_PER_S

/* ---- The table of followed threads. */

static size_t home(uint32_t id) {
    return (id * 2654435761u) & (ES_MODEL_THREAD_SLOTS - 1);
}

/* The slot holding `id`, or the empty slot where it would go. */
static size_t find_slot(const struct es_model_thread_table *tb, uint32_t id) {
    size_t j = home(id);
    while (tb->slot[j] && tb->t[tb->slot[j] - 1].id != id)
        j = (j + 1) & (ES_MODEL_THREAD_SLOTS - 1);
    return j;
}

static void unslot(struct es_model_thread_table *tb, size_t j) {
    /* Backward-shift deletion keeps every probe chain whole. */
    tb->slot[j] = 0;
    for (size_t k = (j + 1) & (ES_MODEL_THREAD_SLOTS - 1); tb->slot[k];
         k = (k + 1) & (ES_MODEL_THREAD_SLOTS - 1)) {
        size_t h = home(tb->t[tb->slot[k] - 1].id);
        bool between = j < k ? (h > j && h <= k) : (h > j || h <= k);
        if (!between) {
            tb->slot[j] = tb->slot[k];
            tb->slot[k] = 0;
            j = k;
        }
    }
}

struct es_model_thread_table *es_model_thread_table(struct es_model *m) {
    if (m->thr.tb == NULL && !m->oom) {
        struct es_model_thread_table *tb = calloc(1, sizeof *tb);
        if (tb == NULL) {
            m->oom = true;
            return NULL;
        }
        for (uint32_t i = 0; i < ES_MODEL_THREADS_KEPT; i++) {
            tb->free_idx[i] = ES_MODEL_THREADS_KEPT - 1 - i;
            tb->heap_pos[i] = ES_MODEL_THREAD_NONE;
        }
        tb->nfree = ES_MODEL_THREADS_KEPT;
        tb->width = ES_MODEL_TL_WIDTH0;
        m->thr.tb = tb;
    }
    return m->thr.tb;
}

/* ---- The heap of finished threads, least running time on top. */

static bool before(const struct es_model_thread_table *tb, uint32_t a, uint32_t b) {
    const struct es_model_thread *x = &tb->t[a], *y = &tb->t[b];
    if ((x->label[0] != 0) != (y->label[0] != 0))
        return y->label[0] != 0;
    return x->run_ns != y->run_ns ? x->run_ns < y->run_ns : x->state_t < y->state_t;
}

static void heap_set(struct es_model_thread_table *tb, uint32_t k, uint32_t i) {
    tb->heap[k] = i;
    tb->heap_pos[i] = k;
}

static void sift_up(struct es_model_thread_table *tb, uint32_t k) {
    uint32_t i = tb->heap[k];
    while (k > 0) {
        uint32_t parent = (k - 1) / 2;
        if (!before(tb, i, tb->heap[parent]))
            break;
        heap_set(tb, k, tb->heap[parent]);
        k = parent;
    }
    heap_set(tb, k, i);
}

static void sift_down(struct es_model_thread_table *tb, uint32_t k) {
    uint32_t i = tb->heap[k];
    for (;;) {
        uint32_t c = 2 * k + 1;
        if (c >= tb->heap_n)
            break;
        if (c + 1 < tb->heap_n && before(tb, tb->heap[c + 1], tb->heap[c]))
            c++;
        if (!before(tb, tb->heap[c], i))
            break;
        heap_set(tb, k, tb->heap[c]);
        k = c;
    }
    heap_set(tb, k, i);
}

/* Finished threads that ended SETTLE_NS ago or more join the heap. */
static void settle(const struct es_model *m, struct es_model_thread_table *tb) {
    while (tb->settling_n > 0) {
        uint32_t i = tb->settling[tb->settling_head];
        if (tb->t[i].state_t + SETTLE_NS > m->now)
            break;
        tb->settling_head = (tb->settling_head + 1) % ES_MODEL_THREADS_KEPT;
        tb->settling_n--;
        assert(tb->heap_pos[i] == ES_MODEL_THREAD_NONE && tb->heap_n < ES_MODEL_THREADS_KEPT);
        heap_set(tb, tb->heap_n++, i);
        sift_up(tb, tb->heap_n - 1);
    }
}

/* Forget the settled finished thread that matters least, its running time
 * kept in the sum; false when no more than RESERVE of them are kept. */
static bool evict(struct es_model *m, struct es_model_thread_table *tb) {
    settle(m, tb);
    if (tb->heap_n <= RESERVE)
        return false;
    uint32_t i = tb->heap[0];
    tb->heap_pos[i] = ES_MODEL_THREAD_NONE;
    if (--tb->heap_n > 0) {
        heap_set(tb, 0, tb->heap[tb->heap_n]);
        sift_down(tb, 0);
    }
    m->thr.evicted++;
    m->thr.evicted_ns += tb->t[i].run_ns;
    if (tb->t[i].created == 0 && tb->t[i].id < m->thr.min_created &&
        !es_model_thread_in_gap(m, tb->t[i].id))
        m->thr.evicted_before++;
    tb->gone[tb->t[i].id % ES_MODEL_THREADS_KEPT] = tb->t[i].id;
    unslot(tb, find_slot(tb, tb->t[i].id));
    tb->free_idx[tb->nfree++] = i;
    m->thr.kept--;
    return true;
}

struct es_model_thread *es_model_thread_get(struct es_model *m, uint32_t id, uint64_t created) {
    struct es_model_thread_table *tb = es_model_thread_table(m);
    if (tb == NULL || id == 0)
        return NULL;
    size_t j = find_slot(tb, id);
    if (tb->slot[j])
        return &tb->t[tb->slot[j] - 1];
    if (tb->gone[id % ES_MODEL_THREADS_KEPT] == id)
        return NULL;
    if (tb->nfree == 0 && !evict(m, tb)) {
        if (created) {
            m->thr.untracked++;
            tb->gone[id % ES_MODEL_THREADS_KEPT] = id; /* and not followed later either */
        }
        return NULL;
    }
    j = find_slot(tb, id); /* eviction may have moved the chain */
    uint32_t i = tb->free_idx[--tb->nfree];
    tb->t[i] = (struct es_model_thread){.id = id, .cap = ES_GLOBAL_CAP, .created = created};
    if (id > m->thr.max_seen)
        m->thr.max_seen = id;
    tb->slot[j] = i + 1;
    m->thr.kept++;
    assert(m->thr.kept <= ES_MODEL_THREADS_KEPT);
    return &tb->t[i];
}

const struct es_model_thread *es_model_thread_find(const struct es_model *m, uint32_t id) {
    const struct es_model_thread_table *tb = m->thr.tb;
    if (tb == NULL)
        return NULL;
    size_t j = find_slot(tb, id);
    return tb->slot[j] ? &tb->t[tb->slot[j] - 1] : NULL;
}

void es_model_thread_ended(struct es_model *m, const struct es_model_thread *th) {
    struct es_model_thread_table *tb = m->thr.tb;
    uint32_t i = (uint32_t)(th - tb->t);
    assert(tb->settling_n < ES_MODEL_THREADS_KEPT);
    tb->settling[(tb->settling_head + tb->settling_n++) % ES_MODEL_THREADS_KEPT] = i;
}

void es_model_thread_rekey(struct es_model *m, const struct es_model_thread *th) {
    struct es_model_thread_table *tb = m->thr.tb;
    uint32_t k = tb->heap_pos[th - tb->t];
    if (k != ES_MODEL_THREAD_NONE)
        sift_down(tb, k);
}

/* Threads that began before the stream: seen, never created, and older
 * than every thread created in it (ids count up), so a thread whose
 * events came before its creation is not one of them. */
uint64_t es_model_threads_before(const struct es_model *m) {
    uint64_t n = m->thr.evicted_before;
    const struct es_model_thread_table *tb = m->thr.tb;
    for (size_t j = 0; tb != NULL && j < ES_MODEL_THREAD_SLOTS; j++) {
        const struct es_model_thread *th = tb->slot[j] ? &tb->t[tb->slot[j] - 1] : NULL;
        if (th != NULL && th->created == 0 &&
            (m->thr.min_created == 0 || th->id < m->thr.min_created) &&
            !es_model_thread_in_gap(m, th->id))
            n++;
    }
    return n;
}

void es_model_threads_sched_off(struct es_model *m) {
    if (!m->thr.sched_gap) {
        m->thr.sched_gap = true;
        m->thr.gap_after = m->thr.max_seen;
    }
}

bool es_model_thread_in_gap(const struct es_model *m, uint32_t id) {
    return m->thr.sched_gap && id > m->thr.gap_after;
}

uint64_t es_model_threads_in_gaps(const struct es_model *m) {
    const struct es_model_thread_table *tb = m->thr.tb;
    uint64_t n = 0;
    for (size_t j = 0; m->thr.sched_gap && tb != NULL && j < ES_MODEL_THREAD_SLOTS; j++) {
        const struct es_model_thread *th = tb->slot[j] ? &tb->t[tb->slot[j] - 1] : NULL;
        if (th != NULL && th->created == 0 && es_model_thread_in_gap(m, th->id))
            n++;
    }
    return n;
}

/* A thread's running time, its run in progress included. */
uint64_t es_model_thread_run_ns(const struct es_model *m, const struct es_model_thread *th) {
    uint64_t ns = th->run_ns;
    if (th->run_since && m->now > th->run_since)
        ns += m->now - th->run_since;
    return ns;
}

struct ranked {
    uint64_t ns;
    uint32_t id, i;
};

/* Most running time first; then by id, oldest first. */
static int by_time(const void *a, const void *b) {
    const struct ranked *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id;
}

size_t es_model_threads_top(const struct es_model *m, const struct es_model_thread **out,
                            size_t n) {
    const struct es_model_thread_table *tb = m->thr.tb;
    if (tb == NULL || n == 0)
        return 0;
    struct ranked *r = malloc(ES_MODEL_THREADS_KEPT * sizeof *r);
    if (r == NULL)
        return 0;
    size_t k = 0;
    for (size_t j = 0; j < ES_MODEL_THREAD_SLOTS; j++)
        if (tb->slot[j]) {
            uint32_t i = tb->slot[j] - 1;
            r[k++] = (struct ranked){es_model_thread_run_ns(m, &tb->t[i]), tb->t[i].id, i};
        }
    qsort(r, k, sizeof *r, by_time);
    size_t got = k < n ? k : n;
    for (size_t i = 0; i < got; i++)
        out[i] = &tb->t[r[i].i];
    free(r);
    return got;
}
