/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's threads (client/model/threads.c) on hand-made events: labels,
 * states from STOP_THREAD's statuses, running time paired per capability
 * when the capabilities' blocks arrive out of time order, live threads
 * over time, a thread that began before the stream, and bounded memory
 * with the threads that ran most (and the labelled ones) still listed
 * after a million short threads. */
#include "model/model.h"
#include "model_events.h"
#include "../unit.h"

#include <stdlib.h>
#include <string.h>

#define MS 1000000ull

/* The events that follow are capability `cap`'s (a block as long as can be). */
static void block(struct es_model *m, unsigned cap) {
    struct ev b;
    mk(&b, ES_EVENT_BLOCK_MARKER, 0);
    put(m, u(u(u(&b, 0xffffffff, 4), 0, 8), cap, 2));
}

static void create(struct es_model *m, uint64_t t, uint32_t id) {
    struct ev b;
    put(m, u(mk(&b, ES_EVENT_CREATE_THREAD, t), id, 4));
}
static void run(struct es_model *m, uint64_t t, uint32_t id) {
    struct ev b;
    put(m, u(mk(&b, ES_EVENT_RUN_THREAD, t), id, 4));
}
static void stop(struct es_model *m, uint64_t t, uint32_t id, uint16_t status) {
    struct ev b;
    put(m, u(u(u(mk(&b, ES_EVENT_STOP_THREAD, t), id, 4), status, 2), 0, 4));
}
static void label(struct es_model *m, uint64_t t, uint32_t id, const char *s) {
    struct ev b;
    /* not NUL-terminated, as the RTS posts it */
    put(m, str(u(mk(&b, ES_EVENT_THREAD_LABEL, t), id, 4), s, false));
}

static const struct es_model_thread *find(const struct es_model *m, uint32_t id) {
    static const struct es_model_thread *all[ES_MODEL_THREADS_KEPT];
    size_t n = es_model_threads_top(m, all, ES_MODEL_THREADS_KEPT);
    for (size_t i = 0; i < n; i++)
        if (all[i]->id == id)
            return all[i];
    return NULL;
}

static void check_states_and_times(struct es_model *m) {
    es_model_reset(m);
    /* Thread 1 began before the stream; 2..5 are created on capability 0
     * and labelled. Event sizes do not matter past the block's length. */
    block(m, 0);
    run(m, 1 * MS, 1);
    stop(m, 2 * MS, 1, 3); /* yielded */
    for (uint32_t id = 2; id <= 5; id++)
        create(m, 3 * MS, id);
    label(m, 3 * MS, 2, "light");
    label(m, 3 * MS, 3, "medium");
    label(m, 3 * MS, 4, "heavy");
    label(m, 3 * MS, 5, "waiter");
    run(m, 10 * MS, 2);
    stop(m, 20 * MS, 2, 5); /* light: 10 ms, finished */
    run(m, 20 * MS, 5);
    stop(m, 21 * MS, 5, 7); /* waiter: 1 ms, blocked on an MVar */
    run(m, 30 * MS, 4);
    stop(m, 50 * MS, 4, 3); /* heavy: 20 ms here... */
    /* ...while capability 1's block, with earlier times, arrives after it:
     * medium 15 ms then blocked on STM, heavy 25 ms. */
    block(m, 1);
    run(m, 5 * MS, 3);
    stop(m, 20 * MS, 3, 12);
    run(m, 21 * MS, 4);
    stop(m, 46 * MS, 4, 3);
    /* Back on capability 0: heavy runs on, then blocks on an MVar. */
    block(m, 0);
    run(m, 60 * MS, 4);
    stop(m, 70 * MS, 4, 7);
    run(m, 80 * MS, 1); /* thread 1 running now */

    static const struct {
        uint32_t id;
        const char *label, *state;
        uint64_t ns;
    } want[] = {{1, "", "running", 1 * MS},
                {2, "light", "finished", 10 * MS},
                {3, "medium", "blocked on STM", 15 * MS},
                {4, "heavy", "blocked on MVar", 55 * MS},
                {5, "waiter", "blocked on MVar", 1 * MS}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct es_model_thread *th = find(m, want[i].id);
        ok(th != NULL && strcmp(th->label, want[i].label) == 0 &&
               strcmp(es_model_thread_state(th), want[i].state) == 0 &&
               es_model_thread_run_ns(m, th) == want[i].ns,
           "thread %u: %s, %s, ran %llu ns", want[i].id, th ? th->label : "(missing)",
           th ? es_model_thread_state(th) : "-",
           th ? (unsigned long long)es_model_thread_run_ns(m, th) : 0ull);
    }
    const struct es_model_thread *top[3];
    size_t n = es_model_threads_top(m, top, 3);
    ok(n == 3 && top[0]->id == 4 && top[1]->id == 3 && top[2]->id == 2,
       "the most running time first: heavy, medium, light");
    ok(es_model_threads(m) == 4 && es_model_threads_known(m) == 5 && m->threads_created == 4,
       "4 live of 5 known threads (thread 1 began before the stream), 4 created: %zu, %llu",
       es_model_threads(m), (unsigned long long)es_model_threads_known(m));
    /* Thread 1's run in progress counts up to the latest event, and ends
     * there when the stream does. */
    block(m, 0);
    create(m, 90 * MS, 6);
    ok(es_model_thread_run_ns(m, find(m, 1)) == 11 * MS, "a run in progress counts up to now");
    es_model_end(m);
    ok(es_model_thread_run_ns(m, find(m, 1)) == 11 * MS && find(m, 1)->run_since == 0 &&
           es_model_threads_run_ns(m) == (10 + 15 + 55 + 1 + 11) * MS,
       "the end closes it; all threads ran %llu ns",
       (unsigned long long)es_model_threads_run_ns(m));

    /* Live threads at the end of 10 ms buckets: 1 (thread 1) until the
     * creations at 3 ms, 5 until light finished at 20 ms, then 4, and 5
     * from the creation at 90 ms. */
    long live[10];
    es_model_threads_live(m, 10 * MS, 0, 10, live);
    ok(live[0] == 5 && live[1] == 5 && live[2] == 4 && live[8] == 4 && live[9] == 5,
       "live threads per 10 ms: %ld %ld %ld ... %ld %ld", live[0], live[1], live[2], live[8],
       live[9]);
}

