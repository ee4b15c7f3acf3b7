/* SPDX-License-Identifier: BSD-3-Clause */
#include "share.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An idle event stream gets a comment this often, so that browsers and
 * MHD's inactivity timeout see it alive. */
#define KEEPALIVE_S 3
/* Messages no longer kept but still being sent to slow readers, in bytes
 * at most: past it, such readers are cut (their browser reconnects and
 * gets the latest whole state). */
#define HELD_MAX ((size_t)32 << 20)

/* One message of the event stream, shared by every reader sending it:
 * never copied per connection. Freed when neither kept nor read. */
struct es_webshare_msg {
    char *data;
    size_t len;
    unsigned refs; /* readers sending it (under the share's mu) */
    bool kept;     /* the share still lists it */
};

struct es_webshare {
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* a new message, or closing */
    struct es_webshare_msg *full; /* the latest whole state, as an SSE message */
    size_t full_len;
    uint64_t full_seq;                                      /* its sequence number (0: none yet) */
    struct es_webshare_msg *deltas[ES_WEBSHARE_MAX_DELTAS]; /* seq full_seq + 1 + i */
    size_t ndeltas, deltas_bytes;
    size_t held_bytes; /* of messages no longer kept that readers still send */
    bool lost;         /* a message could not be kept: the next must be whole */
    uint64_t next_seq;
    bool closing;
    /* The recording: the first rec_len bytes of the file are whole blocks
     * (an end marker must follow unless rec_ended). */
    int rec_fd; /* read-only, -1: none */
    uint64_t rec_len;
    bool rec_ended;
    char rec_name[300];
    /* Button presses for the loop (GCTL command bytes). */
    uint8_t cmds[ES_WEBSHARE_COMMANDS];
    unsigned ncmds;
    bool can_control;
    /* The program's Prometheus exposition (GET /metrics). */
    char *metrics;
    size_t metrics_len;
    uv_async_t *commands; /* the loop thread's, woken for each command queued */
};

/* ---- The loop thread. */

size_t es_webshare_take_commands(struct es_webshare *sh, uint8_t out[ES_WEBSHARE_COMMANDS]) {
    pthread_mutex_lock(&sh->mu);
    size_t n = sh->ncmds;
    assert(n <= ES_WEBSHARE_COMMANDS);
    memcpy(out, sh->cmds, n);
    sh->ncmds = 0;
    pthread_mutex_unlock(&sh->mu);
    return n;
}

struct es_webshare *es_webshare_new(uv_async_t *commands) {
    struct es_webshare *sh = calloc(1, sizeof *sh);
    if (sh == NULL)
        return NULL;
    pthread_mutex_init(&sh->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&sh->cv, &ca);
    pthread_condattr_destroy(&ca);
    sh->rec_fd = -1;
    snprintf(sh->rec_name, sizeof sh->rec_name, "eventlog.eventlog");
    sh->commands = commands;
    return sh;
}

bool es_webshare_wants_full(struct es_webshare *sh) {
    pthread_mutex_lock(&sh->mu);
    bool full = sh->full == NULL || sh->lost || sh->ndeltas == ES_WEBSHARE_MAX_DELTAS ||
                sh->deltas_bytes > sh->full_len;
    pthread_mutex_unlock(&sh->mu);
    return full;
}

/* Under mu: the share stops listing `m`; freed unless a reader sends it. */
static void unkeep(struct es_webshare *sh, struct es_webshare_msg *m) {
    if (m == NULL)
        return;
    m->kept = false;
    if (m->refs > 0) {
        sh->held_bytes += m->len;
        return;
    }
    free(m->data);
    free(m);
}

static void free_messages(struct es_webshare *sh) {
    unkeep(sh, sh->full);
    sh->full = NULL;
    for (size_t i = 0; i < sh->ndeltas; i++)
        unkeep(sh, sh->deltas[i]);
    sh->ndeltas = sh->deltas_bytes = 0;
}

