/* The model's family "threads" (client/model_impl.h): each Haskell
 * thread's label (THREAD_LABEL, from labelThread), the capability it is
 * on, the time it ran (the sum of its RUN_THREAD..STOP_THREAD intervals),
 * its state now (running, runnable, blocked and on what, in a foreign
 * call, finished) and when it was created; and the number of live threads
 * over the whole run. CREATE_THREAD, RUN_THREAD and STOP_THREAD are also
 * model_caps.c's: their handlers here pass them on first.
 *
 * Memory is bounded: at most ES_MODEL_THREADS_KEPT threads are followed.
 * A new thread then takes the place of the finished thread that ran the
 * least (a heap of finished threads; its running time stays in a sum), so
 * the threads that ran most stay listed however many come and go; while
 * the followed threads are alive but for RESERVE finished ones, new ones
 * are only counted (their running time in another sum).
 *
 * A capability's events arrive in its own order, but different
 * capabilities' blocks arrive in flush order (on GHC 9.0 whole 2 MiB
 * buffers), so nothing here depends on the order across capabilities:
 * runs are paired per capability, a thread's state is that of its latest
 * event by time, and the live count over time is kept as changes per
 * stretch of time (+1 a thread began, -1 it finished), summed when read. */
#include "model_impl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* GHC's STOP_THREAD statuses (rts/include/rts/EventLogFormat.h): 1-5 the
 * scheduler's return codes, 6 a foreign call, and for a blocked thread 6
 * plus its why_blocked (rts/include/rts/Constants.h). */
#define STOP_FINISHED 5
#define STOP_FOREIGN  6
#define STOP_BLOCKED0 6

#define SLOTS (2 * ES_MODEL_THREADS_KEPT) /* hash slots: index + 1, 0 empty */
/* Finished threads kept whatever comes: a new thread takes a finished
 * one's place only while more are kept (so the threads that ran most stay
 * listed even when the live ones fill the table). */
#define RESERVE 256
/* A finished thread may be forgotten once the stream is this far past its
 * end: its runs on other capabilities may still be on their way (their
 * blocks arrive at each flush, or on GHC 9.0 when 2 MiB are full). */
#define SETTLE_NS NS_PER_S
#define NONE      UINT32_MAX

struct es_model_thread_table {
    struct es_model_thread t[ES_MODEL_THREADS_KEPT];
    uint32_t slot[SLOTS];
    uint32_t free_idx[ES_MODEL_THREADS_KEPT]; /* a stack of unused records */
    uint32_t nfree;
    /* Finished records: first those that finished less than SETTLE_NS ago
     * (a ring, in the order their ends came), then a min-heap of the
     * others (unlabelled first, then by running time, then by finishing
     * time), and each record's place in the heap (NONE: not in it). */
    uint32_t settling[ES_MODEL_THREADS_KEPT], settling_head, settling_n;
    uint32_t heap[ES_MODEL_THREADS_KEPT], heap_n;
    uint32_t heap_pos[ES_MODEL_THREADS_KEPT];
    /* Each capability's run in progress: which thread, since when (0: none). */
    struct {
        uint32_t id;
        uint64_t since;
    } run_on[ES_MODEL_MAX_CAPS];
    /* The ids of threads no longer followed, by their low bits (thread ids
     * count up, so these are the latest): a late event of one of them
     * (from a capability whose block came after its end) adds no thread. */
    uint32_t gone[ES_MODEL_THREADS_KEPT];
    /* Live threads over the run: the change of the count in each bucket of
     * `width` ns (doubled, pairs merged, when the run outgrows them), from
     * the time of the first change on. */
    uint64_t width, first_change;
    unsigned nb;
    int64_t delta[ES_MODEL_TL_BUCKETS];
};

/* ---- The table of followed threads. */

static size_t home(uint32_t id) {
    return (id * 2654435761u) & (SLOTS - 1);
}

/* The slot holding `id`, or the empty slot where it would go. */
static size_t find_slot(const struct es_model_thread_table *tb, uint32_t id) {
    size_t j = home(id);
    while (tb->slot[j] && tb->t[tb->slot[j] - 1].id != id)
        j = (j + 1) & (SLOTS - 1);
    return j;
}

static void unslot(struct es_model_thread_table *tb, size_t j) {
    /* Backward-shift deletion keeps every probe chain whole. */
    tb->slot[j] = 0;
    for (size_t k = (j + 1) & (SLOTS - 1); tb->slot[k]; k = (k + 1) & (SLOTS - 1)) {
        size_t h = home(tb->t[tb->slot[k] - 1].id);
        bool between = j < k ? (h > j && h <= k) : (h > j || h <= k);
        if (!between) {
            tb->slot[j] = tb->slot[k];
            tb->slot[k] = 0;
            j = k;
        }
    }
}

