#include "es_client.h"

#include "es_log.h"
#include "es_server.h"

#include <stdlib.h>

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
    es_store_unref(&s->store, c->cursor);
    free(c);
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
    return !c->writing && (c->header_sent || st->header == NULL) && c->cursor == st->tail;
}

static void on_write(uv_write_t *req, int status) {
    struct es_client *c = req->data;
    struct es_store *st = &c->server->store;
    c->writing = false;
    if (c->write_header) {
        es_store_unref(st, c->write_header);
        c->write_header = NULL;
        if (status == 0)
            c->header_sent = true;
    }
    if (status < 0) {
        /* The peer went away (EPIPE, ECONNRESET) or we closed it. */
        es_client_close(c);
        return;
    }
    if (c->write_last) {
        struct es_chunk *old = c->cursor;
        c->cursor = es_store_ref(c->write_last);
        c->write_last = NULL;
        es_store_unref(st, old);
    }
    es_client_pump(c);
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

    uv_buf_t bufs[ES_CLIENT_MAX_BUFS];
    unsigned n = 0;
    size_t bytes = 0;
    if (!c->header_sent) {
        /* No header yet: the RTS has not started. Data never precedes it. */
        if (st->header == NULL)
            return;
        c->write_header = es_store_ref(st->header);
        bufs[n++] = uv_buf_init((char *)st->header->data, (unsigned)st->header->len);
        bytes += st->header->len;
    }
    c->write_last = NULL;
    for (struct es_chunk *ch = c->cursor->next;
         ch != NULL && n < ES_CLIENT_MAX_BUFS && bytes < ES_CLIENT_MAX_WRITE; ch = ch->next) {
        if (ch->len == 0)
            continue;
        bufs[n++] = uv_buf_init((char *)ch->data, (unsigned)ch->len);
        bytes += ch->len;
        c->write_last = ch;
    }
    if (n == 0)
        return;
    c->writing = true;
    c->wreq.data = c;
    int r = uv_write(&c->wreq, &c->io.stream, bufs, n, on_write);
    if (r != 0) {
        c->writing = false;
        if (c->write_header) {
            es_store_unref(st, c->write_header);
            c->write_header = NULL;
        }
        c->write_last = NULL;
        es_client_close(c);
    }
}

void es_client_check_lag(struct es_client *c) {
    struct es_server *s = c->server;
    if (c->closing)
        return;
    uint64_t from = c->cursor->end_offset > c->joined_at ? c->cursor->end_offset : c->joined_at;
    uint64_t lag = s->store.tail->end_offset - from;
    if (lag <= s->cfg.client_limit)
        return;
    s->clients_lagged++;
    es_log("client %llu fell %.1f MiB behind (limit %.1f MiB); disconnecting it",
           (unsigned long long)c->id, (double)lag / (1 << 20),
           (double)s->cfg.client_limit / (1 << 20));
    es_client_close(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    struct es_client *c = h->data;
    *buf = uv_buf_init((char *)c->rbuf, sizeof c->rbuf);
}

static void dispatch_command(uint8_t cmd, void *ctx) {
    struct es_server *s = ctx;
    if (s->on_command)
        s->on_command(cmd, s->command_ctx);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    struct es_client *c = stream->data;
    if (nread > 0) {
        es_control_feed(&c->control, (const uint8_t *)buf->base, (size_t)nread, dispatch_command,
                        c->server);
    } else if (nread == UV_EOF) {
        /* The client has nothing more to say; it may still be reading, as
         * `nc` does after its standard input ends. */
        uv_read_stop(stream);
    } else if (nread < 0) {
        es_client_close(c);
    }
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
    c->server = s;
    c->io.handle.data = c;
    c->id = ++s->clients_accepted;
    c->cursor = es_store_join(&s->store);
    c->joined_at = s->store.tail->end_offset;
    es_control_init(&c->control);
    c->next = s->clients;
    if (s->clients)
        s->clients->prev = c;
    s->clients = c;
    s->nclients++;

    r = uv_accept(&s->listener.stream, &c->io.stream);
    if (r != 0) {
        es_server_async_error(s, r, "accepting a client");
        es_client_close(c);
        return;
    }
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
               "connected: more than the retention limit of %.1f MiB",
               (unsigned long long)s->store.retain_dropped_chunks,
               (double)s->store.retain_dropped_bytes / (1 << 20),
               (double)s->cfg.retain_limit / (1 << 20));
    }
    uv_mutex_lock(&s->state_lock);
    s->first_client = true;
    uv_cond_broadcast(&s->state_cond);
    uv_mutex_unlock(&s->state_lock);
    es_server_update_tick(s);
    es_client_pump(c);
}
