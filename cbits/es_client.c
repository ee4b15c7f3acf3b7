#include "es_client.h"

#include "es_log.h"
#include "es_notice.h"
#include "es_peer.h"
#include "es_pool.h"
#include "es_registry.h"
#include "es_server.h"

#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

static void on_client_closed(uv_handle_t *h) {
    struct es_client *c = h->data;
    struct es_server *s = c->server;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nclients--;
    atomic_store(&s->counters.clients_connected, s->nclients);
    if (c->next_chunk)
        es_store_release_range(&s->store, c->next_chunk, s->store.tail);
    es_store_release(&s->store, c->defs);
    free(c);
    es_server_publish(s);
    es_server_update_tick(s);
    es_server_maybe_finish(s);
}

void es_client_close(struct es_client *c) {
    if (c->closing)
        return;
    c->closing = true;
    /* Pending writes complete with UV_ECANCELED before the close callback,
     * so their references are released before the client is freed. */
    uv_close(&c->io.handle, on_client_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status) {
    (void)status;
    es_client_close(req->data);
}

/* Everything the client will ever get has been handed to the socket. */
static bool caught_up(const struct es_client *c) {
    const struct es_store *st = &c->server->store;
    return !c->writing && (c->header_sent || st->header == NULL) && c->defs == NULL &&
           c->gap_chunks == 0 && c->next_chunk == NULL;
}

uint64_t es_client_droppable(const struct es_client *c) {
    if (c->next_chunk == NULL)
        return 0;
    uint64_t from = es_chunk_start(c->next_chunk);
    if (from < c->joined_at)
        from = c->joined_at; /* a first client's backlog is not held against it */
    uint64_t end = c->server->store.end_offset;
    return end > from ? end - from : 0;
}

void es_client_on_append(struct es_client *c, struct es_chunk *chunk) {
    if (c->next_chunk == NULL)
        c->next_chunk = chunk;
}

static void on_write(uv_write_t *req, int status) {
    struct es_client *c = req->data;
    struct es_server *s = c->server;
    struct es_store *st = &s->store;
    c->writing = false;
    for (unsigned i = 0; i < 3; i++) {
        es_store_release(st, c->write_extra[i]);
        c->write_extra[i] = NULL;
    }
    if (c->write_first)
        es_store_release_range(st, c->write_first, c->write_last);
    c->write_first = c->write_last = NULL;
    es_server_publish(s); /* what the write held may be free now */
    if (status == 0) {
        if (c->write_has_header)
            c->header_sent = true;
        atomic_fetch_add(&s->counters.bytes_sent, c->write_bytes);
        c->bytes_done += c->write_bytes;
    }
    c->write_has_header = false;
    if (status < 0) {
        /* The peer went away (EPIPE, ECONNRESET) or we closed it. */
        es_client_close(c);
        return;
    }
    es_client_pump(c);
}

/* The drop notice for what this client skipped since its last one. */
static struct es_chunk *drop_notice(struct es_client *c) {
    return es_notice_new(&c->server->header, c->gap_chunks, c->gap_bytes, c->gap_time);
}

void es_client_pump(struct es_client *c) {
    struct es_server *s = c->server;
    struct es_store *st = &s->store;
    if (c->writing || c->closing || c->finishing)
        return;
    if (s->stopping && caught_up(c)) {
        c->finishing = true;
        c->sreq.data = c;
        if (uv_shutdown(&c->sreq, &c->io.stream, on_shutdown) != 0)
            es_client_close(c);
        return;
    }
    /* No header yet: the RTS has not started. Data never precedes it. */
    if (!c->header_sent && st->header == NULL)
        return;

    uv_buf_t bufs[ES_CLIENT_MAX_BUFS];
    unsigned n = 0, extra = 0;
    size_t bytes = 0;
    struct es_chunk *first[3];
    if (!c->header_sent) {
        first[extra++] = es_store_ref(st->header);
        c->write_has_header = true;
    }
    if (c->defs) {
        first[extra++] = c->defs; /* the reference moves to the write */
        c->defs = NULL;
    }
    if (c->gap_chunks > 0) {
        struct es_chunk *notice = drop_notice(c);
        if (notice) {
            es_store_adopt(st, notice);
            first[extra++] = notice;
        }
        c->gap_chunks = c->gap_bytes = 0;
    }
    for (unsigned i = 0; i < extra; i++) {
        c->write_extra[i] = first[i];
        bufs[n++] = uv_buf_init((char *)first[i]->data, (unsigned)first[i]->len);
        bytes += first[i]->len;
    }
    c->write_first = c->write_last = NULL;
    for (struct es_chunk *ch = c->next_chunk;
         ch != NULL && n < ES_CLIENT_MAX_BUFS && (bytes < ES_CLIENT_MAX_WRITE || n == extra);
         ch = ch->next) {
        bufs[n++] = uv_buf_init((char *)ch->data, (unsigned)ch->len);
        bytes += ch->len;
        if (c->write_first == NULL)
            c->write_first = ch;
        c->write_last = ch;
    }
    if (n == 0)
        return;
    if (c->write_last)
        c->next_chunk = c->write_last->next;
    c->writing = true;
    c->write_bytes = bytes;
    c->wreq.data = c;
    int r = uv_write(&c->wreq, &c->io.stream, bufs, n, on_write);
    if (r != 0)
        on_write(&c->wreq, r); /* releases what the write held, closes */
}

uint64_t es_client_drop(struct es_client *c, uint64_t target) {
    struct es_server *s = c->server;
    uint64_t n = 0, bytes = 0;
    unsigned lent = 0;
    while (c->next_chunk != NULL && es_client_droppable(c) > target &&
           !(c->next_chunk->flags & ES_CHUNK_END)) {
        struct es_chunk *x = c->next_chunk;
        c->next_chunk = x->next;
        n++;
        bytes += x->len;
        /* The gap ends where the skipped block ended. */
        if (x->len >= ES_BLOCK_MARKER_LEN && es_be16(x->data) == ES_EVENT_BLOCK_MARKER)
            c->gap_time = es_be64(x->data + 14);
        /* The RTS refills what is skipped here with chunks of the same
         * size, soon: keep the buffer for them instead of giving it back. */
        if (x->refs == 1 && x->cap >= ES_POOL_MIN)
            lent++;
        es_store_release(&s->store, x); /* freed unless another client needs it */
    }
    if (n == 0)
        return 0;
    /* The loans end below half of what remains after a skip: a client
     * still stalled keeps the library above it; one that caught up or left
     * takes it below. */
    es_pool_lend_until(lent, es_server_held(s) / 2);
    c->gap_chunks += n;
    c->gap_bytes += bytes;
    atomic_fetch_add(&s->counters.chunks_dropped, n);
    atomic_fetch_add(&s->counters.bytes_dropped, bytes);
    es_log_limited(&s->log_dropping, uv_now(&s->loop),
                   "client %llu is too slow: skipping %.1f MiB of chunks for it (it gets a notice "
                   "in its stream)",
                   (unsigned long long)c->id, (double)bytes / (1 << 20));
    return n;
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
    size_t queued = c->writing ? uv_stream_get_write_queue_size(&c->io.stream) : 0;
    uint64_t accepted = c->bytes_done + (c->writing ? c->write_bytes - queued : 0);
    size_t unread = socket_unread(c);
    uint64_t consumed = accepted > unread ? accepted - unread : 0;
    if (consumed > c->consumed_seen) {
        c->consumed_seen = consumed;
        c->ever_read = true;
        c->moved_ms = now_ms;
    } else if (queued == 0 && unread == 0) {
        c->moved_ms = now_ms; /* idle: nothing waits for it */
    }
}

void es_client_check_exit_stall(struct es_client *c, uint64_t now_ms) {
    if (c->closing)
        return;
    es_client_note_progress(c, now_ms);
    if (now_ms - c->moved_ms < es_exit_stall_ms(&c->server->cfg, c->ever_read))
        return;
    es_log_limited(&c->server->log_exit_stall, now_ms,
                   "client %llu stopped reading; closing it without the rest of the stream",
                   (unsigned long long)c->id);
    es_client_close(c);
}

bool es_client_stuck(const struct es_client *c, uint64_t now_ms, uint64_t *since,
                     uint64_t *unique) {
    if (c->closing || !c->writing ||
        now_ms - c->moved_ms < es_exit_stall_ms(&c->server->cfg, c->ever_read))
        return false;
    *since = c->write_first ? es_chunk_start(c->write_first) : c->server->store.end_offset;
    *unique = 0;
    for (const struct es_chunk *ch = c->write_first; ch != NULL; ch = ch->next) {
        if (ch->refs == 1)
            *unique += ch->len;
        if (ch == c->write_last)
            break;
    }
    return true;
}

void es_client_disconnect_lagging(struct es_client *c, uint64_t lag, const char *limit) {
    struct es_server *s = c->server;
    atomic_fetch_add(&s->counters.clients_lagged, 1);
    es_log_limited(&s->log_lagging, uv_now(&s->loop),
                   "client %llu fell %.1f MiB behind (%s); disconnecting it",
                   (unsigned long long)c->id, (double)lag / (1 << 20), limit);
    es_client_close(c);
}

void es_client_check_lag(struct es_client *c) {
    struct es_server *s = c->server;
    if (c->closing)
        return;
    uint64_t lag = es_client_droppable(c);
    if (lag <= s->cfg.client_limit)
        return;
    if (s->cfg.drop_slow) {
        /* Down to half the limit, so that a client that keeps falling
         * behind gets a notice per several MiB, not one per chunk. */
        es_client_drop(c, s->cfg.client_limit / 2);
    } else {
        char why[64];
        snprintf(why, sizeof why, "limit %.1f MiB", (double)s->cfg.client_limit / (1 << 20));
        es_client_disconnect_lagging(c, lag, why);
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    struct es_client *c = h->data;
    *buf = uv_buf_init((char *)c->server->read_buf, sizeof c->server->read_buf);
}

static void dispatch_command(uint8_t cmd, void *ctx) {
    es_server_command(ctx, cmd);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    struct es_client *c = stream->data;
    if (nread > 0) {
        es_control_feed(&c->control, (const uint8_t *)buf->base, (size_t)nread, dispatch_command,
                        c->server);
        uint64_t now = uv_now(&c->server->loop);
        if (now - c->read_window_ms >= 1000) {
            c->read_window_ms = now;
            c->read_bytes = 0;
        }
        c->read_bytes += (size_t)nread;
        if (c->read_bytes > ES_CLIENT_READ_BUDGET && !c->closing) {
            uv_read_stop(stream);
            c->read_paused = true;
            es_server_reading_paused(c->server);
        }
    } else if (nread == UV_EOF) {
        /* The client has nothing more to say; it may still be reading, as
         * `nc` does after its standard input ends. */
        c->read_eof = true;
        uv_read_stop(stream);
    } else if (nread < 0) {
        es_client_close(c);
    }
}

bool es_client_resume_reading(struct es_client *c, uint64_t now_ms) {
    if (!c->read_paused || c->closing || c->read_eof)
        return false;
    if (now_ms - c->read_window_ms < 1000)
        return true;
    c->read_paused = false;
    c->read_window_ms = now_ms;
    c->read_bytes = 0;
    if (uv_read_start(&c->io.stream, on_alloc, on_read) != 0)
        es_client_close(c);
    return false;
}

static void on_refused_closed(uv_handle_t *h) {
    free(h->data);
}

/* Descriptors the program keeps for itself: the library refuses a client
 * whose connection would take one of them (es_client_accept). */
static unsigned fd_reserve(rlim_t limit) {
    rlim_t r = limit / 8;
    return (unsigned)(r < 32 ? 32 : r > 1024 ? 1024 : r);
}

/* Whether a TCP client from this machine belongs to another user (root
 * excepted, as for a Unix socket's 0600), or cannot be told apart from one;
 * if so, `why` says so. Clients from other machines cannot be checked:
 * binding a non-loopback address was asked for, and logged (es_server.c). */
static bool other_user(int fd, char *why, size_t n) {
    struct sockaddr_storage peer, local;
    socklen_t plen = sizeof peer, llen = sizeof local;
    if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0 ||
        getsockname(fd, (struct sockaddr *)&local, &llen) != 0 ||
        !es_peer_is_loopback((struct sockaddr *)&peer))
        return false;
    uid_t uid;
    int r = es_peer_uid((struct sockaddr *)&peer, (struct sockaddr *)&local, &uid);
    if (r != 0) {
        snprintf(why, n,
                 "cannot tell which user it belongs to (/proc/net/tcp: %s); "
                 "GHC_EVENTLOG_ALLOW_OTHER_USERS=1 serves any user",
                 strerror(-r));
        return true;
    }
    if (uid == geteuid() || uid == 0)
        return false;
    snprintf(why, n,
             "it belongs to uid %lu and the program runs as uid %lu "
             "(GHC_EVENTLOG_ALLOW_OTHER_USERS=1 serves other users)",
             (unsigned long)uid, (unsigned long)geteuid());
    return true;
}

/* Whether the accepted connection must be refused, and why. */
static const char *refusal(const struct es_server *s, struct es_client *c, char *why, size_t n) {
    if (s->nclients >= s->cfg.max_clients) {
        snprintf(why, n, "%u clients are connected, the most allowed (GHC_EVENTLOG_MAX_CLIENTS)",
                 s->nclients);
        return why;
    }
    uv_os_fd_t fd;
    struct rlimit rl;
    if (!s->is_unix && !s->cfg.allow_other_users && uv_fileno(&c->io.handle, &fd) == 0)
        if (other_user(fd, why, n))
            return why;
    if (uv_fileno(&c->io.handle, &fd) == 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
        rl.rlim_cur != RLIM_INFINITY && (rlim_t)fd + fd_reserve(rl.rlim_cur) >= rl.rlim_cur) {
        snprintf(why, n,
                 "the program has fewer than %u of its %llu file descriptors left, kept for "
                 "its own use (raise ulimit -n)",
                 fd_reserve(rl.rlim_cur), (unsigned long long)rl.rlim_cur);
        return why;
    }
    return NULL;
}

void es_client_accept(struct es_server *s) {
    struct es_client *c = calloc(1, sizeof *c);
    if (c == NULL) {
        es_server_async_error(s, UV_ENOMEM, "accepting a client");
        return;
    }
    int r = s->is_unix ? uv_pipe_init(&s->loop, &c->io.pipe, 0) : uv_tcp_init(&s->loop, &c->io.tcp);
    if (r != 0) {
        free(c);
        es_server_async_error(s, r, "accepting a client");
        return;
    }
    c->io.handle.data = c;
    r = uv_accept(&s->listener.stream, &c->io.stream);
    char why[256];
    const char *refused = r == 0 ? refusal(s, c, why, sizeof why) : NULL;
    if (r != 0 || refused) {
        if (r != 0)
            es_server_async_error(s, r, "accepting a client");
        if (refused) {
            atomic_fetch_add(&s->counters.clients_refused, 1);
            es_log_limited(&s->log_refused, uv_now(&s->loop), "refusing a client: %s", refused);
        }
        uv_close(&c->io.handle, on_refused_closed);
        return;
    }
    c->server = s;
    c->io.handle.data = c;
    c->id = atomic_fetch_add(&s->counters.clients_accepted, 1) + 1;
    c->next_chunk = es_store_join(&s->store);
    c->joined_at = s->store.end_offset;
    c->moved_ms = uv_now(&s->loop);
    /* Definitions from chunks this client will not get (all of them for a
     * late joiner; none for a first client that gets everything). */
    c->defs = es_defs_block(&s->defs, &s->store,
                            c->next_chunk ? es_chunk_start(c->next_chunk) : s->store.end_offset);
    es_control_init(&c->control);
    c->control.custom = es_registry_dispatch;
    c->next = s->clients;
    if (s->clients)
        s->clients->prev = c;
    s->clients = c;
    s->nclients++;
    atomic_store(&s->counters.clients_connected, s->nclients);

    if (!s->is_unix)
        uv_tcp_nodelay(&c->io.tcp, 1);
    r = uv_read_start(&c->io.stream, on_alloc, on_read);
    if (r != 0) {
        es_client_close(c);
        return;
    }
    if (s->store.retain_dropped_chunks > 0 && !s->retain_drop_logged) {
        s->retain_drop_logged = true;
        es_log("the first client missed %llu chunks (%.1f MiB) that arrived before it "
               "connected: more than the buffer limit of %.1f MiB",
               (unsigned long long)s->store.retain_dropped_chunks,
               (double)s->store.retain_dropped_bytes / (1 << 20),
               (double)s->cfg.max_buffer / (1 << 20));
    }
    uv_mutex_lock(&s->state_lock);
    s->first_client = true;
    uv_cond_broadcast(&s->state_cond);
    uv_mutex_unlock(&s->state_lock);
    es_server_publish(s);
    es_server_update_tick(s);
    es_client_pump(c);
    /* What POST_START hooks post now reaches this client (es_registry.h). */
    es_registry_client_connected();
}
