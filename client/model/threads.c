/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "threads" (client/model/impl.h): each Haskell
 * thread's label (THREAD_LABEL, from labelThread), the capability it is
 * on, the time it ran (the sum of its RUN_THREAD..STOP_THREAD intervals),
 * its state now (running, runnable, blocked and on what, in a foreign
 * call, finished) and when it was created; and the number of live threads
 * over the whole run. CREATE_THREAD, RUN_THREAD and STOP_THREAD are also
 * caps.c's: their handlers here pass them on (es_model_cap_run, _stop).
 *
 * Memory is bounded: at most ES_MODEL_THREADS_KEPT threads are followed
 * one by one (client/model/thread_table.c decides which make room); the
 * totals count every thread.
 *
 * A capability's events arrive in its own order, but different
 * capabilities' blocks arrive in flush order (on GHC 9.0 whole 2 MiB
 * buffers), so nothing here depends on the order across capabilities:
 * runs are paired per capability, a thread's state is that of its latest
 * event by time, and the live count over time is kept as changes per
 * stretch of time (+1 a thread began, -1 it finished), summed when read. */
#include "impl.h"

#include <stdlib.h>

/* Thread `th` is in state `s` as of time `t` (an older event than the one
 * that set its state changes nothing). */
static void set_state(struct es_model *m, struct es_model_thread *th, uint64_t t, uint8_t s,
                      uint8_t why) {
    if (th == NULL || t < th->state_t || th->state == ES_THREAD_FINISHED)
        return;
    th->state_t = t;
    th->state = s;
    th->why = why;
    if (s == ES_THREAD_FINISHED)
        es_model_thread_ended(m, th);
}

uint64_t es_model_threads_known(const struct es_model *m) {
    return m->threads_created + es_model_threads_before(m);
}

size_t es_model_threads(const struct es_model *m) {
    uint64_t began = es_model_threads_known(m);
    return began > m->thr.finished ? (size_t)(began - m->thr.finished) : 0;
}

/* ---- Live threads over time. */