void es_webshare_publish(struct es_webshare *sh, char *msg, size_t len, bool full, bool can_control,
                         uint64_t rec_len) {
    struct es_webshare_msg *m = malloc(sizeof *m);
    if (m == NULL) {
        free(msg); /* the tabs miss this one: the next is a whole state */
        pthread_mutex_lock(&sh->mu);
        sh->lost = true;
        pthread_mutex_unlock(&sh->mu);
        return;
    }
    *m = (struct es_webshare_msg){.data = msg, .len = len, .refs = 0, .kept = true};
    pthread_mutex_lock(&sh->mu);
    uint64_t seq = ++sh->next_seq;
    if (full) {
        sh->lost = false;
        free_messages(sh);
        sh->full = m;
        sh->full_len = len;
        sh->full_seq = seq;
    } else {
        assert(sh->ndeltas < ES_WEBSHARE_MAX_DELTAS);
        sh->deltas[sh->ndeltas++] = m;
        sh->deltas_bytes += len;
    }
    sh->can_control = can_control;
    if (!sh->rec_ended)
        sh->rec_len = rec_len;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

void es_webshare_new_recording(struct es_webshare *sh, int fd) {
    pthread_mutex_lock(&sh->mu);
    sh->rec_fd = fd;
    sh->rec_len = 0;
    sh->rec_ended = false;
    pthread_mutex_unlock(&sh->mu);
}

void es_webshare_recording_ended(struct es_webshare *sh, uint64_t len) {
    pthread_mutex_lock(&sh->mu);
    sh->rec_len = len;
    sh->rec_ended = true;
    pthread_mutex_unlock(&sh->mu);
}

void es_webshare_recording_name(struct es_webshare *sh, const char *name) {
    pthread_mutex_lock(&sh->mu);
    snprintf(sh->rec_name, sizeof sh->rec_name, "%s", name);
    pthread_mutex_unlock(&sh->mu);
}

void es_webshare_publish_metrics(struct es_webshare *sh, char *text, size_t len) {
    pthread_mutex_lock(&sh->mu);
    char *old = sh->metrics;
    sh->metrics = text;
    sh->metrics_len = len;
    pthread_mutex_unlock(&sh->mu);
    free(old);
}

void es_webshare_close(struct es_webshare *sh) {
    pthread_mutex_lock(&sh->mu);
    sh->closing = true;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

void es_webshare_free(struct es_webshare *sh) {
    if (sh == NULL)
        return;
    free_messages(sh);
    free(sh->metrics);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
    free(sh);
}

/* ---- The HTTP threads. */

static struct es_webshare_msg keepalive = {
    .data = ": keepalive\n\n", .len = sizeof ": keepalive\n\n" - 1, .refs = 1, .kept = true};

static const struct es_webshare_msg *take(struct es_webshare_msg *m) {
    if (m != &keepalive)
        m->refs++;
    return m;
}

static char *copy_of(const char *p, size_t n) {
    char *c = malloc(n ? n : 1);
    if (c != NULL && n)
        memcpy(c, p, n);
    return c;
}

int es_webshare_metrics(struct es_webshare *sh, char **buf, size_t *len) {
    pthread_mutex_lock(&sh->mu);
    *buf = copy_of(sh->metrics ? sh->metrics : "", sh->metrics_len);
    *len = sh->metrics_len;
    pthread_mutex_unlock(&sh->mu);
    return *buf ? 0 : -1;
}

int es_webshare_next(struct es_webshare *sh, uint64_t *next, const struct es_webshare_msg **out) {
    *out = NULL;
    pthread_mutex_lock(&sh->mu);
    while (*out == NULL) {
        if (sh->closing) {
            pthread_mutex_unlock(&sh->mu);
            return 0;
        }
        if (sh->full != NULL && *next <= sh->full_seq) {
            *out = take(sh->full);
            *next = sh->full_seq + 1;
        } else if (sh->full != NULL && *next < sh->full_seq + 1 + sh->ndeltas) {
            *out = take(sh->deltas[*next - sh->full_seq - 1]);
            ++*next;
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += KEEPALIVE_S;
            if (pthread_cond_timedwait(&sh->cv, &sh->mu, &until) == ETIMEDOUT)
                *out = &keepalive;
        }
    }
    pthread_mutex_unlock(&sh->mu);
    return 1;
}

const char *es_webshare_msg_data(const struct es_webshare_msg *m, size_t *len) {
    *len = m->len;
    return m->data;
}

bool es_webshare_msg_stale(struct es_webshare *sh, const struct es_webshare_msg *m) {
    pthread_mutex_lock(&sh->mu);
    bool stale = !m->kept && sh->held_bytes > HELD_MAX;
    pthread_mutex_unlock(&sh->mu);
    return stale;
}

void es_webshare_release(struct es_webshare *sh, const struct es_webshare_msg *cm) {
    if (cm == NULL || cm == &keepalive)
        return;
    struct es_webshare_msg *m = (struct es_webshare_msg *)cm; /* ours: given out const */
    pthread_mutex_lock(&sh->mu);
    assert(m->refs > 0);
    bool last = --m->refs == 0 && !m->kept;
    if (last)
        sh->held_bytes -= m->len;
    pthread_mutex_unlock(&sh->mu);
    if (last) {
        free(m->data);
        free(m);
    }
}
void es_webshare_download(struct es_webshare *sh, struct es_webshare_download *d) {
    pthread_mutex_lock(&sh->mu);
    d->fd = sh->rec_fd >= 0 ? fcntl(sh->rec_fd, F_DUPFD_CLOEXEC, 0) : -1;
    d->len = sh->rec_len;
    d->marker = !sh->rec_ended;
    snprintf(d->name, sizeof d->name, "%s", sh->rec_name);
    pthread_mutex_unlock(&sh->mu);
}

enum es_webshare_sent es_webshare_command(struct es_webshare *sh, uint8_t cmd) {
    bool queued = false, connected;
    pthread_mutex_lock(&sh->mu);
    connected = sh->can_control;
    if (connected && sh->ncmds < ES_WEBSHARE_COMMANDS) {
        sh->cmds[sh->ncmds++] = cmd;
        queued = true;
    }
    pthread_mutex_unlock(&sh->mu);
    if (!connected)
        return ES_WEBSHARE_NOT_CONNECTED;
    if (!queued)
        return ES_WEBSHARE_BUSY;
    uv_async_send(sh->commands);
    return ES_WEBSHARE_SENT;
}
