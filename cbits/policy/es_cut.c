/* SPDX-License-Identifier: BSD-3-Clause */
/* Ending a client's stream on an event boundary (es_cut.h). */
#include "es_cut.h"

#include "delivery/es_client.h"
#include "delivery/es_notice.h"

#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <linux/sockios.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* How often the ending looks at the clock and at the socket's room. */
#define TICK_MS 20

enum cut_state {
    CUT_CANCELLING, /* the first handle is closing: its write is cancelled */
    CUT_TAIL,       /* the rest of the chunk in flight is being written */
    CUT_END_WAIT,   /* waiting for room for the cut notice and end marker */
    CUT_END,        /* they are being written */
    CUT_DONE        /* the timer and then the handle are closing */
};

struct es_cut {
    uv_timer_t timer;
    uv_write_t wreq;
    enum cut_state state;
    int fd;                      /* the kept socket until the new handle owns it; -1 after */
    bool unix_;                  /* a Unix socket (else TCP) */
    uint64_t began_ms, moved_ms; /* when it began, when the client last read */
    /* Bytes handed to the new handle's finished writes, and the length of
     * the one in flight; what the client has read since the cut is these
     * less what the socket still holds (`read`, the most seen so far). */
    uint64_t written, in_flight;
    int64_t read;
    struct es_chunk *tail; /* the chunk in flight (a reference), from tail_off */
    size_t tail_off;
    struct es_chunk *end; /* cut notice and end marker (a reference), or NULL */
};

/* Where the kernel's part of the write in flight ends: the chunk it ends
 * inside (`*off` bytes of it taken; NULL when it ends between chunks),
 * whether the client has (or will have, with that chunk) the whole header
 * and the end marker, and the end time of the last block it gets. */
struct boundary {
    struct es_chunk *tail;
    size_t off;
    bool header, ended;
    uint64_t time;
};

static void take(struct boundary *b, struct es_chunk *ch, size_t *pos, size_t accepted) {
    if (*pos >= accepted)
        return; /* not begun: it will not be sent */
    if (*pos + ch->len > accepted) {
        b->tail = ch;
        b->off = accepted - *pos;
    }
    b->header |= (ch->flags & ES_CHUNK_HEADER) != 0;
    b->ended |= (ch->flags & ES_CHUNK_END) != 0;
    if (es_is_block(ch->data, ch->len) && es_block_end_time(ch->data) > b->time)
        b->time = es_block_end_time(ch->data);
    *pos += ch->len;
}

static struct boundary find_boundary(struct es_client *c) {
    struct boundary b = {.header = es_client_is(c, ES_CLIENT_HEADER_SENT), .time = c->sent_time};
    if (!es_client_is(c, ES_CLIENT_WRITING)) {
        /* No write in flight: nothing may follow an end marker it was
         * handed, a cut notice least of all. */
        b.ended = es_client_has_end(c);
        return b;
    }
    size_t queued = uv_stream_get_write_queue_size(&c->io.stream);
    assert(queued <= c->write_bytes);
    size_t accepted = c->write_bytes - queued, pos = 0;
    /* The order of the write's buffers (es_client_pump): the extras, then
     * the chunks. */
    for (unsigned i = 0; i < sizeof c->write_extra / sizeof c->write_extra[0]; i++)
        if (c->write_extra[i] != NULL)
            take(&b, c->write_extra[i], &pos, accepted);
    for (struct es_chunk *ch = c->write_first; ch != NULL; ch = es_store_next(c->env->store, ch)) {
        take(&b, ch, &pos, accepted);
        if (ch == c->write_last)
            break;
    }
    return b;
}

/* Whether the socket takes `len` more bytes at once, whole: what it holds
 * unread (or unacknowledged) is well within its send buffer. */
static bool room_for(int fd, size_t len) {
    int outq = 0, sndbuf = 0;
    socklen_t sl = sizeof sndbuf;
    if (ioctl(fd, SIOCOUTQ, &outq) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) != 0 || outq < 0 || sndbuf <= 0)
        return true; /* unknown: try */
    return (size_t)outq + len <= (size_t)sndbuf / 4;
}

static void release(struct es_client *c, struct es_chunk **ch) {
    es_store_release(c->env->store, *ch);
    *ch = NULL;
}

static void on_timer_closed(uv_handle_t *h) {
    es_client_close_reopened(h->data);
}

/* The ending is over: close the timer, then the handle (es_cut_on_closed
 * then lets the client be freed). */
static void finish(struct es_client *c) {
    struct es_cut *k = c->cut;
    if (k->state == CUT_DONE)
        return;
    k->state = CUT_DONE;
    uv_close((uv_handle_t *)&k->timer, on_timer_closed);
}

static void on_end_written(uv_write_t *req, int status) {
    (void)status;
    finish(req->data);
}

/* Start writing `len` bytes at `p` on the new handle. */
static int write_out(struct es_client *c, const uint8_t *p, size_t len, uv_write_cb cb) {
    struct es_cut *k = c->cut;
    uv_buf_t buf = uv_buf_init((char *)p, (unsigned)len);
    k->wreq.data = c;
    k->in_flight = len;
    return uv_write(&k->wreq, &c->io.stream, &buf, 1, cb);
}

/* Whether the client has read anything since the last look: what the new
 * handle handed to the socket less what the socket still holds grew (it
 * starts below zero by what the socket held at the cut). */