static struct es_model_thread_table *table(struct es_model *m) {
    if (m->thr.tb == NULL && !m->oom) {
        struct es_model_thread_table *tb = calloc(1, sizeof *tb);
        if (tb == NULL) {
            m->oom = true;
            return NULL;
        }
        for (uint32_t i = 0; i < ES_MODEL_THREADS_KEPT; i++) {
            tb->free_idx[i] = ES_MODEL_THREADS_KEPT - 1 - i;
            tb->heap_pos[i] = NONE;
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
    while (k > 0 && before(tb, i, tb->heap[(k - 1) / 2])) {
        heap_set(tb, k, tb->heap[(k - 1) / 2]);
        k = (k - 1) / 2;
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
        assert(tb->heap_pos[i] == NONE && tb->heap_n < ES_MODEL_THREADS_KEPT);
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
    tb->heap_pos[i] = NONE;
    if (--tb->heap_n > 0) {
        heap_set(tb, 0, tb->heap[tb->heap_n]);
        sift_down(tb, 0);
    }
    m->thr.evicted++;
    m->thr.evicted_ns += tb->t[i].run_ns;
    if (tb->t[i].created == 0 && tb->t[i].id < m->thr.min_created)
        m->thr.evicted_before++;
    tb->gone[tb->t[i].id % ES_MODEL_THREADS_KEPT] = tb->t[i].id;
    unslot(tb, find_slot(tb, tb->t[i].id));
    tb->free_idx[tb->nfree++] = i;
    m->thr.kept--;
    return true;
}

/* The record of thread `id`, added if new (`created`: its CREATE_THREAD
 * time; 0 when first seen otherwise: it is counted as live from the start
 * until its CREATE_THREAD comes); NULL when it is not followed. */
static struct es_model_thread *thread(struct es_model *m, uint32_t id, uint64_t created) {
    struct es_model_thread_table *tb = table(m);
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
    tb->slot[j] = i + 1;
    m->thr.kept++;
    assert(m->thr.kept <= ES_MODEL_THREADS_KEPT);
    return &tb->t[i];
}

static struct es_model_thread *lookup(struct es_model *m, uint32_t id) {
    struct es_model_thread_table *tb = m->thr.tb;
    if (tb == NULL)
        return NULL;
    size_t j = find_slot(tb, id);
    return tb->slot[j] ? &tb->t[tb->slot[j] - 1] : NULL;
}

/* Thread `th` is in state `s` as of time `t` (an older event than the one
 * that set its state changes nothing). */
static void set_state(struct es_model *m, struct es_model_thread *th, uint64_t t, uint8_t s,
                      uint8_t why) {
    if (th == NULL || t < th->state_t || th->state == ES_THREAD_FINISHED)
        return;
    th->state_t = t;
    th->state = s;
    th->why = why;
    if (s == ES_THREAD_FINISHED) {
        struct es_model_thread_table *tb = m->thr.tb;
        uint32_t i = (uint32_t)(th - tb->t);
        assert(tb->settling_n < ES_MODEL_THREADS_KEPT);
        tb->settling[(tb->settling_head + tb->settling_n++) % ES_MODEL_THREADS_KEPT] = i;
    }
}

/* Threads that began before the stream: seen, never created, and older
 * than every thread created in it (ids count up), so a thread whose
 * events came before its creation is not one of them. */
static uint64_t began_before(const struct es_model *m) {
    uint64_t n = m->thr.evicted_before;
    const struct es_model_thread_table *tb = m->thr.tb;
    for (size_t j = 0; tb != NULL && j < SLOTS; j++) {
        const struct es_model_thread *th = tb->slot[j] ? &tb->t[tb->slot[j] - 1] : NULL;
        if (th != NULL && th->created == 0 &&
            (m->thr.min_created == 0 || th->id < m->thr.min_created))
            n++;
    }
    return n;
}

uint64_t es_model_threads_known(const struct es_model *m) {
    return m->threads_created + began_before(m);
}

size_t es_model_threads(const struct es_model *m) {
    uint64_t began = es_model_threads_known(m);
    return began > m->thr.finished ? (size_t)(began - m->thr.finished) : 0;
}

/* ---- Live threads over time. */

/* The live count changed by `d` at time `t`. */
static void live_change(struct es_model *m, uint64_t t, int d) {
    struct es_model_thread_table *tb = table(m);
    if (tb == NULL || d == 0)
        return;
    while (t / tb->width >= ES_MODEL_TL_BUCKETS) {
        /* Halve: bucket pairs become one bucket twice as wide. */
        unsigned n = (tb->nb + 1) / 2;
        for (unsigned i = 0; i < n; i++)
            tb->delta[i] = tb->delta[2 * i] + (2 * i + 1 < tb->nb ? tb->delta[2 * i + 1] : 0);
        tb->nb = n;
        tb->width *= 2;
    }
    unsigned i = (unsigned)(t / tb->width);
    while (tb->nb <= i)
        tb->delta[tb->nb++] = 0;
    tb->delta[i] += d;
    if (t < tb->first_change || tb->first_change == 0)
        tb->first_change = t ? t : 1;
}

void es_model_threads_live(const struct es_model *m, uint64_t width, unsigned from, unsigned to,
                           long *out) {
    const struct es_model_thread_table *tb = m->thr.tb;
    int64_t sum = (int64_t)began_before(m);
    unsigned j = 0;
    for (unsigned i = from; i < to; i++) {
        uint64_t end = (uint64_t)(i + 1) * width;
        if (tb == NULL || tb->first_change == 0 || end <= tb->first_change) {
            out[i - from] = -1;
            continue;
        }
        /* The changes of the model's buckets that begin before `end`. */
        while (j < tb->nb && (uint64_t)j * tb->width < end)
            sum += tb->delta[j++];
        out[i - from] = sum > 0 ? (long)sum : 0;
    }
}

/* ---- Events. */

/* model_caps.c's handler `h` for the event too (a copy: both read it). */
static void pass_on(struct es_model *m, struct es_model_ev *e, es_model_handler *h) {
    struct es_model_ev caps = *e;
    h(m, &caps);
}

void es_model_on_thread_create(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    if (e->r.bad)
        return;
    m->threads_created++;
    if (m->thr.min_created == 0 || id < m->thr.min_created)
        m->thr.min_created = id;
    live_change(m, e->t, 1);
    struct es_model_thread *th = thread(m, id, e->t ? e->t : 1);
    if (th != NULL && th->created == 0)
        th->created = e->t ? e->t : 1; /* its other events came first */
    if (th != NULL && e->cap != NULL && th->cap == ES_GLOBAL_CAP)
        th->cap = (uint16_t)(e->cap - m->caps);
    set_state(m, th, e->t, ES_THREAD_RUNNABLE, 0);
}

void es_model_on_thread_run(struct es_model *m, struct es_model_ev *e) {
    pass_on(m, e, es_model_on_run_thread);
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    if (e->r.bad)
        return;
    struct es_model_thread *th = thread(m, id, 0);
    if (e->cap != NULL) {
        unsigned c = (unsigned)(e->cap - m->caps);
        struct es_model_thread_table *tb = m->thr.tb;
        if (tb != NULL) {
            tb->run_on[c].id = id;
            tb->run_on[c].since = e->t ? e->t : 1;
        }
        if (th != NULL && e->t >= th->state_t) {
            th->cap = (uint16_t)c;
            th->run_since = e->t ? e->t : 1;
        }
    }
    set_state(m, th, e->t, ES_THREAD_RUNNING, 0);
}

/* A run of `d` ns of thread `th` ended (a finished thread too: its run on
 * another capability may arrive after its end). */
static void run_adds(struct es_model_thread_table *tb, struct es_model_thread *th, uint64_t d) {
    th->run_ns += d;
    uint32_t k = tb->heap_pos[th - tb->t];
    if (k != NONE)
        sift_down(tb, k);
}

/* What a STOP_THREAD status leaves the thread doing. */
static uint8_t stopped_state(uint16_t status) {
    if (status == STOP_FINISHED)
        return ES_THREAD_FINISHED;
    if (status == STOP_FOREIGN)
        return ES_THREAD_FOREIGN;
    if (status > STOP_BLOCKED0)
        return ES_THREAD_BLOCKED;
    return ES_THREAD_RUNNABLE; /* heap or stack overflow, yield: back in the queue */
}

void es_model_on_thread_stop(struct es_model *m, struct es_model_ev *e) {
    pass_on(m, e, es_model_on_stop_thread);
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    uint16_t status = (uint16_t)rd_n(&e->r, 2);
    if (e->r.bad)
        return;
    if (status == STOP_FINISHED) {
        m->thr.finished++;
        live_change(m, e->t, -1);
    }
    struct es_model_thread *th = lookup(m, id);
    struct es_model_thread_table *tb = m->thr.tb;
    if (tb != NULL && e->cap != NULL) {
        unsigned c = (unsigned)(e->cap - m->caps);
        if (tb->run_on[c].since != 0 && tb->run_on[c].id == id) {
            uint64_t since = tb->run_on[c].since;
            uint64_t d = e->t > since ? e->t - since : 0;
            m->thr.run_ns += d;
            if (th != NULL) {
                run_adds(tb, th, d);
                if (th->run_since == since)
                    th->run_since = 0;
            } else {
                m->thr.untracked_ns += d;
            }
            tb->run_on[c].since = 0;
        }
    }
    if (th == NULL && status != STOP_FINISHED)
        th = thread(m, id, 0);
    set_state(m, th, e->t, stopped_state(status), (uint8_t)(status < 256 ? status : 0));
}

/* THREAD_RUNNABLE: woken, back in a run queue. */
void es_model_on_thread_runnable(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    if (!e->r.bad)
        set_state(m, thread(m, id, 0), e->t, ES_THREAD_RUNNABLE, 0);
}

/* MIGRATE_THREAD and THREAD_WAKEUP: (thread, capability) — moved to, or
 * woken for, that capability's run queue. */
void es_model_on_thread_moved(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    uint16_t cap = (uint16_t)rd_n(&e->r, 2);
    if (e->r.bad)
        return;
    struct es_model_thread *th = thread(m, id, 0);
    if (th != NULL && e->t >= th->state_t && th->state != ES_THREAD_FINISHED)
        th->cap = cap;
    set_state(m, th, e->t, ES_THREAD_RUNNABLE, 0);
}

/* THREAD_LABEL: (thread, label bytes), not NUL-terminated. */
void es_model_on_thread_label(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    if (e->r.bad)
        return;
    struct es_model_thread *th = thread(m, id, 0);
    if (th == NULL)
        return;
    rd_str(&e->r, th->label, sizeof th->label);
    clean_text(th->label);
    uint32_t k = m->thr.tb->heap_pos[th - m->thr.tb->t];
    if (k != NONE)
        sift_down(m->thr.tb, k); /* labelled: forgotten after the unlabelled */
}

void es_model_threads_end(struct es_model *m) {
    /* Runs still open at the end ran until the last event. */
    struct es_model_thread_table *tb = m->thr.tb;
    if (tb == NULL)
        return;
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++) {
        if (tb->run_on[c].since == 0)
            continue;
        struct es_model_thread *th = lookup(m, tb->run_on[c].id);
        uint64_t d = m->now > tb->run_on[c].since ? m->now - tb->run_on[c].since : 0;
        m->thr.run_ns += d;
        if (th != NULL) {
            run_adds(tb, th, d);
            th->run_since = 0;
        } else {
            m->thr.untracked_ns += d;
        }
        tb->run_on[c].since = 0;
    }
}

void es_model_threads_free(struct es_model *m) {
    free(m->thr.tb);
    m->thr.tb = NULL;
}

/* ---- Queries. */

uint64_t es_model_thread_run_ns(const struct es_model *m, const struct es_model_thread *th) {
    uint64_t ns = th->run_ns;
    if (th->run_since && m->now > th->run_since)
        ns += m->now - th->run_since;
    return ns;
}

uint64_t es_model_threads_run_ns(const struct es_model *m) {
    uint64_t ns = m->thr.run_ns;
    const struct es_model_thread_table *tb = m->thr.tb;
    for (unsigned c = 0; tb != NULL && c < ES_MODEL_MAX_CAPS; c++)
        if (tb->run_on[c].since && m->now > tb->run_on[c].since)
            ns += m->now - tb->run_on[c].since;
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
    for (size_t j = 0; j < SLOTS; j++)
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

const char *es_model_thread_state(const struct es_model_thread *th) {
    static const char *const blocked[] = {
        [7] = "blocked on MVar",
        [8] = "blocked on black hole",
        [9] = "blocked on read",
        [10] = "blocked on write",
        [11] = "blocked on delay",
        [12] = "blocked on STM",
        [13] = "blocked on process",
        [16] = "blocked in foreign call",
        [17] = "blocked in foreign call",
        [18] = "blocked on throwTo",
        [19] = "migrating",
        [20] = "blocked on MVar (read)",
        [21] = "blocked on I/O completion",
    };
    switch (th->state) {
    case ES_THREAD_RUNNING:
        return "running";
    case ES_THREAD_RUNNABLE:
        return "runnable";
    case ES_THREAD_FOREIGN:
        return "in foreign call";
    case ES_THREAD_FINISHED:
        return "finished";
    default:
        break;
    }
    size_t n = sizeof blocked / sizeof blocked[0];
    return th->why < n && blocked[th->why] ? blocked[th->why] : "blocked";
}