static void check_bounded(struct es_model *m) {
    es_model_reset(m);
    block(m, 0);
    create(m, 1, 1);
    label(m, 1, 1, "main");
    create(m, 1, 2);
    run(m, 1 * MS, 2);
    stop(m, 900 * MS, 2, 5); /* ran most, finished, unlabelled */
    create(m, 1, 3);
    label(m, 1, 3, "tiny");
    run(m, 1 * MS, 3);
    stop(m, 1 * MS + 1, 3, 5); /* ran 1 ns, finished, labelled */
    /* A million threads, each created, run for 1 us and finished, one a
     * ms of stream time, capability 0. */
    uint64_t t = 1000 * MS;
    for (uint32_t id = 10; id < 1000010; id++, t += MS) {
        create(m, t, id);
        run(m, t + 1000, id);
        stop(m, t + 2000, id, 5);
    }
    ok(m->thr.kept <= ES_MODEL_THREADS_KEPT && m->threads_created == 1000003 &&
           m->thr.finished == 1000002 && es_model_threads(m) == 1,
       "a million threads: %u followed, %llu created, %llu finished, %zu live", m->thr.kept,
       (unsigned long long)m->threads_created, (unsigned long long)m->thr.finished,
       es_model_threads(m));
    const struct es_model_thread *a = find(m, 2), *b = find(m, 3), *c = find(m, 1);
    ok(a != NULL && es_model_thread_run_ns(m, a) == 899 * MS && b != NULL && c != NULL,
       "still listed: the thread that ran most, the labelled ones");
    ok(m->thr.evicted > 990000 && es_model_threads_run_ns(m) == 899 * MS + 1 + 1000000ull * 1000,
       "%llu forgotten, every run still counted in all (%llu ns)",
       (unsigned long long)m->thr.evicted, (unsigned long long)es_model_threads_run_ns(m));
}

/* A stream that began after its threads did (a start from Haskell): they
 * run all along, and the first change of the count (a thread created)
 * comes near the end. The count is known from the stream's first event,
 * not only from that change (the page's chart drew the run's last
 * instant only). */
static void check_threads_before_the_stream(struct es_model *m) {
    es_model_reset(m);
    block(m, 0);
    run(m, 5 * MS, 4); /* threads 2, 3 and 4 began before the stream */
    stop(m, 6 * MS, 4, 3);
    run(m, 10 * MS, 2);
    stop(m, 11 * MS, 2, 7);
    run(m, 20 * MS, 3);
    stop(m, 21 * MS, 3, 7);
    create(m, 95 * MS, 6); /* the only change, in the last bucket */
    long live[10];
    es_model_threads_live(m, 10 * MS, 0, 10, live);
    ok(live[0] == 3 && live[4] == 3 && live[8] == 3 && live[9] == 4,
       "threads begun before the stream, live all along: %ld %ld %ld %ld", live[0], live[4],
       live[8], live[9]);
}

/* The events that follow are capability `cap`'s, in a block begun at `t`. */
static void block_at(struct es_model *m, unsigned cap, uint64_t t) {
    struct ev b;
    mk(&b, ES_EVENT_BLOCK_MARKER, t);
    put(m, u(u(u(&b, 0xffffffff, 4), t + MS, 8), cap, 2));
}

