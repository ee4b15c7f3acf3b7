/* SPDX-License-Identifier: BSD-3-Clause */
/* One connected client (es_client.h): its writes, its reads and control
 * frames, its progress, and the one function that changes its state. */
#include "es_client.h"

#include "es_notice.h"
#include "es_pool.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <assert.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* Bits set once and never cleared; bits that never begin on a closing
 * client; bits set only when clear. */
#define ONCE                                                                                       \
    (ES_CLIENT_STARTED | ES_CLIENT_HEADER_SENT | ES_CLIENT_EVER_READ | ES_CLIENT_READ_EOF |        \
     ES_CLIENT_COST_NOTICES | ES_CLIENT_LOSSLESS_OVER | ES_CLIENT_FINISHING | ES_CLIENT_CLOSING)
#define NOT_WHEN_CLOSING                                                                           \
    (ES_CLIENT_STARTED | ES_CLIENT_WRITING | ES_CLIENT_FINISHING | ES_CLIENT_READ_PAUSED |         \
     ES_CLIENT_COST_NOTICES | ES_CLIENT_LOSSLESS | ES_CLIENT_HELD)
#define FRESH                                                                                      \
    (ES_CLIENT_STARTED | ES_CLIENT_WRITING | ES_CLIENT_FINISHING | ES_CLIENT_CLOSING |             \
     ES_CLIENT_LOSSLESS | ES_CLIENT_HELD)

void es_client_set_flags(struct es_client *c, unsigned f, bool on) {
    unsigned was = c->flags;
    unsigned now = on ? was | f : was & ~f;
    (void)now;
    assert(on || (f & ONCE) == 0);
    assert(!on || !(was & ES_CLIENT_CLOSING) || (f & NOT_WHEN_CLOSING) == 0);
    assert(!on || (was & f & FRESH) == 0);
    assert(on || (f & (ES_CLIENT_WRITING | ES_CLIENT_LOSSLESS | ES_CLIENT_HELD) & ~was) == 0);
    assert(!((now & ES_CLIENT_LOSSLESS) && (now & ES_CLIENT_LOSSLESS_OVER)));
    assert(!((now & ES_CLIENT_WRITING) && (now & ES_CLIENT_FINISHING)));
    assert(!((now & ES_CLIENT_READ_PAUSED) && (now & ES_CLIENT_READ_EOF)));
    assert(!(now & ES_CLIENT_WRITE_HEADER) ||
           ((now & ES_CLIENT_WRITING) && !(now & ES_CLIENT_HEADER_SENT)));
    /* A hold begins at the start only, before anything was written. */
    assert(!on || !(f & ES_CLIENT_HELD) ||
           ((was & ES_CLIENT_STARTED) &&
            !(was & (ES_CLIENT_WRITING | ES_CLIENT_HEADER_SENT | ES_CLIENT_EVER_READ))));
    c->flags = now;
}

static void on_client_closed(uv_handle_t *h) {
    struct es_client *c = h->data;
    struct es_store *st = c->env->store;
    /* Writes still pending ended (UV_ECANCELED) before this callback and
     * released what they held. */
    assert(es_client_is(c, ES_CLIENT_CLOSING) && !es_client_is(c, ES_CLIENT_WRITING));
    assert(c->write_first == NULL);
    if (c->closed_hook != NULL && c->closed_hook(c))
        return; /* its stream is being ended on a new handle (es_cut.h) */
    if (c->next_chunk)
        es_store_release_range(st, c->next_chunk, es_store_newest(st));
    es_store_release(st, c->defs);
    es_store_release(st, c->notice);
    es_store_release(st, c->kept);
    c->next_chunk = c->defs = c->notice = c->kept = NULL;
    free(c->owed);
    c->env->on_closed(c, c->env->ctx);
    free(c);
}

