/* SPDX-License-Identifier: BSD-3-Clause */
#include "http.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include "http/resp.h"
#include "page.h"
#include "http/buf.h"
#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* libmicrohttpd's limits; who holds the connections, and the request
 * deadline: client/http/guard.h. */
static const struct es_httpserver_limits limits = {.conns = 256,
                                                   .per_ip = 160,
                                                   .memory = 64 * 1024,
                                                   .timeout_s = 10,
                                                   .thread_per_conn = true,
                                                   .thread_stack = 512 * 1024};

struct es_webhttp {
    struct es_webshare *sh;
    struct es_httpserver srv; /* who may ask, and the connections (client/http/server.h) */
};

static const uint8_t end_marker[2] = {0xff, 0xff};

/* ---- Responses. */

/* A response whose body `read` produces (MHD_SIZE_UNKNOWN: until it says
 * it ended); `cls` is freed by `done`. */
static enum MHD_Result respond_with(struct MHD_Connection *c, uint64_t size,
                                    MHD_ContentReaderCallback read, void *cls,
                                    MHD_ContentReaderFreeCallback done, const char *type,
                                    const char *header, const char *value) {
    struct MHD_Response *r = MHD_create_response_from_callback(size, 64 * 1024, read, cls, done);
    if (r == NULL) {
        done(cls);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, header, value);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* One browser's event stream: the next message it needs, and the one it is
 * sending (shared with the other readers), from `off` on. */
struct sse {
    struct es_webshare *sh;
    uint64_t next;
    const struct es_webshare_msg *msg;
    size_t off;
};

static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max) {
    (void)pos;
    struct sse *e = cls;
    size_t len = 0;
    const char *data = e->msg ? es_webshare_msg_data(e->msg, &len) : NULL;
    if (e->msg != NULL && e->off < len && es_webshare_msg_stale(e->sh, e->msg))
        return MHD_CONTENT_READER_END_WITH_ERROR; /* too slow: reconnect for the latest */
    if (e->off >= len) {
        es_webshare_release(e->sh, e->msg);
        e->msg = NULL;
        e->off = 0;
        if (es_webshare_next(e->sh, &e->next, &e->msg) == 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        data = es_webshare_msg_data(e->msg, &len);
    }
    size_t n = len - e->off < max ? len - e->off : max;
    memcpy(out, data + e->off, n);
    e->off += n;
    return (ssize_t)n;
}

static void sse_free(void *cls) {
    struct sse *e = cls;
    es_webshare_release(e->sh, e->msg);
    free(e);
}

/* A download of the recording so far: whole blocks, then an end marker. */
static ssize_t download_read(void *cls, uint64_t pos, char *out, size_t max) {
    struct es_webshare_download *d = cls;
    uint64_t total = d->len + (d->marker ? 2 : 0);
    if (pos >= total)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (pos >= d->len) {
        size_t n = (size_t)(total - pos) < max ? (size_t)(total - pos) : max;
        memcpy(out, end_marker + (pos - d->len), n);
        return (ssize_t)n;
    }
    size_t want = d->len - pos < max ? (size_t)(d->len - pos) : max;
    ssize_t n = pread(d->fd, out, want, (off_t)pos);
    return n > 0 ? n : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void download_free(void *cls) {
    struct es_webshare_download *d = cls;
    close(d->fd);
    free(d);
}

/* ---- Handlers. */

/* GET /metrics: the program's Prometheus exposition, as the loop thread
 * last wrote it. */
static enum MHD_Result serve_metrics(struct es_webhttp *h, struct MHD_Connection *c) {
    char *buf;
    size_t len;
    if (es_webshare_metrics(h->sh, &buf, &len) != 0)
        return es_httpresp_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return es_httpresp_owned(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", buf, len);
}

static enum MHD_Result serve_asset(struct MHD_Connection *c, const char *name) {
    const struct es_webpage_asset *a = es_webpage_asset(name);
    return es_httpresp_static(c, MHD_HTTP_OK, a->type, a->data, a->len);
}

/* The page, its files linked with the token when there is one (the page's
 * script carries it on to the events, commands and download). */
static enum MHD_Result serve_page(struct es_webhttp *h, struct MHD_Connection *c) {
    struct es_httpbuf b = {0};
    char query[sizeof h->srv.auth.token + 8] = "";
    if (h->srv.auth.token[0] != '\0')
        snprintf(query, sizeof query, "?token=%s", h->srv.auth.token);
    es_webpage_linked(&b, query);
    if (b.oom) {
        es_httpbuf_free(&b);
        return es_httpresp_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    return es_httpresp_owned(c, MHD_HTTP_OK, "text/html; charset=utf-8", b.p, b.len);
}

static enum MHD_Result serve_events(struct es_webhttp *h, struct MHD_Connection *c) {
    struct sse *e = calloc(1, sizeof *e);
    if (e == NULL)
        return MHD_NO;
    e->sh = h->sh;
    return respond_with(c, MHD_SIZE_UNKNOWN, sse_read, e, sse_free, "text/event-stream",
                        MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
}

static enum MHD_Result serve_recording(struct es_webhttp *h, struct MHD_Connection *c) {
    struct es_webshare_download *d = calloc(1, sizeof *d);
    if (d == NULL)
        return MHD_NO;
    es_webshare_download(h->sh, d);
    if (d->fd < 0 || d->len == 0) {
        if (d->fd >= 0)
            close(d->fd);
        free(d);
        return es_httpresp_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "nothing recorded yet\n");
    }
    char disposition[400];
    snprintf(disposition, sizeof disposition, "attachment; filename=\"%s\"", d->name);
    return respond_with(c, d->len + (d->marker ? 2 : 0), download_read, d, download_free,
                        "application/octet-stream", MHD_HTTP_HEADER_CONTENT_DISPOSITION,
                        disposition);
}

static enum MHD_Result serve_control(struct es_webhttp *h, struct MHD_Connection *c,
                                     const char *what) {
    /* A custom header: a form or script of another site cannot send it
     * without a CORS preflight, which this server never grants. */
    if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Eventlog-Socket") == NULL)
        return es_httpresp_text(c, MHD_HTTP_FORBIDDEN, "missing X-Eventlog-Socket header\n");
    uint8_t cmd;
    if (strcmp(what, "census") == 0)
        cmd = EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS;
    else if (strcmp(what, "start") == 0)
        cmd = EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING;
    else if (strcmp(what, "stop") == 0)
        cmd = EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING;
    else if (strcmp(what, "profile-start") == 0)
        cmd = EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING;
    else if (strcmp(what, "profile-stop") == 0)
        cmd = EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING;
    else
        return es_httpresp_text(c, MHD_HTTP_NOT_FOUND, "no such command\n");
    switch (es_webshare_command(h->sh, cmd)) {
    case ES_WEBSHARE_NOT_CONNECTED:
        return es_httpresp_text(c, MHD_HTTP_CONFLICT, "not connected to the program\n");
    case ES_WEBSHARE_BUSY:
        return es_httpresp_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "too many commands at once\n");
    case ES_WEBSHARE_SENT:
        break;
    }
    return es_httpresp_text(c, MHD_HTTP_ACCEPTED, "sent\n");
}

void es_webhttp_cut_late(struct es_webhttp *h) {
    es_httpguard_cut_late(&h->srv.guard);
}

/* ---- Requests. */

static enum MHD_Result on_get(struct es_webhttp *h, struct MHD_Connection *c, const char *url) {
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return serve_page(h, c);
    if (strcmp(url, "/events") == 0)
        return serve_events(h, c);
    if (strcmp(url, "/recording.eventlog") == 0)
        return serve_recording(h, c);
    if (strcmp(url, "/metrics") == 0)
        return serve_metrics(h, c);
    static const char *files[] = {"app.js",        "style.css",      "dygraph.js", "dygraph.css",
                                  "flamegraph.js", "flamegraph.css", "esflame.js"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (url[0] == '/' && strcmp(url + 1, files[i]) == 0)
            return serve_asset(c, files[i]);
    return es_httpresp_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **state) {
    (void)version;
    (void)upload_data;
    struct es_webhttp *h = cls;
    bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    if (post) {
        /* A POST's body (ignored) comes in further calls; answer after it. */
        static int seen;
        if (*state == NULL) {
            *state = &seen;
            return MHD_YES;
        }
        if (*upload_size != 0) {
            *upload_size = 0;
            return MHD_YES;
        }
    }
    enum es_httpauth_verdict v = es_httpserver_admit(&h->srv, c);
    switch (v) {
    case ES_HTTPAUTH_OK:
        break;
    case ES_HTTPAUTH_OTHER_USER:
        return es_httpresp_text(
            c, MHD_HTTP_FORBIDDEN,
            "this eventlog-socket serve is another user's (docs/security.md)\n");
    case ES_HTTPAUTH_NO_TOKEN:
        return es_httpresp_text(c, MHD_HTTP_FORBIDDEN,
                                "open the URL eventlog-socket serve printed (it has ?token=)\n");
    case ES_HTTPAUTH_WRONG_HOST:
        return es_httpresp_text(c, MHD_HTTP_MISDIRECTED_REQUEST, "wrong Host\n");
    }
    if (post) {
        if (strncmp(url, "/api/", 5) == 0)
            return serve_control(h, c, url + 5);
        return es_httpresp_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return es_httpresp_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or POST only\n");
    return on_get(h, c, url);
}

/* ---- The server. */

struct es_webhttp *es_webhttp_start(struct es_webshare *sh, const struct sockaddr_storage *sa,
                                    bool loopback) {
    struct es_webhttp *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->sh = sh;
    if (es_httpserver_start(&h->srv, sa, loopback, NULL, &limits, on_request, h) != 0) {
        int e = errno;
        free(h);
        errno = e;
        return NULL;
    }
    return h;
}

unsigned es_webhttp_port(const struct es_webhttp *h) {
    return h->srv.auth.port;
}

const char *es_webhttp_token(const struct es_webhttp *h) {
    return h->srv.auth.token;
}

void es_webhttp_stop(struct es_webhttp *h) {
    es_httpserver_stop(&h->srv);
    free(h);
}