/* A client that joined a running program counts from the point its stream
 * holds every capability's events: the latest start of a capability's
 * first block. At a GHC 9.0 program's exit, an idle capability's buffer
 * begun at the program's start comes beside a busy one's begun after the
 * join: the counts are not "since start". */
static void check_counted_since_the_join(struct es_model *m) {
    es_model_reset(m);
    block_at(m, 0, 3000 * MS); /* the busy capability, after the join */
    run(m, 3001 * MS, 4);      /* thread 4 began before the stream */
    stop(m, 3002 * MS, 4, 3);
    block_at(m, 1, 10 * MS); /* the idle one, from the program's start */
    run(m, 11 * MS, 5);
    stop(m, 12 * MS, 5, 3);
    char words[64];
    es_model_counted_since(m, words, sizeof words);
    ok(es_model_counted_from(m) == 3000 * MS && strcmp(words, "since 3.0 s") == 0,
       "counted from the busy capability's first block: %s", words);
    block_at(m, 1, 4000 * MS); /* a later block of a capability moves nothing */
    ok(es_model_counted_from(m) == 3000 * MS, "still from 3.0 s after a later block");

    es_model_reset(m);
    block_at(m, 0, 20 * MS); /* a start from Haskell: every buffer from the start */
    run(m, 21 * MS, 4);
    block_at(m, 1, 30 * MS);
    es_model_counted_since(m, words, sizeof words);
    ok(strcmp(words, "since start") == 0, "blocks begun in the first tenth of a second: %s",
       words);
}

/* Each STOP_THREAD status as the views name the state it leaves a thread
 * in: GHC's statuses (rts/include/rts/EventLogFormat.h and Constants.h),
 * `table`'s code for each in the comment. 4 (ThreadBlocked, which `table`
 * writes "blocked") leaves it blocked, as do numbers GHC does not define
 * above 6; 0 and the overflows and yields leave it runnable. */
static void check_every_status(struct es_model *m) {
    static const struct {
        uint16_t status;
        const char *state;
    } cases[] = {
        {0, "runnable"},
        {1, "runnable"},                   /* heap_overflow */
        {2, "runnable"},                   /* stack_overflow */
        {3, "runnable"},                   /* yielding */
        {4, "blocked"},                    /* blocked */
        {5, "finished"},                   /* finished */
        {6, "in foreign call"},            /* foreign_call */
        {7, "blocked on MVar"},            /* blocked_on_mvar */
        {8, "blocked on black hole"},      /* blocked_on_black_hole */
        {9, "blocked on read"},            /* blocked_on_read */
        {10, "blocked on write"},          /* blocked_on_write */
        {11, "blocked on delay"},          /* blocked_on_delay */
        {12, "blocked on STM"},            /* blocked_on_stm */
        {13, "blocked on process"},        /* blocked_on_do_proc */
        {14, "blocked"},                   /* none */
        {15, "blocked"},                   /* none */
        {16, "blocked in foreign call"},   /* blocked_on_ccall */
        {17, "blocked in foreign call"},   /* blocked_on_ccall_interruptible */
        {18, "blocked on throwTo"},        /* blocked_on_msg_throw_to */
        {19, "migrating"},                 /* migrating */
        {20, "blocked on MVar (read)"},    /* blocked_on_mvar_read */
        {21, "blocked on I/O completion"}, /* blocked_on_io_completion */
        {22, "blocked"},
        {255, "blocked"},
        {256, "blocked"},
        {65535, "blocked"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        es_model_reset(m);
        block(m, 0);
        create(m, 1 * MS, 9);
        run(m, 2 * MS, 9);
        stop(m, 3 * MS, 9, cases[i].status);
        const struct es_model_thread *th = find(m, 9);
        const char *got = th ? es_model_thread_state(th) : "(not followed)";
        ok(strcmp(got, cases[i].state) == 0, "a stop with status %u leaves the thread %s (%s)",
           cases[i].status, cases[i].state, got);
    }
}

/* `check` on a model of its own. */
static void with_model(void (*check)(struct es_model *m)) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    check(m);
    es_model_destroy(m);
    free(m);
}

UNIT_CASE(model_threads_states_and_times) {
    with_model(check_states_and_times);
}

UNIT_CASE(model_threads_bounded) {
    with_model(check_bounded);
}

UNIT_CASE(model_threads_before_the_stream) {
    with_model(check_threads_before_the_stream);
}

UNIT_CASE(model_threads_counted_since_the_join) {
    with_model(check_counted_since_the_join);
}

UNIT_CASE(model_threads_every_status) {
    with_model(check_every_status);
}