void es_client_close(struct es_client *c) {
    if (es_client_is(c, ES_CLIENT_CLOSING))
        return;
    es_client_set_flags(c, ES_CLIENT_CLOSING, true);
    /* Pending writes complete with UV_ECANCELED before the close callback,
     * so their references are released before the client is freed. */
    uv_close(&c->io.handle, on_client_closed);
}

void es_client_close_reopened(struct es_client *c) {
    assert(es_client_is(c, ES_CLIENT_CLOSING) && c->closed_hook != NULL);
    uv_close(&c->io.handle, on_client_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status) {
    (void)status;
    es_client_close(req->data);
}

/* Everything the client will ever get has been handed to the socket. */
static bool caught_up(const struct es_client *c) {
    const struct es_store *st = c->env->store;
    return !es_client_is(c, ES_CLIENT_WRITING) &&
           (es_client_is(c, ES_CLIENT_HEADER_SENT) || es_store_header(st) == NULL) &&
           c->defs == NULL && c->notice == NULL && c->kept == NULL && c->gap_chunks == 0 &&
           c->next_chunk == NULL;
}

uint64_t es_client_droppable(const struct es_client *c) {
    if (c->next_chunk == NULL)
        return 0;
    uint64_t from = es_chunk_start(c->next_chunk);
    if (from < c->joined_at)
        from = c->joined_at; /* a first client's backlog is not held against it */
    uint64_t end = es_store_end_offset(c->env->store);
    return end > from ? end - from : 0;
}

void es_client_on_append(struct es_client *c, struct es_chunk *chunk) {
    if (c->next_chunk == NULL)
        c->next_chunk = chunk;
}

static void on_write(uv_write_t *req, int status) {
    struct es_client *c = req->data;
    struct es_store *st = c->env->store;
    bool with_header = es_client_is(c, ES_CLIENT_WRITE_HEADER);
    es_client_set_flags(c, ES_CLIENT_WRITING | ES_CLIENT_WRITE_HEADER, false);
    for (unsigned i = 0; i < sizeof c->write_extra / sizeof c->write_extra[0]; i++) {
        es_store_release(st, c->write_extra[i]);
        c->write_extra[i] = NULL;
    }
    if (c->write_first)
        es_store_release_range(st, c->write_first, c->write_last);
    c->write_first = c->write_last = NULL;
    c->env->on_released(c->env->ctx);
    if (status < 0) {
        es_client_close(c); /* the peer went away (EPIPE, ECONNRESET) or we closed it */
        return;
    }
    if (with_header)
        es_client_set_flags(c, ES_CLIENT_HEADER_SENT, true);
    atomic_fetch_add(&c->env->counters->bytes_sent, c->write_bytes);
    c->bytes_done += c->write_bytes;
    es_client_pump(c);
}

/* The drop notice for what this client skipped since its last one. */
static struct es_chunk *drop_notice(struct es_client *c) {
    return es_notice_drop(c->env->header, c->gap_chunks, c->gap_bytes, c->gap_time);
}

/* The cost notice for a client that asked, when its second is over: what
 * streaming cost the program since the client's previous notice. It is
 * stamped with the end of the last block the client was sent or skipped
 * (or the start of its next one), so that its time fits where it sits in
 * the stream. */
static struct es_chunk *cost_notice(struct es_client *c) {
    uint64_t now = uv_now(c->env->loop);
    if (!es_client_is(c, ES_CLIENT_COST_NOTICES) || c->next_chunk == NULL ||
        now - c->cost_ms < ES_COST_NOTICE_MS)
        return NULL;
    struct es_cost cur, d;
    c->env->read_cost(&cur, c->env->ctx);
    d.writer_ns = cur.writer_ns - c->cost_seen.writer_ns;
    d.walker_ns = cur.walker_ns - c->cost_seen.walker_ns;
    d.loop_ns = cur.loop_ns - c->cost_seen.loop_ns;
    d.bytes_sent = cur.bytes_sent - c->cost_seen.bytes_sent;
    uint64_t period = now - c->cost_ms;
    c->cost_seen = cur;
    c->cost_ms = now;
    const struct es_chunk *next = c->next_chunk;
    /* A drop notice in the same write is stamped with the end of the
     * skipped chunks, which comes after what the client was sent. */
    uint64_t time = c->sent_time > c->gap_time ? c->sent_time : c->gap_time;
    if (time == 0 && es_is_block(next->data, next->len))
        time = es_block_time(next->data);
    return es_notice_cost(c->env->header, time, &d, period);
}

/* The header alone, for a held client. */
static void write_header(struct es_client *c) {
    struct es_chunk *h = es_store_ref(es_store_header(c->env->store));
    c->write_extra[0] = h;
    c->write_first = c->write_last = NULL;
    es_client_set_flags(c, ES_CLIENT_WRITING | ES_CLIENT_WRITE_HEADER, true);
    c->write_bytes = h->len;
    c->wreq.data = c;
    uv_buf_t buf = uv_buf_init((char *)h->data, (unsigned)h->len);
    int r = uv_write(&c->wreq, &c->io.stream, &buf, 1, on_write);
    if (r != 0)
        on_write(&c->wreq, r); /* releases what the write held, closes */
}

/* What goes before the chunks in the next write, into first[0..6): the
 * header, the definitions, the client's own notice, the notices its skips
 * kept, a drop notice, a cost notice (the references move to the write);
 * returns how many. */
static unsigned take_extras(struct es_client *c, bool with_header, struct es_chunk *first[6]) {
    struct es_store *st = c->env->store;
    unsigned extra = 0;
    if (with_header)
        first[extra++] = es_store_ref(es_store_header(st));
    if (c->defs) {
        first[extra++] = c->defs; /* the reference moves to the write */
        c->defs = NULL;
    }
    if (c->notice) {
        first[extra++] = c->notice; /* likewise */
        c->notice = NULL;
    }
    if (c->kept) {
        first[extra++] = c->kept; /* likewise */
        c->kept = NULL;
    }
    if (c->gap_chunks > 0) {
        /* Out of memory for it, the gap waits for the next write. */
        struct es_chunk *notice = drop_notice(c);
        if (notice) {
            es_store_adopt(st, notice);
            first[extra++] = notice;
            c->gap_chunks = c->gap_bytes = 0;
        }
    }
    struct es_chunk *cost = cost_notice(c);
    if (cost) {
        es_store_adopt(st, cost);
        first[extra++] = cost;
    }
    assert(extra <= sizeof c->write_extra / sizeof c->write_extra[0]);
    return extra;
}

void es_client_pump(struct es_client *c) {
    struct es_store *st = c->env->store;
    /* Nothing is written before the start (es_client_start pumps). */
    if (!(c->flags & ES_CLIENT_STARTED) ||
        (c->flags & (ES_CLIENT_WRITING | ES_CLIENT_CLOSING | ES_CLIENT_FINISHING)))
        return;
    /* No write in flight: none holds a chunk (on_write released them). */
    assert(c->write_first == NULL && c->write_last == NULL && c->write_extra[0] == NULL);
    if (*c->env->stopping && caught_up(c)) {
        es_client_set_flags(c, ES_CLIENT_FINISHING, true);
        c->sreq.data = c;
        if (uv_shutdown(&c->sreq, &c->io.stream, on_shutdown) != 0)
            es_client_close(c);
        return;
    }
    /* No header yet: the RTS has not started. Data never precedes it. */
    bool with_header = !es_client_is(c, ES_CLIENT_HEADER_SENT);
    if (with_header && es_store_header(st) == NULL)
        return;
    /* A held client gets its header only, until it may ask for the window. */
    if (es_client_is(c, ES_CLIENT_HELD) && !*c->env->stopping) {
        if (with_header)
            write_header(c);
        return;
    }

    uv_buf_t bufs[ES_CLIENT_MAX_BUFS];
    unsigned n = 0;
    size_t bytes = 0;
    struct es_chunk *first[6];
    unsigned extra = take_extras(c, with_header, first);
    for (unsigned i = 0; i < extra; i++) {
        c->write_extra[i] = first[i];
        bufs[n++] = uv_buf_init((char *)first[i]->data, (unsigned)first[i]->len);
        bytes += first[i]->len;
    }
    c->write_first = c->write_last = NULL;
    for (struct es_chunk *ch = c->next_chunk;
         ch != NULL && n < ES_CLIENT_MAX_BUFS && (bytes < ES_CLIENT_MAX_WRITE || n == extra);
         ch = es_store_next(st, ch)) {
        bufs[n++] = uv_buf_init((char *)ch->data, (unsigned)ch->len);
        bytes += ch->len;
        if (c->write_first == NULL)
            c->write_first = ch;
        c->write_last = ch;
        if (es_client_is(c, ES_CLIENT_COST_NOTICES) && es_is_block(ch->data, ch->len) &&
            es_block_end_time(ch->data) > c->sent_time)
            c->sent_time = es_block_end_time(ch->data);
    }
    if (n == 0)
        return;
    if (c->write_last)
        c->next_chunk = es_store_next(st, c->write_last);
    es_client_set_flags(c, ES_CLIENT_WRITING | (with_header ? ES_CLIENT_WRITE_HEADER : 0), true);
    c->write_bytes = bytes;
    c->wreq.data = c;
    int r = uv_write(&c->wreq, &c->io.stream, bufs, n, on_write);
    if (r != 0)
        on_write(&c->wreq, r); /* releases what the write held, closes */
}

/* Keep for the client a copy of the notice `x` its skip passes over,
 * after those kept before; false when that would keep more than
 * ES_CLIENT_KEPT_MAX bytes or memory ran out (it is skipped then). */
static bool keep_notice(struct es_client *c, const struct es_chunk *x) {
    struct es_store *st = c->env->store;
    size_t had = c->kept != NULL ? c->kept->len : 0;
    if (had + x->len > ES_CLIENT_KEPT_MAX)
        return false;
    struct es_chunk *k = es_pool_chunk_new(NULL, had + x->len);
    if (k == NULL)
        return false;
    if (had > 0)
        memcpy(k->data, c->kept->data, had);
    memcpy(k->data + had, x->data, x->len);
    k->flags = ES_CHUNK_NOTICE;
    es_store_adopt(st, k);
    es_store_release(st, c->kept);
    c->kept = k;
    return true;
}

struct es_skipped es_client_drop(struct es_client *c, uint64_t target) {
    struct es_skipped k = {0, 0, 0};
    while (c->next_chunk != NULL && es_client_droppable(c) > target &&
           !(c->next_chunk->flags & ES_CHUNK_END)) {
        struct es_chunk *x = c->next_chunk;
        c->next_chunk = es_store_next(c->env->store, x);
        if ((x->flags & ES_CHUNK_NOTICE) && keep_notice(c, x)) {
            es_store_release(c->env->store, x);
            continue;
        }
        k.chunks++;
        k.bytes += x->len;
        /* The gap ends where the skipped block ended. */
        if (es_is_block(x->data, x->len))
            c->gap_time = es_block_end_time(x->data);
        if (x->refs == 1 && x->cap >= ES_POOL_MIN)
            k.reusable++;
        es_store_release(c->env->store, x); /* freed unless another client needs it */
    }
    c->gap_chunks += k.chunks;
    c->gap_bytes += k.bytes;
    return k;
}

/* Bytes still in the socket that the peer has not read (for a Unix socket
 * exactly that; for TCP, not yet acknowledged). 0 where unknown. */
static size_t socket_unread(struct es_client *c) {
#ifdef SIOCOUTQ
    uv_os_fd_t fd;
    int outq = 0;
    if (uv_fileno(&c->io.handle, &fd) == 0 && ioctl(fd, SIOCOUTQ, &outq) == 0 && outq > 0)
        return (size_t)outq;
#endif
    (void)c;
    return 0;
}

void es_client_note_progress(struct es_client *c, uint64_t now_ms) {
    /* What the kernel accepted (finished writes, and the written part of the
     * one in flight) minus what is still unread in the socket: the bytes the
     * client has consumed, which only grows while it reads, however slowly. */
    bool writing = es_client_is(c, ES_CLIENT_WRITING);
    size_t queued = writing ? uv_stream_get_write_queue_size(&c->io.stream) : 0;
    uint64_t accepted = c->bytes_done + (writing ? c->write_bytes - queued : 0);
    size_t unread = socket_unread(c);
    uint64_t consumed = accepted > unread ? accepted - unread : 0;
    if (consumed > c->consumed_seen) {
        c->consumed_seen = consumed;
        es_client_set_flags(c, ES_CLIENT_EVER_READ, true);
        c->moved_ms = now_ms;
    } else if (queued == 0 && unread == 0) {
        c->moved_ms = now_ms; /* idle: nothing waits for it */
    }
}

unsigned es_client_stall_ms(const struct es_client *c) {
    return es_client_is(c, ES_CLIENT_EVER_READ) ? c->env->linger_ms / 2 : ES_EXIT_NEVER_READ_MS;
}

bool es_client_stalled(struct es_client *c, uint64_t now_ms) {
    es_client_note_progress(c, now_ms);
    return now_ms - c->moved_ms >= es_client_stall_ms(c);
}

bool es_client_stuck(const struct es_client *c, uint64_t now_ms, uint64_t *since,
                     uint64_t *unique) {
    if ((c->flags & (ES_CLIENT_CLOSING | ES_CLIENT_LOSSLESS)) ||
        !es_client_is(c, ES_CLIENT_WRITING) || now_ms - c->moved_ms < es_client_stall_ms(c))
        return false;
    *since = c->write_first ? es_chunk_start(c->write_first) : es_store_end_offset(c->env->store);
    *unique = 0;
    for (const struct es_chunk *ch = c->write_first; ch != NULL;
         ch = es_store_next(c->env->store, ch)) {
        if (ch->refs == 1)
            *unique += ch->len;
        if (ch == c->write_last)
            break;
    }
    return true;
}

uint64_t es_client_unsent(const struct es_client *c) {
    const struct es_chunk *from =
        es_client_is(c, ES_CLIENT_WRITING) && c->write_first ? c->write_first : c->next_chunk;
    uint64_t end = es_store_end_offset(c->env->store);
    return from != NULL && end > es_chunk_start(from) ? end - es_chunk_start(from) : 0;
}

void es_client_want_cost_notices(struct es_client *c) {
    if (es_client_is_any(c, ES_CLIENT_COST_NOTICES | ES_CLIENT_CLOSING))
        return;
    /* The first notice covers the second from now on. */
    es_client_set_flags(c, ES_CLIENT_COST_NOTICES, true);
    c->cost_ms = uv_now(c->env->loop);
    c->env->read_cost(&c->cost_seen, c->env->ctx);
}

/* Whether the kernel says the peer is gone: it closed a Unix socket (or
 * shut down both its sides), or a TCP peer answered with a reset. */
static bool peer_gone(const struct es_client *c) {
    struct pollfd p = {.fd = es_client_fd(c), .events = 0};
    return p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* Send a TCP client with nothing else to send an empty block: a peer
 * that is gone answers it with a reset. Returns whether one was sent. */
static bool probe(struct es_client *c, uint64_t now_ms, uint64_t gap_ms) {
    if (c->io.handle.type != UV_TCP || !caught_up(c) || *c->env->stopping ||
        !es_client_is(c, ES_CLIENT_HEADER_SENT) || es_client_is(c, ES_CLIENT_FINISHING) ||
        (c->probed_ms != 0 && now_ms - c->probed_ms < gap_ms))
        return false;
    /* Nothing may follow the stream's end marker. */
    const struct es_store *st = c->env->store;
    struct es_chunk *b = es_store_ended(st) ? NULL : es_notice_empty(es_store_last_time(st));
    if (b == NULL)
        return false;
    c->probed_ms = now_ms;
    es_client_notice(c, b);
    /* libuv writes at once when nothing else is queued, so a loopback
     * peer's reset has come back before the write call returns. */
    es_client_pump(c);
    return true;
}

bool es_client_check_peer(struct es_client *c, uint64_t now_ms, uint64_t probe_gap_ms) {
    if (!es_client_is(c, ES_CLIENT_READ_EOF) || es_client_is(c, ES_CLIENT_CLOSING))
        return false;
    if (peer_gone(c) ||
        (probe(c, now_ms, probe_gap_ms) && !es_client_is(c, ES_CLIENT_CLOSING) && peer_gone(c))) {
        es_client_close(c);
        return true;
    }
    return es_client_is(c, ES_CLIENT_CLOSING); /* the probe's write failed */
}

static void on_discarded(uv_handle_t *h) {
    free(h->data);
}

struct es_client *es_client_new(const struct es_client_env *env, int fd, bool is_unix, int *err) {
    struct es_client *c = calloc(1, sizeof *c);
    if (c == NULL) {
        *err = UV_ENOMEM;
        return NULL;
    }
    int r = is_unix ? uv_pipe_init(env->loop, &c->io.pipe, 0) : uv_tcp_init(env->loop, &c->io.tcp);
    if (r != 0) {
        free(c);
        *err = r;
        return NULL;
    }
    c->env = env;
    c->io.handle.data = c;
    if (!is_unix)
        uv_tcp_nodelay(&c->io.tcp, 1); /* applied when the socket is opened */
    r = is_unix ? uv_pipe_open(&c->io.pipe, fd) : uv_tcp_open(&c->io.tcp, fd);
    if (r != 0) {
        uv_close(&c->io.handle, on_discarded);
        *err = r;
        return NULL;
    }
    return c;
}

int es_client_fd(const struct es_client *c) {
    uv_os_fd_t fd;
    return uv_fileno(&c->io.handle, &fd) == 0 ? fd : -1;
}

bool es_client_has_end(const struct es_client *c) {
    return es_store_ended(c->env->store) && c->next_chunk == NULL &&
           es_client_is_any(c, ES_CLIENT_HEADER_SENT | ES_CLIENT_WRITING);
}

void es_client_notice(struct es_client *c, struct es_chunk *n) {
    assert(n != NULL);
    struct es_store *st = c->env->store;
    es_store_adopt(st, n);
    /* Nothing may follow the stream's end marker: a client already handed
     * it gets no more notices; one still on its way is written before it
     * (es_client_pump writes the notice ahead of the chunks). */
    if (es_client_has_end(c)) {
        es_store_release(st, n);
        return;
    }
    es_store_release(st, c->notice);
    c->notice = n;
}

bool es_client_owe(struct es_client *c, const char *text) {
    size_t n = strlen(text) + 1;
    if (c->owed_len + n > ES_CLIENT_OWED_MAX)
        return false;
    char *more = realloc(c->owed, c->owed_len + n);
    if (more == NULL)
        return false;
    memcpy(more + c->owed_len, text, n);
    c->owed = more;
    c->owed_len += n;
    return true;
}

char *es_client_take_owed(struct es_client *c, size_t *len) {
    char *owed = c->owed;
    *len = c->owed_len;
    c->owed = NULL;
    c->owed_len = 0;
    return owed;
}

void es_client_join(struct es_client *c, uint64_t id, struct es_chunk *first, uint64_t joined_at,
                    struct es_chunk *defs) {
    assert(id != 0);
    /* Joined once, before anything began. */
    assert(c->id == 0 && c->next_chunk == NULL && c->defs == NULL);
    assert((c->flags & (ES_CLIENT_STARTED | ES_CLIENT_CLOSING)) == 0);
    assert(first == NULL || es_chunk_start(first) <= joined_at);
    c->id = id;
    c->next_chunk = first;
    c->joined_at = joined_at;
    c->defs = defs;
}

void es_client_place(struct es_client *c, struct es_chunk *first, struct es_chunk *defs) {
    assert(es_client_is(c, ES_CLIENT_HELD) && !es_client_is_any(c, ES_CLIENT_CLOSING));
    assert(c->write_first == NULL); /* a held client's writes hold no chunk */
    struct es_store *st = c->env->store;
    struct es_chunk *old = c->next_chunk;
    uint64_t end = es_store_end_offset(st);
    uint64_t to = old ? es_chunk_start(old) : end;
    if (first != NULL && es_chunk_start(first) < to) {
        /* Earlier: the chunks from there to where it was become its own. */
        for (struct es_chunk *ch = first; ch != old; ch = es_store_next(st, ch))
            es_store_ref(ch);
        c->next_chunk = first;
    } else if (first != NULL && old != NULL && es_chunk_start(first) > to) {
        /* Later (a first client's backlog reaches further back). */
        struct es_chunk *last = es_store_prev(st, first);
        c->next_chunk = first;
        es_store_release_range(st, old, last);
    }
    es_store_release(st, c->defs);
    c->defs = defs;
}

uint64_t es_client_end_hold(struct es_client *c, uint64_t now_ms, bool now) {
    if (!es_client_is(c, ES_CLIENT_HELD) || es_client_is(c, ES_CLIENT_CLOSING))
        return 0;
    if (!now && now_ms < c->hold_until)
        return c->hold_until - now_ms;
    es_client_set_flags(c, ES_CLIENT_HELD, false);
    es_client_pump(c);
    return 0;
}

void es_client_start(struct es_client *c) {
    assert(c->id != 0); /* es_fanout_join placed it in the stream */
    es_client_set_flags(c, ES_CLIENT_STARTED, true);
    c->moved_ms = uv_now(c->env->loop);
    if (c->env->hold_ms > 0) {
        es_client_set_flags(c, ES_CLIENT_HELD, true);
        c->hold_until = c->moved_ms + c->env->hold_ms;
    }
    es_client_pump(c);
}

void es_client_set_reader(struct es_client *c, void *reader) {
    assert(reader != NULL && c->reader == NULL); /* once */
    c->reader = reader;
    es_control_init(&c->control);
}

void *es_client_reader(const struct es_client *c) {
    assert(c->reader != NULL);
    return c->reader;
}

size_t es_client_next_frame(struct es_client *c, const uint8_t *buf, size_t len,
                            struct es_control_found *f) {
    assert(c->reader != NULL && len > 0);
    size_t n = es_control_next(&c->control, buf, len, f);
    assert(n > 0 && n <= len);
    return n;
}

void es_client_frame_ignored(struct es_client *c) {
    es_control_ignored(&c->control);
}

size_t es_client_count_read(struct es_client *c, uint64_t now_ms, size_t n) {
    if (es_client_reads_due(c, now_ms))
        es_client_restart_reads(c, now_ms, 0);
    c->read_bytes += n;
    return c->read_bytes;
}

void es_client_restart_reads(struct es_client *c, uint64_t now_ms, size_t bytes) {
    c->read_window_ms = now_ms;
    c->read_bytes = bytes;
}

bool es_client_reads_due(const struct es_client *c, uint64_t now_ms) {
    return now_ms - c->read_window_ms >= ES_CLIENT_READ_WINDOW_MS;
}