static bool reading(struct es_client *c) {
    struct es_cut *k = c->cut;
    uv_os_fd_t fd;
    int outq = 0;
    if (uv_fileno(&c->io.handle, &fd) != 0 || ioctl(fd, SIOCOUTQ, &outq) != 0 || outq < 0)
        return false;
    uint64_t handed = k->written + k->in_flight - uv_stream_get_write_queue_size(&c->io.stream);
    int64_t read = (int64_t)handed - outq;
    if (read <= k->read)
        return false;
    k->read = read;
    return true;
}

/* The cut notice and the end marker, if there is room for them now. */
static void try_end(struct es_client *c) {
    struct es_cut *k = c->cut;
    uv_os_fd_t fd;
    if (k->end == NULL || uv_fileno(&c->io.handle, &fd) != 0) {
        finish(c);
        return;
    }
    k->state = CUT_END_WAIT;
    if (!room_for(fd, k->end->len))
        return; /* the timer looks again */
    k->state = CUT_END;
    if (write_out(c, k->end->data, k->end->len, on_end_written) != 0)
        finish(c);
}

static void on_tail_written(uv_write_t *req, int status) {
    struct es_client *c = req->data;
    c->cut->written += c->cut->in_flight;
    c->cut->in_flight = 0;
    release(c, &c->cut->tail);
    if (status < 0 || c->cut->state == CUT_DONE)
        finish(c); /* the peer went away, or time ran out */
    else
        try_end(c);
}

static void on_tick(uv_timer_t *t) {
    struct es_client *c = t->data;
    struct es_cut *k = c->cut;
    uint64_t now = uv_now(t->loop);
    if (reading(c))
        k->moved_ms = now;
    if (now - k->moved_ms >= es_client_stall_ms(c) || now - k->began_ms >= ES_CUT_FINISH_MS)
        finish(c); /* a write still pending is cancelled by the close */
    else if (k->state == CUT_END_WAIT)
        try_end(c);
}

/* The first handle has closed and its write is cancelled: go on with a
 * new handle on the kept socket. Returns false when that cannot be. */
static bool reopen(struct es_client *c) {
    struct es_cut *k = c->cut;
    uv_loop_t *loop = c->env->loop;
    int r = k->unix_ ? uv_pipe_init(loop, &c->io.pipe, 0) : uv_tcp_init(loop, &c->io.tcp);
    if (r != 0)
        return false;
    c->io.handle.data = c;
    r = k->unix_ ? uv_pipe_open(&c->io.pipe, k->fd) : uv_tcp_open(&c->io.tcp, k->fd);
    uv_timer_init(loop, &k->timer);
    k->timer.data = c;
    if (r != 0) {
        /* The handle does not own the socket: close it here; then close
         * the timer and the handle as at the end. */
        close(k->fd);
        k->fd = -1;
        finish(c);
        return true;
    }
    k->fd = -1;
    uv_timer_start(&k->timer, on_tick, TICK_MS, TICK_MS);
    k->read = INT64_MIN;
    reading(c); /* the start: what the socket holds now */
    if (k->tail == NULL) {
        try_end(c);
        return true;
    }
    k->state = CUT_TAIL;
    if (write_out(c, k->tail->data + k->tail_off, k->tail->len - k->tail_off, on_tail_written) !=
        0) {
        release(c, &k->tail);
        finish(c);
    }
    return true;
}

bool es_cut_on_closed(struct es_client *c) {
    struct es_cut *k = c->cut;
    if (k == NULL)
        return false;
    if (k->state == CUT_CANCELLING && reopen(c))
        return true;
    if (k->fd >= 0)
        close(k->fd);
    release(c, &k->tail);
    release(c, &k->end);
    free(k);
    c->cut = NULL;
    c->closed_hook = NULL;
    return false;
}

/* What the client will never be sent, released now rather than at the
 * close: its memory comes back at once. */
static void release_unsent(struct es_client *c) {
    struct es_store *st = c->env->store;
    if (c->next_chunk)
        es_store_release_range(st, c->next_chunk, es_store_newest(st));
    c->next_chunk = NULL;
    release(c, &c->defs);
    release(c, &c->notice);
    release(c, &c->kept);
}

void es_cut_client(struct es_client *c, const char *why) {
    if (es_client_is(c, ES_CLIENT_CLOSING))
        return;
    struct boundary b = find_boundary(c);
    struct es_cut *k = NULL;
    int fd = es_client_fd(c);
    /* A client that has stopped reading would not take the rest of the
     * chunk either: waiting for it would only keep that chunk's memory. */
    if (!es_client_is(c, ES_CLIENT_FINISHING) && b.header && (b.tail != NULL || !b.ended) &&
        fd >= 0 && !es_client_stalled(c, uv_now(c->env->loop)))
        k = calloc(1, sizeof *k);
    if (k != NULL && (k->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
        free(k);
        k = NULL;
    }
    if (k == NULL) {
        /* Nothing to end on a boundary (it has everything, or no header),
         * no one to take it, or no means to: close at once. */
        es_client_close(c);
        return;
    }
    k->state = CUT_CANCELLING;
    k->unix_ = uv_handle_get_type(&c->io.handle) == UV_NAMED_PIPE;
    k->began_ms = k->moved_ms = uv_now(c->env->loop);
    if (b.tail != NULL) {
        k->tail = es_store_ref(b.tail);
        k->tail_off = b.off;
    }
    if (!b.ended && c->env->header != NULL) {
        k->end = es_notice_cut(c->env->header, b.time, why);
        if (k->end != NULL)
            es_store_adopt(c->env->store, k->end);
    }
    release_unsent(c);
    c->cut = k;
    c->closed_hook = es_cut_on_closed;
    es_client_close(c); /* the write in flight is cancelled; es_cut_on_closed goes on */
}
