/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_milestones.h"

#include "base/es_signal.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <assert.h>

#define ES_NS_PER_MS UINT64_C(1000000)

int es_milestones_init(struct es_milestones *m) {
    m->first_client = m->stopped = false;
    int r = uv_mutex_init(&m->lock);
    if (r == 0 && (r = uv_cond_init(&m->cond)) != 0)
        uv_mutex_destroy(&m->lock);
    return r;
}

void es_milestones_destroy(struct es_milestones *m) {
    uv_cond_destroy(&m->cond);
    uv_mutex_destroy(&m->lock);
}

static void reach(struct es_milestones *m, bool *which) {
    uv_mutex_lock(&m->lock);
    *which = true;
    uv_cond_broadcast(&m->cond);
    uv_mutex_unlock(&m->lock);
}

void es_milestones_first_client(struct es_milestones *m) {
    reach(m, &m->first_client);
}

void es_milestones_stopped(struct es_milestones *m) {
    /* Reached once, by the loop thread, its only writer. */
    assert(!m->stopped);
    reach(m, &m->stopped);
}

int es_milestones_wait_stopped(struct es_milestones *m, uint64_t deadline) {
    uv_mutex_lock(&m->lock);
    while (!m->stopped) {
        uint64_t now = uv_hrtime();
        if (now >= deadline ||
            uv_cond_timedwait(&m->cond, &m->lock, deadline - now) == UV_ETIMEDOUT)
            break;
    }
    int r = m->stopped ? 0 : UV_ETIMEDOUT;
    uv_mutex_unlock(&m->lock);
    return r;
}

int es_milestones_wait_client(struct es_milestones *m, unsigned signals) {
    uv_mutex_lock(&m->lock);
    /* A SIGINT ends the wait: the count is looked at every 100 ms, as the
     * handler may not touch the condition variable. */
    while (!m->first_client && !m->stopped && es_signal_count() == signals)
        uv_cond_timedwait(&m->cond, &m->lock, 100 * ES_NS_PER_MS);
    int r = m->first_client ? 0 : m->stopped ? EVENTLOG_SOCKET_ESTOPPED : EVENTLOG_SOCKET_EINTR;
    uv_mutex_unlock(&m->lock);
    return r;
}
