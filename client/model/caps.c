/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "capabilities" (client/model/impl.h): which
 * capabilities exist and how much of the time each runs Haskell code (its
 * runs between RUN_THREAD and STOP_THREAD, which client/model/threads.c
 * passes on, with once-a-second snapshots for shares over recent
 * windows). */
#include "impl.h"
#include "history.h"

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

void es_model_caps_classes_switched(struct es_model *m, uint64_t t, bool runs, bool gcs) {
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++) {
        struct es_model_cap *cp = &m->caps[c];
        if (runs)
            run_ends(m, cp, t);
        if (gcs) {
            cp->gc_since = 0;
            cp->gc_stats = false;
        }
    }
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
        unsigned kept = m->snap_n;
        if (kept > 8)
            kept = 8;
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

void es_model_cap_run(struct es_model_cap *cp, uint64_t t) {
    if (cp)
        cp->running_since = t ? t : 1;
}

void es_model_cap_stop(struct es_model *m, struct es_model_cap *cp, uint64_t t) {
    if (cp)
        run_ends(m, cp, t);
}

void es_model_on_cap_create(struct es_model *m, struct es_model_ev *e) {
    m->rts_started = true; /* a start-up event, as CAPSET_CREATE */
    unsigned c = es_payload_u16(&e->r);
    if (es_payload_ok(&e->r))
        es_model_see_cap(m, c);
}