/* The live count changed by `d` at time `t`. */
static void live_change(struct es_model *m, uint64_t t, int d) {
    struct es_model_thread_table *tb = es_model_thread_table(m);
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
    uint64_t before = es_model_threads_before(m);
    int64_t sum = (int64_t)before;
    /* The count is known from the first change, or, when threads begun
     * before the stream were seen (a start from Haskell, a late joiner),
     * from the stream's first event: they were live all along. */
    bool known = tb != NULL && (tb->first_change != 0 || before > 0);
    uint64_t known_from = tb == NULL ? 0 : tb->first_change;
    if (known && before > 0 && (known_from == 0 || m->first_time < known_from))
        known_from = m->first_time;
    unsigned j = 0;
    for (unsigned i = from; i < to; i++) {
        uint64_t end = (uint64_t)(i + 1) * width;
        if (!known || end <= known_from) {
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

void es_model_on_thread_create(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = es_payload_u32(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    m->threads_created++;
    if (m->thr.min_created == 0 || id < m->thr.min_created)
        m->thr.min_created = id;
    live_change(m, e->t, 1);
    struct es_model_thread *th = es_model_thread_get(m, id, e->t ? e->t : 1);
    if (th != NULL && th->created == 0)
        th->created = e->t ? e->t : 1; /* its other events came first */
    if (th != NULL && e->cap != NULL && th->cap == ES_GLOBAL_CAP)
        th->cap = (uint16_t)(e->cap - m->caps);
    set_state(m, th, e->t, ES_THREAD_RUNNABLE, 0);
}

void es_model_on_thread_run(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = es_payload_u32(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    es_model_cap_run(e->cap, e->t);
    struct es_model_thread *th = es_model_thread_get(m, id, 0);
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
static void ran(struct es_model *m, struct es_model_thread *th, uint64_t d) {
    th->run_ns += d;
    es_model_thread_rekey(m, th);
}

/* What a STOP_THREAD status leaves the thread doing: the model's states
 * after a stop are the kinds of format/es_event_names.h. */
static uint8_t stopped_state(uint16_t status) {
    return (uint8_t)es_event_names_stop_kind(status);
}

void es_model_on_thread_stop(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = es_payload_u32(&e->r);
    uint16_t status = es_payload_u16(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    es_model_cap_stop(m, e->cap, e->t);
    if (status == ES_STOP_FINISHED_STATUS) {
        m->thr.finished++;
        live_change(m, e->t, -1);
    }
    struct es_model_thread *th = (struct es_model_thread *)es_model_thread_find(m, id);
    struct es_model_thread_table *tb = m->thr.tb;
    if (tb != NULL && e->cap != NULL) {
        unsigned c = (unsigned)(e->cap - m->caps);
        if (tb->run_on[c].since != 0 && tb->run_on[c].id == id) {
            uint64_t since = tb->run_on[c].since;
            uint64_t d = e->t > since ? e->t - since : 0;
            m->thr.run_ns += d;
            if (th != NULL) {
                ran(m, th, d);
                if (th->run_since == since)
                    th->run_since = 0;
            } else {
                m->thr.untracked_ns += d;
            }
            tb->run_on[c].since = 0;
        }
    }
    if (th == NULL && status != ES_STOP_FINISHED_STATUS)
        th = es_model_thread_get(m, id, 0);
    set_state(m, th, e->t, stopped_state(status), (uint8_t)(status < 256 ? status : 0));
}

/* THREAD_RUNNABLE: woken, back in a run queue. */
void es_model_on_thread_runnable(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = es_payload_u32(&e->r);
    if (es_payload_ok(&e->r))
        set_state(m, es_model_thread_get(m, id, 0), e->t, ES_THREAD_RUNNABLE, 0);
}

/* MIGRATE_THREAD and THREAD_WAKEUP: (thread, capability) — moved to, or
 * woken for, that capability's run queue. */
void es_model_on_thread_moved(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = es_payload_u32(&e->r);
    uint16_t cap = es_payload_u16(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    struct es_model_thread *th = es_model_thread_get(m, id, 0);
    if (th != NULL && e->t >= th->state_t && th->state != ES_THREAD_FINISHED)
        th->cap = cap;
    set_state(m, th, e->t, ES_THREAD_RUNNABLE, 0);
}

/* THREAD_LABEL: (thread, label bytes), not NUL-terminated. */
void es_model_on_thread_label(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = es_payload_u32(&e->r);
    if (!es_payload_ok(&e->r))
        return;
    struct es_model_thread *th = es_model_thread_get(m, id, 0);
    if (th == NULL)
        return;
    es_payload_text(&e->r, th->label, sizeof th->label);
    clean_text(th->label);
    es_model_thread_rekey(m, th); /* labelled: forgotten after the unlabelled */
}

void es_model_threads_end(struct es_model *m) {
    /* Runs still open at the end ran until the last event. */
    struct es_model_thread_table *tb = m->thr.tb;
    if (tb == NULL)
        return;
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++) {
        if (tb->run_on[c].since == 0)
            continue;
        struct es_model_thread *th =
            (struct es_model_thread *)es_model_thread_find(m, tb->run_on[c].id);
        uint64_t d = m->now > tb->run_on[c].since ? m->now - tb->run_on[c].since : 0;
        m->thr.run_ns += d;
        if (th != NULL) {
            ran(m, th, d);
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

uint64_t es_model_threads_run_ns(const struct es_model *m) {
    uint64_t ns = m->thr.run_ns;
    const struct es_model_thread_table *tb = m->thr.tb;
    for (unsigned c = 0; tb != NULL && c < ES_MODEL_MAX_CAPS; c++)
        if (tb->run_on[c].since && m->now > tb->run_on[c].since)
            ns += m->now - tb->run_on[c].since;
    return ns;
}

const char *es_model_thread_state(const struct es_model_thread *th) {
    switch (th->state) {
    case ES_THREAD_RUNNING:
        return "running";
    case ES_THREAD_RUNNABLE:
        return "runnable";
    case ES_THREAD_FOREIGN:
        return es_event_names_stop_status(ES_STOP_FOREIGN_STATUS)->words;
    case ES_THREAD_FINISHED:
        return es_event_names_stop_status(ES_STOP_FINISHED_STATUS)->words;
    default:
        break;
    }
    /* Blocked: on what, in the words of its STOP_THREAD status. */
    const struct es_stop_status *s = es_event_names_stop_status(th->why);
    return s ? s->words : "blocked";
}
