/* The model's family "capabilities and threads" (client/model_impl.h):
 * which capabilities exist and how much of the time each runs Haskell
 * code (its runs between RUN_THREAD and STOP_THREAD, with once-a-second
 * snapshots for shares over recent windows), and the set of live
 * threads. */
#include "model_impl.h"

#include <stdlib.h>
#include <string.h>

/* GHC's STOP_THREAD status for a thread that has finished
 * (rts/include/rts/EventLogFormat.h). */
#define THREAD_FINISHED 5

/* ---- Threads: an open-addressing set of live thread ids. */

static size_t thread_slot(const struct es_model *m, uint32_t id) {
    size_t j = (id * 2654435761u) & (m->threads_cap - 1);
    while (m->threads[j] && m->threads[j] != id)
        j = (j + 1) & (m->threads_cap - 1);
    return j;
}

/* Double the set, as long as it may grow; false when it cannot. */
static bool threads_grow(struct es_model *m) {
    if (m->threads_cap >= 2 * ES_MODEL_MAX_THREADS) {
        m->threads_saturated = true;
        return false;
    }
    size_t ncap = m->threads_cap ? m->threads_cap * 2 : 256;
    uint32_t *nt = calloc(ncap, sizeof *nt);
    if (nt == NULL) {
        m->oom = true;
        return false;
    }
    uint32_t *old = m->threads;
    size_t ocap = m->threads_cap;
    m->threads = nt;
    m->threads_cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i])
            m->threads[thread_slot(m, old[i])] = old[i];
    free(old);
    return true;
}

static void thread_alive(struct es_model *m, uint32_t id) {
    if (id == 0)
        return;
    if ((m->threads_n + 1) * 2 > m->threads_cap && !threads_grow(m))
        return;
    size_t j = thread_slot(m, id);
    if (m->threads[j] == 0) {
        m->threads[j] = id;
        m->threads_n++;
    }
}

static void thread_finished(struct es_model *m, uint32_t id) {
    if (m->threads_cap == 0 || id == 0)
        return;
    size_t j = thread_slot(m, id);
    if (m->threads[j] == 0)
        return;
    /* Backward-shift deletion keeps every probe chain whole. */
    size_t mask = m->threads_cap - 1;
    m->threads[j] = 0;
    m->threads_n--;
    for (size_t k = (j + 1) & mask; m->threads[k]; k = (k + 1) & mask) {
        size_t home = (m->threads[k] * 2654435761u) & mask;
        /* Move the entry at k into the hole at j if its home is not in (j, k]. */
        bool between = j < k ? (home > j && home <= k) : (home > j || home <= k);
        if (!between) {
            m->threads[j] = m->threads[k];
            m->threads[k] = 0;
            j = k;
        }
    }
}

size_t es_model_threads(const struct es_model *m) {
    return m->threads_n;
}

void es_model_caps_free(struct es_model *m) {
    free(m->threads);
}

/* ---- Capabilities. */

void es_model_see_cap(struct es_model *m, unsigned c) {
    if (c < ES_MODEL_MAX_CAPS) {
        m->caps[c].seen = true;
        if (c + 1 > m->ncaps)
            m->ncaps = c + 1;
    }
}

/* Capability `cp`'s run, if one is open, ends at `t`. */
static void run_ends(struct es_model *m, struct es_model_cap *cp, uint64_t t) {
    if (cp->running_since == 0)
        return;
    if (t > cp->running_since)
        cp->busy_ns += t - cp->running_since;
    es_model_tl_interval(m, (unsigned)(cp - m->caps), 0, cp->running_since, t);
    cp->running_since = 0;
}

void es_model_caps_end(struct es_model *m) {
    /* Threads still running at the end ran until the last event. */
    for (unsigned c = 0; c < m->ncaps; c++)
        run_ends(m, &m->caps[c], m->now);
}

static uint64_t cap_busy(const struct es_model *m, unsigned c) {
    const struct es_model_cap *cp = &m->caps[c];
    uint64_t b = cp->busy_ns;
    if (cp->running_since && m->now > cp->running_since)
        b += m->now - cp->running_since;
    return b;
}

double es_model_cap_busy_s(const struct es_model *m, unsigned cap) {
    return cap < m->ncaps && cap < ES_MODEL_MAX_CAPS ? (double)cap_busy(m, cap) / 1e9 : 0;
}

/* A snapshot of every capability's busy time, so a share over the last
 * seconds is a difference. */
void es_model_snapshot(struct es_model *m) {
    uint64_t last = m->snap_n ? m->snap_t[(m->snap_n - 1) % 8] : 0;
    if (m->snap_n && m->now / NS_PER_S <= last / NS_PER_S)
        return;
    unsigned k = m->snap_n % 8;
    m->snap_t[k] = m->now;
    for (unsigned c = 0; c < m->ncaps; c++)
        m->snap_busy[k][c] = cap_busy(m, c);
    for (unsigned c = m->ncaps; c < ES_MODEL_MAX_CAPS; c++)
        m->snap_busy[k][c] = 0;
    m->snap_n++;
}

double es_model_cap_share(const struct es_model *m, unsigned cap, uint64_t window_ns) {
    if (cap >= m->ncaps || cap >= ES_MODEL_MAX_CAPS || m->now <= m->first_time)
        return 0;
    uint64_t t0 = m->first_time, b0 = 0;
    if (window_ns) {
        /* The newest snapshot at least `window_ns` old, or the oldest kept. */
        unsigned kept = m->snap_n < 8 ? m->snap_n : 8;
        for (unsigned i = 0; i < kept; i++) {
            unsigned k = (m->snap_n - 1 - i) % 8;
            t0 = m->snap_t[k];
            b0 = m->snap_busy[k][cap];
            if (m->now - t0 >= window_ns)
                break;
        }
    }
    if (m->now <= t0)
        return 0;
    uint64_t b = cap_busy(m, cap);
    double share = b > b0 ? (double)(b - b0) / (double)(m->now - t0) : 0;
    return share > 1 ? 1 : share;
}

/* ---- Events. */

void es_model_on_create_thread(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    if (!e->r.bad) {
        thread_alive(m, id);
        m->threads_created++;
    }
}

void es_model_on_run_thread(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    if (e->r.bad)
        return;
    thread_alive(m, id);
    if (e->cap)
        e->cap->running_since = e->t ? e->t : 1;
}

void es_model_on_stop_thread(struct es_model *m, struct es_model_ev *e) {
    uint32_t id = (uint32_t)rd_n(&e->r, 4);
    uint16_t status = (uint16_t)rd_n(&e->r, 2);
    if (e->r.bad)
        return;
    if (e->cap)
        run_ends(m, e->cap, e->t);
    if (status == THREAD_FINISHED)
        thread_finished(m, id);
}

void es_model_on_cap_create(struct es_model *m, struct es_model_ev *e) {
    unsigned c = (unsigned)rd_n(&e->r, 2);
    if (!e->r.bad)
        es_model_see_cap(m, c);
}
