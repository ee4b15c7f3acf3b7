#include "webshare.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An idle event stream gets a comment this often, so that browsers and
 * MHD's inactivity timeout see it alive. */
#define KEEPALIVE_S   3
#define COMMAND_QUEUE 16

struct es_webshare {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a new message, or closing */
    char *full;        /* the latest whole state, as an SSE message */
    size_t full_len;
    uint64_t full_seq; /* its sequence number (0: none yet) */
    struct msg {
        char *data;
        size_t len;
    } deltas[ES_WEBSHARE_MAX_DELTAS]; /* seq full_seq + 1 + i */
    size_t ndeltas, deltas_bytes;
    uint64_t next_seq;
    bool closing;
    /* The recording: the first rec_len bytes of the file are whole blocks
     * (an end marker must follow unless rec_ended). */
    int rec_fd; /* read-only, -1: none */
    uint64_t rec_len;
    bool rec_ended;
    char rec_name[300];
    /* Button presses for the loop (GCTL command bytes). */
    uint8_t cmds[COMMAND_QUEUE];
    unsigned ncmds;
    bool can_control;
    /* The program's Prometheus exposition (GET /metrics). */
    char *metrics;
    size_t metrics_len;
    uv_async_t async;
    void (*on_command)(uint8_t cmd, void *ctx);
    void *ctx;
};

/* ---- The loop thread. */

static void on_async(uv_async_t *a) {
    struct es_webshare *sh = a->data;
    uint8_t cmds[COMMAND_QUEUE];
    pthread_mutex_lock(&sh->mu);
    unsigned n = sh->ncmds;
    memcpy(cmds, sh->cmds, n);
    sh->ncmds = 0;
    pthread_mutex_unlock(&sh->mu);
    for (unsigned i = 0; i < n; i++)
        sh->on_command(cmds[i], sh->ctx);
}

struct es_webshare *es_webshare_new(uv_loop_t *loop, void (*on_command)(uint8_t cmd, void *ctx),
                                    void *ctx) {
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
    sh->on_command = on_command;
    sh->ctx = ctx;
    uv_async_init(loop, &sh->async, on_async);
    sh->async.data = sh;
    return sh;
}

bool es_webshare_wants_full(struct es_webshare *sh) {
    pthread_mutex_lock(&sh->mu);
    bool full = sh->full == NULL || sh->ndeltas == ES_WEBSHARE_MAX_DELTAS ||
                sh->deltas_bytes > sh->full_len;
    pthread_mutex_unlock(&sh->mu);
    return full;
}

static void free_messages(struct es_webshare *sh) {
    free(sh->full);
    for (size_t i = 0; i < sh->ndeltas; i++)
        free(sh->deltas[i].data);
    sh->ndeltas = sh->deltas_bytes = 0;
}

void es_webshare_publish(struct es_webshare *sh, char *msg, size_t len, bool full, bool can_control,
                         uint64_t rec_len) {
    pthread_mutex_lock(&sh->mu);
    uint64_t seq = ++sh->next_seq;
    if (full) {
        free_messages(sh);
        sh->full = msg;
        sh->full_len = len;
        sh->full_seq = seq;
    } else {
        sh->deltas[sh->ndeltas++] = (struct msg){msg, len};
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

static void on_closed(uv_handle_t *h) {
    struct es_webshare *sh = h->data;
    free_messages(sh);
    free(sh->metrics);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
    free(sh);
}

void es_webshare_free(struct es_webshare *sh) {
    uv_close((uv_handle_t *)&sh->async, on_closed);
}

/* ---- The HTTP threads. */

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

int es_webshare_next(struct es_webshare *sh, uint64_t *next, char **buf, size_t *len) {
    *buf = NULL;
    pthread_mutex_lock(&sh->mu);
    while (*buf == NULL) {
        if (sh->closing) {
            pthread_mutex_unlock(&sh->mu);
            return 0;
        }
        if (sh->full != NULL && *next <= sh->full_seq) {
            *buf = copy_of(sh->full, sh->full_len);
            *len = sh->full_len;
            *next = sh->full_seq + 1;
        } else if (sh->full != NULL && *next < sh->full_seq + 1 + sh->ndeltas) {
            const struct msg *m = &sh->deltas[*next - sh->full_seq - 1];
            *buf = copy_of(m->data, m->len);
            *len = m->len;
            ++*next;
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += KEEPALIVE_S;
            if (pthread_cond_timedwait(&sh->cv, &sh->mu, &until) == ETIMEDOUT) {
                static const char ping[] = ": keepalive\n\n";
                *buf = copy_of(ping, sizeof ping - 1);
                *len = sizeof ping - 1;
            }
            continue;
        }
    }
    pthread_mutex_unlock(&sh->mu);
    return *buf == NULL ? -1 : 1;
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
    if (connected && sh->ncmds < COMMAND_QUEUE) {
        sh->cmds[sh->ncmds++] = cmd;
        queued = true;
    }
    pthread_mutex_unlock(&sh->mu);
    if (!connected)
        return ES_WEBSHARE_NOT_CONNECTED;
    if (!queued)
        return ES_WEBSHARE_BUSY;
    uv_async_send(&sh->async);
    return ES_WEBSHARE_SENT;
}
