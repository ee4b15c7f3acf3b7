/* `eventlog-socket serve ADDR [--http HOST:PORT]`: a live web page of a
 * running program, and `eventlog-socket report FILE -o OUT.html`: the same
 * page rendered once from a recording into one self-contained file.
 *
 * Both read the stream with es_conn (client/conn.h) into the same model as
 * `top` (client/model.h) and write it out with es_webjson. serve runs two
 * sides:
 *   - the libuv loop thread owns the connection, the model and the
 *     recording; twice a second it writes what changed as one Server-Sent
 *     Event message into `struct shared`;
 *   - libmicrohttpd runs the HTTP server in threads of its own (one per
 *     connection), which only read `struct shared`, under its mutex, and
 *     hand button presses to the loop through a uv_async.
 * So the program's stream is read at full speed whatever the browsers do:
 * a slow or stalled tab only delays its own thread, and the messages kept
 * for late or slow tabs are bounded (a whole state plus the deltas after it,
 * no larger than it). */
#include "blocks.h"
#include "conn.h"
#include "opts.h"
#include "model.h"
#include "web.h"
#include "webjson.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 500
/* Messages kept after the last whole state; a tab further behind gets a
 * new whole state. */
#define MAX_DELTAS 64
/* An idle event stream gets a comment this often, so that browsers and
 * MHD's inactivity timeout see it alive. */
#define KEEPALIVE_S 3
/* HTTP limits (libmicrohttpd options). */
#define HTTP_TIMEOUT_S 10
/* A whole request (headers and any body) must arrive within this long of
 * the connection's opening or of the previous response's end, however it
 * trickles in: libmicrohttpd's timeout above fires on silence only. */
#define HTTP_REQUEST_S    10
#define HTTP_MEMORY_LIMIT (64 * 1024)
#define HTTP_MAX_CONNS    256
#define HTTP_MAX_PER_IP   160
#define HTTP_THREAD_STACK (512 * 1024)
#define COMMAND_QUEUE     16
/* --retry: the pause before connecting again after a run ended. */
#define RECONNECT_MS 500

static const uint8_t end_marker[2] = {0xff, 0xff};

/* ---- What the loop thread shares with the HTTP threads (under `mu`). */

struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a new message, or closing */
    char *full;        /* the latest whole state, as an SSE message */
    size_t full_len;
    uint64_t full_seq; /* its sequence number (0: none yet) */
    struct msg {
        char *data;
        size_t len;
    } deltas[MAX_DELTAS]; /* seq full_seq + 1 + i */
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
    uv_async_t async;
    /* What the Host header may say (DNS rebinding): set when bound to loopback. */
    bool loopback;
    unsigned port;
    /* Every open HTTP connection, for the request deadline. */
    struct watch *watches;
};

/* One HTTP connection (its MHD socket context): the time by which its
 * current request must have arrived whole, 0 while none is awaited (a
 * response, such as an event stream, is being sent). */
struct watch {
    struct watch *prev, *next;
    int fd;
    uint64_t deadline_ms;
};

struct serve {
    uv_loop_t *loop;
    /* With --retry, a connection is opened again after each end; the two
     * alternate, since a closed one is released by the loop later. */
    struct es_conn conns[2];
    struct es_conn *conn; /* the one open now, or next */
    bool conn_open;       /* conn was opened and not closed yet */
    unsigned cur;
    uv_timer_t reconnect;
    unsigned run;       /* runs shown so far (sessions with a header, not ignored) */
    int run_pid;        /* the shown run's server process (SO_PEERCRED), 0: unknown */
    bool run_exited;    /* the shown run ended with its end marker */
    uint64_t run_bytes; /* bytes of the shown run, once it ended */
    char run_source[300];
    bool ignoring;   /* this session reached the exited run's program again */
    bool said_retry; /* a session without a header was reported on stderr */
    struct es_conn_options opt;
    struct es_model *model;
    struct es_blocks blocks;
    struct es_webjson_cursor cursor;
    const char *source;
    const char *http;     /* --http HOST:PORT */
    const char *rec_path; /* --record FILE, or NULL for a temporary file */
    char tmp_path[512];
    int rec_fd;
    const char *state;
    char error[600];
    char peer_program[256]; /* from /proc, for GHC 9.0 */
    bool peer_looked;
    bool header;
    bool ended;
    uint64_t last_events; /* at the last message */
    const char *last_state;
    uv_timer_t tick;
    uv_signal_t sigint, sigterm;
    struct MHD_Daemon *daemon;
    struct shared sh;
    int status;
    bool stopping;
};

/* ---- The page: the template with its styles and scripts. */

struct page_part {
    const char *style;   /* replaces <!--ES_STYLE--> */
    const char *scripts; /* replaces <!--ES_SCRIPTS--> */
};

/* The template with its two marks replaced by text that `emit` writes. */
static void page(struct es_webbuf *out, void (*emit)(struct es_webbuf *, int which, void *),
                 void *ctx) {
    const struct es_web_asset *t = es_web_asset("page.html");
    const char *p = (const char *)t->data, *end = p + t->len;
    static const char *marks[2] = {"<!--ES_STYLE-->", "<!--ES_SCRIPTS-->"};
    for (int which = 0; which < 2; which++) {
        const char *m = strstr(p, marks[which]);
        if (m == NULL)
            break;
        es_webbuf_add(out, p, (size_t)(m - p));
        emit(out, which, ctx);
        p = m + strlen(marks[which]);
    }
    es_webbuf_add(out, p, (size_t)(end - p));
}

static void emit_linked(struct es_webbuf *out, int which, void *ctx) {
    (void)ctx;
    if (which == 0)
        es_webbuf_printf(out, "<link rel=\"stylesheet\" href=\"dygraph.css\">"
                              "<link rel=\"stylesheet\" href=\"style.css\">");
    else
        es_webbuf_printf(out, "<script src=\"dygraph.js\"></script>"
                              "<script src=\"app.js\"></script>");
}

static void add_asset(struct es_webbuf *out, const char *name) {
    const struct es_web_asset *a = es_web_asset(name);
    es_webbuf_add(out, (const char *)a->data, a->len);
}

/* report: everything inline, the data as JSON in a non-executed script. */
static void emit_inline(struct es_webbuf *out, int which, void *ctx) {
    const struct es_webbuf *json = ctx;
    if (which == 0) {
        ES_WEBBUF_ADD(out, "<style>\n");
        add_asset(out, "dygraph.css");
        add_asset(out, "style.css");
        ES_WEBBUF_ADD(out, "</style>");
    } else {
        ES_WEBBUF_ADD(out, "<script>\n");
        add_asset(out, "dygraph.js");
        es_webbuf_printf(out, "\n</script>\n<script id=\"es-data\" type=\"application/json\">");
        es_webbuf_add(out, json->p, json->len);
        ES_WEBBUF_ADD(out, "</script>\n<script>\n");
        add_asset(out, "app.js");
        ES_WEBBUF_ADD(out, "\n</script>");
    }
}

/* ---- HTTP (libmicrohttpd's threads). */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
                               const void *data, size_t len, enum MHD_ResponseMemoryMode mode) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)data, mode);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned status, const char *text) {
    return respond(c, status, "text/plain; charset=utf-8", text, strlen(text),
                   MHD_RESPMEM_PERSISTENT);
}

/* One browser's event stream: the next message it needs, and the part of
 * the current one not yet handed to MHD. */
struct sse {
    struct shared *sh;
    uint64_t next;
    char *buf;
    size_t len, off;
};

static char *copy_of(const char *p, size_t n) {
    char *c = malloc(n ? n : 1);
    if (c != NULL && n)
        memcpy(c, p, n);
    return c;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max) {
    (void)pos;
    struct sse *e = cls;
    struct shared *sh = e->sh;
    if (e->off >= e->len) {
        free(e->buf);
        e->buf = NULL;
        e->len = e->off = 0;
        pthread_mutex_lock(&sh->mu);
        while (e->buf == NULL) {
            if (sh->closing) {
                pthread_mutex_unlock(&sh->mu);
                return MHD_CONTENT_READER_END_OF_STREAM;
            }
            if (sh->full != NULL && e->next <= sh->full_seq) {
                e->buf = copy_of(sh->full, sh->full_len);
                e->len = sh->full_len;
                e->next = sh->full_seq + 1;
            } else if (sh->full != NULL && e->next < sh->full_seq + 1 + sh->ndeltas) {
                const struct msg *m = &sh->deltas[e->next - sh->full_seq - 1];
                e->buf = copy_of(m->data, m->len);
                e->len = m->len;
                e->next++;
            } else {
                struct timespec until;
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += KEEPALIVE_S;
                if (pthread_cond_timedwait(&sh->cv, &sh->mu, &until) == ETIMEDOUT) {
                    static const char ping[] = ": keepalive\n\n";
                    e->buf = copy_of(ping, sizeof ping - 1);
                    e->len = sizeof ping - 1;
                }
                continue;
            }
        }
        pthread_mutex_unlock(&sh->mu);
        if (e->buf == NULL)
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = e->len - e->off < max ? e->len - e->off : max;
    memcpy(out, e->buf + e->off, n);
    e->off += n;
    return (ssize_t)n;
}

static void sse_free(void *cls) {
    struct sse *e = cls;
    free(e->buf);
    free(e);
}

/* A download of the recording so far: whole blocks, then an end marker. */
struct download {
    int fd;
    uint64_t len; /* bytes from the file */
    bool marker;
};

static ssize_t download_read(void *cls, uint64_t pos, char *out, size_t max) {
    struct download *d = cls;
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
    struct download *d = cls;
    close(d->fd);
    free(d);
}

/* The Host header must name this server, when it listens on loopback only:
 * a page of another site that a DNS name rebound to 127.0.0.1 gets nothing. */
static bool host_ok(struct shared *sh, struct MHD_Connection *c) {
    if (!sh->loopback)
        return true;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (host == NULL)
        return false;
    static const char *names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t k = strlen(names[i]);
        if (strncmp(host, names[i], k) == 0) {
            if (host[k] == '\0')
                return true;
            char port[16];
            snprintf(port, sizeof port, ":%u", sh->port);
            if (strcmp(host + k, port) == 0)
                return true;
        }
    }
    return false;
}

static enum MHD_Result serve_asset(struct MHD_Connection *c, const char *name) {
    const struct es_web_asset *a = es_web_asset(name);
    return respond(c, MHD_HTTP_OK, a->type, a->data, a->len, MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_page(struct MHD_Connection *c) {
    struct es_webbuf b = {0};
    page(&b, emit_linked, NULL);
    if (b.oom) {
        es_webbuf_free(&b);
        return respond_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    enum MHD_Result r =
        respond(c, MHD_HTTP_OK, "text/html; charset=utf-8", b.p, b.len, MHD_RESPMEM_MUST_FREE);
    if (r != MHD_YES)
        free(b.p);
    return r;
}

static enum MHD_Result serve_events(struct shared *sh, struct MHD_Connection *c) {
    struct sse *e = calloc(1, sizeof *e);
    if (e == NULL)
        return MHD_NO;
    e->sh = sh;
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, sse_read, e, sse_free);
    if (r == NULL) {
        free(e);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result serve_recording(struct shared *sh, struct MHD_Connection *c) {
    struct download *d = calloc(1, sizeof *d);
    if (d == NULL)
        return MHD_NO;
    char disposition[400];
    pthread_mutex_lock(&sh->mu);
    d->fd = sh->rec_fd >= 0 ? fcntl(sh->rec_fd, F_DUPFD_CLOEXEC, 0) : -1;
    d->len = sh->rec_len;
    d->marker = !sh->rec_ended;
    snprintf(disposition, sizeof disposition, "attachment; filename=\"%s\"", sh->rec_name);
    pthread_mutex_unlock(&sh->mu);
    if (d->fd < 0 || d->len == 0) {
        if (d->fd >= 0)
            close(d->fd);
        free(d);
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "nothing recorded yet\n");
    }
    struct MHD_Response *r = MHD_create_response_from_callback(
        d->len + (d->marker ? 2 : 0), 64 * 1024, download_read, d, download_free);
    if (r == NULL) {
        download_free(d);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result serve_control(struct shared *sh, struct MHD_Connection *c,
                                     const char *what) {
    /* A custom header: a form or script of another site cannot send it
     * without a CORS preflight, which this server never grants. */
    if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Eventlog-Socket") == NULL)
        return respond_text(c, MHD_HTTP_FORBIDDEN, "missing X-Eventlog-Socket header\n");
    uint8_t cmd;
    if (strcmp(what, "census") == 0)
        cmd = 0x03; /* EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS */
    else if (strcmp(what, "start") == 0)
        cmd = 0x01; /* EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING */
    else if (strcmp(what, "stop") == 0)
        cmd = 0x02; /* EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING */
    else
        return respond_text(c, MHD_HTTP_NOT_FOUND, "no such command\n");
    bool queued = false, connected;
    pthread_mutex_lock(&sh->mu);
    connected = sh->can_control;
    if (connected && sh->ncmds < COMMAND_QUEUE) {
        sh->cmds[sh->ncmds++] = cmd;
        queued = true;
    }
    pthread_mutex_unlock(&sh->mu);
    if (!connected)
        return respond_text(c, MHD_HTTP_CONFLICT, "not connected to the program\n");
    if (!queued)
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "too many commands at once\n");
    uv_async_send(&sh->async);
    return respond_text(c, MHD_HTTP_ACCEPTED, "sent\n");
}

/* ---- The request deadline (HTTP_REQUEST_S). MHD calls the two notify
 * functions in its threads; the loop thread's tick cuts the late
 * connections. A cut is shutdown(2) of the socket: the connection's thread
 * sees the end of its input and MHD closes and frees the connection as it
 * does for any client that leaves. MHD reports the closing (removing the
 * watch under `mu`) before it closes the socket, so a descriptor is never
 * shut down after it was closed and reused. */

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    struct shared *sh = cls;
    struct watch *w = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        w = ci ? calloc(1, sizeof *w) : NULL;
        *socket_context = w;
        if (w == NULL)
            return; /* this connection has the inactivity timeout only */
        w->fd = ci->connect_fd;
        w->deadline_ms = now_ms() + HTTP_REQUEST_S * 1000;
        pthread_mutex_lock(&sh->mu);
        w->next = sh->watches;
        if (w->next)
            w->next->prev = w;
        sh->watches = w;
        pthread_mutex_unlock(&sh->mu);
    } else if (w != NULL) {
        pthread_mutex_lock(&sh->mu);
        if (w->prev)
            w->prev->next = w->next;
        else
            sh->watches = w->next;
        if (w->next)
            w->next->prev = w->prev;
        pthread_mutex_unlock(&sh->mu);
        free(w);
        *socket_context = NULL;
    }
}

/* The request arrived whole (deadline 0), or a response ended and the
 * next request on the connection has HTTP_REQUEST_S to arrive. */
static void set_deadline(struct shared *sh, struct MHD_Connection *c, uint64_t when) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct watch *w = ci ? ci->socket_context : NULL;
    if (w == NULL)
        return;
    pthread_mutex_lock(&sh->mu);
    w->deadline_ms = when;
    pthread_mutex_unlock(&sh->mu);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode code) {
    (void)state;
    (void)code;
    set_deadline(cls, c, now_ms() + HTTP_REQUEST_S * 1000);
}

/* The loop thread: cut the connections whose request is late. */
static void cut_late(struct shared *sh) {
    uint64_t now = now_ms();
    pthread_mutex_lock(&sh->mu);
    for (struct watch *w = sh->watches; w != NULL; w = w->next)
        if (w->deadline_ms != 0 && w->deadline_ms <= now) {
            shutdown(w->fd, SHUT_RDWR);
            w->deadline_ms = 0;
        }
    pthread_mutex_unlock(&sh->mu);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **state) {
    (void)version;
    (void)upload_data;
    struct shared *sh = cls;
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
    set_deadline(sh, c, 0);
    if (!host_ok(sh, c))
        return respond_text(c, MHD_HTTP_MISDIRECTED_REQUEST, "wrong Host\n");
    if (post) {
        if (strncmp(url, "/api/", 5) == 0)
            return serve_control(sh, c, url + 5);
        return respond_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return respond_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or POST only\n");
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return serve_page(c);
    if (strcmp(url, "/events") == 0)
        return serve_events(sh, c);
    if (strcmp(url, "/recording.eventlog") == 0)
        return serve_recording(sh, c);
    static const char *files[] = {"app.js", "style.css", "dygraph.js", "dygraph.css"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (url[0] == '/' && strcmp(url + 1, files[i]) == 0)
            return serve_asset(c, files[i]);
    return respond_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* ---- The loop thread. */

/* The server's process name on a Unix socket (SO_PEERCRED and /proc). */
static void peer_program(struct serve *s) {
    if (s->peer_looked || s->run_pid <= 0)
        return;
    s->peer_looked = true;
    char path[64], arg0[256];
    snprintf(path, sizeof path, "/proc/%d/cmdline", s->run_pid);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return;
    size_t n = fread(arg0, 1, sizeof arg0 - 1, f);
    fclose(f);
    arg0[n] = '\0';
    const char *slash = strrchr(arg0, '/');
    snprintf(s->peer_program, sizeof s->peer_program, "%s", slash ? slash + 1 : arg0);
}

static void status_of(struct serve *s, struct es_webjson_status *st) {
    peer_program(s);
    st->program = s->peer_program;
    st->pid = s->run_pid > 0 ? (uint32_t)s->run_pid : 0;
    st->state = s->state;
    st->source = s->run_source[0] ? s->run_source : s->source;
    st->error = s->error;
    st->bytes = s->ended || s->run == 0 ? s->run_bytes : s->conn->info.bytes;
    st->recording = s->header;
    st->can_control = !s->ended && s->header;
    st->run = s->run;
    st->retry = s->opt.retry;
}

/* Write what changed as the next message (or a whole state, when the tabs
 * would otherwise need too many deltas). */
static void publish(struct serve *s, bool force) {
    struct shared *sh = &s->sh;
    if (!force && s->model->events == s->last_events && s->last_state == s->state)
        return;
    s->last_events = s->model->events;
    s->last_state = s->state;
    pthread_mutex_lock(&sh->mu);
    bool need_full =
        sh->full == NULL || sh->ndeltas == MAX_DELTAS || sh->deltas_bytes > sh->full_len;
    pthread_mutex_unlock(&sh->mu);
    if (need_full)
        s->cursor.started = false;
    struct es_webjson_status st;
    status_of(s, &st);
    es_model_extend_to_now(s->model);
    struct es_webbuf b = {0};
    bool full = !s->cursor.started || s->cursor.generation != s->model->h.generation;
    es_webbuf_printf(&b, "event: %s\ndata: ", full ? "state" : "delta");
    es_webjson_state(&b, s->model, &st, &s->cursor);
    ES_WEBBUF_ADD(&b, "\n\n");
    if (b.oom) {
        /* Try again with a whole state next time. */
        es_webbuf_free(&b);
        s->cursor.started = false;
        return;
    }
    pthread_mutex_lock(&sh->mu);
    uint64_t seq = ++sh->next_seq;
    if (full) {
        free(sh->full);
        for (size_t i = 0; i < sh->ndeltas; i++)
            free(sh->deltas[i].data);
        sh->ndeltas = sh->deltas_bytes = 0;
        sh->full = b.p;
        sh->full_len = b.len;
        sh->full_seq = seq;
    } else {
        sh->deltas[sh->ndeltas++] = (struct msg){b.p, b.len};
        sh->deltas_bytes += b.len;
    }
    sh->can_control = st.can_control;
    if (!sh->rec_ended)
        sh->rec_len = s->blocks.base;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

static void on_tick(uv_timer_t *t) {
    struct serve *s = t->data;
    cut_late(&s->sh);
    publish(s, false);
}

static void on_async(uv_async_t *a) {
    struct serve *s = a->data;
    struct shared *sh = &s->sh;
    uint8_t cmds[COMMAND_QUEUE];
    pthread_mutex_lock(&sh->mu);
    unsigned n = sh->ncmds;
    memcpy(cmds, sh->cmds, n);
    sh->ncmds = 0;
    pthread_mutex_unlock(&sh->mu);
    for (unsigned i = 0; i < n; i++)
        if (!s->ended)
            es_conn_send_command(s->conn, cmds[i]);
}

static void rec_name(struct serve *s);
static int open_recording(struct serve *s);

/* --retry: a new run replaces the one shown (the page's history and
 * download start afresh; with --record FILE the earlier runs' files stay,
 * run N going to FILE.N). */
static void new_run(struct serve *s) {
    if (s->blocks.fd >= 0 && !s->blocks.finished)
        es_blocks_finish(&s->blocks);
    es_blocks_destroy(&s->blocks);
    es_blocks_init(&s->blocks);
    /* The cost notices serve asks for are not the program's. */
    s->blocks.skip_cost_notices = true;
    pthread_mutex_lock(&s->sh.mu);
    s->sh.rec_fd = -1;
    s->sh.rec_len = 0;
    s->sh.rec_ended = false;
    pthread_mutex_unlock(&s->sh.mu);
    if (s->rec_fd >= 0)
        close(s->rec_fd);
    s->rec_fd = -1;
    open_recording(s); /* on failure the download link says so; the page goes on */
    es_model_reset(s->model);
    s->cursor.started = false;
    s->error[0] = '\0';
    s->peer_program[0] = '\0';
    s->peer_looked = false;
}

static void on_header(struct es_conn *c, void *ctx) {
    struct serve *s = ctx;
    /* Reconnecting right after the program's end may reach it once more
     * on its way out: that is not a new run. */
    if (s->run > 0 && s->run_exited && c->peer_pid > 0 && c->peer_pid == s->run_pid) {
        s->ignoring = true;
        return;
    }
    if (s->run > 0)
        new_run(s);
    s->run++;
    s->ended = false;
    s->run_exited = false;
    s->run_pid = c->peer_pid;
    snprintf(s->run_source, sizeof s->run_source, "%s", c->name);
    s->header = true;
    s->state = "connected";
    es_model_header(s->model, &c->stream.header);
    es_blocks_header(&s->blocks, c->stream.header.len);
    rec_name(s);
    publish(s, true);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    struct serve *s = ctx;
    if (s->ignoring)
        return;
    es_model_event(s->model, ev);
    es_blocks_event(&s->blocks, ev, offset);
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    struct serve *s = ctx;
    if (s->ignoring || s->ended)
        return;
    if (c->stream.state == ES_STREAM_END)
        es_blocks_end_marker(&s->blocks, c->stream.offset);
    if (s->blocks.error == 0 && es_blocks_append(&s->blocks, data, n) != 0)
        fprintf(stderr, "eventlog-socket serve: cannot write the recording: %s\n",
                strerror(s->blocks.error ? s->blocks.error : ENOMEM));
}

static void rec_name(struct serve *s) {
    struct shared *sh = &s->sh;
    pthread_mutex_lock(&sh->mu);
    const char *prog = s->model->program[0] ? s->model->program
                       : s->peer_program[0] ? s->peer_program
                                            : "eventlog";
    char safe[256];
    snprintf(safe, sizeof safe, "%s", prog);
    for (char *p = safe; *p; p++)
        if (*p == '"' || *p == '/' || *p == '\\' || (unsigned char)*p < 0x20 ||
            (unsigned char)*p >= 0x7f)
            *p = '_';
    uint32_t pid = s->model->pid ? s->model->pid : (uint32_t)(s->run_pid > 0 ? s->run_pid : 0);
    if (pid)
        snprintf(sh->rec_name, sizeof sh->rec_name, "%s-%u.eventlog", safe, pid);
    else
        snprintf(sh->rec_name, sizeof sh->rec_name, "%s.eventlog", safe);
    pthread_mutex_unlock(&sh->mu);
}

static void open_conn(struct serve *s);

static void on_reconnect(uv_timer_t *t) {
    open_conn(t->data);
}

/* --retry: connect again in a moment (the program may be restarted). */
static void retry_later(struct serve *s) {
    es_conn_close(s->conn);
    s->conn_open = false;
    s->cur ^= 1;
    s->conn = &s->conns[s->cur];
    uv_timer_start(&s->reconnect, on_reconnect, RECONNECT_MS, 0);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct serve *s = ctx;
    if (s->ignoring || (s->opt.retry && (s->ended || s->run == 0))) {
        /* The exited program once more, or a session that ended before
         * its header: nothing to show; wait for the next run. */
        if (!s->ignoring && !s->said_retry) {
            fprintf(stderr, "eventlog-socket serve: %s: %s (--retry: trying again)\n", c->name,
                    c->error);
            s->said_retry = true;
        }
        s->ignoring = false;
        retry_later(s);
        return;
    }
    s->ended = true;
    s->run_bytes = c->info.bytes;
    if (how == ES_CONN_COMPLETE) {
        es_model_end(s->model);
        s->state = "exited";
        s->run_exited = true;
    } else {
        snprintf(s->error, sizeof s->error, "%s", c->error);
        s->state = "lost";
    }
    if (!s->header) {
        /* Nothing to show: no eventlog at that address. */
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, c->error);
        s->status = 2;
        uv_stop(s->loop);
        return;
    }
    int e = s->blocks.fd >= 0 ? es_blocks_finish(&s->blocks) : 0;
    struct stat sb;
    pthread_mutex_lock(&s->sh.mu);
    if (e == 0 && s->rec_fd >= 0 && fstat(s->rec_fd, &sb) == 0) {
        s->sh.rec_len = (uint64_t)sb.st_size;
        s->sh.rec_ended = true;
    }
    pthread_mutex_unlock(&s->sh.mu);
    rec_name(s);
    publish(s, true);
    fprintf(stderr, "eventlog-socket serve: %s: %s; still serving the page%s (Ctrl-C stops)\n",
            c->name, how == ES_CONN_COMPLETE ? "the program exited" : "the connection was lost",
            s->opt.retry ? ", waiting for the next run (--retry)" : "");
    if (s->opt.retry)
        retry_later(s);
}

static void on_signal(uv_signal_t *sig, int signum) {
    (void)signum;
    struct serve *s = sig->data;
    uv_stop(s->loop);
}

static void serve_usage(FILE *f) {
    fprintf(f, "usage: eventlog-socket serve ADDR [--http HOST:PORT] [--record FILE]\n"
               "                             [--connect-timeout S] [--retry]\n"
               "Serves a live web page of the program at ADDR on http://HOST:PORT/\n"
               "(default 127.0.0.1:8080; port 0 picks a free one; the URL is printed).\n"
               "Binds loopback unless another HOST is given. --record keeps the eventlog\n"
               "received (the page's download link) in FILE; otherwise in a temporary file.\n"
               "Runs until Ctrl-C, also after the program exits. --retry waits for the\n"
               "program, and after it ends for its next run, which the page then shows\n"
               "(with --record, run N is kept in FILE.N).\n");
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" into a socket address. */
static int http_address(const char *spec, struct sockaddr_storage *out, socklen_t *len,
                        bool *loopback) {
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (colon == NULL || colon[1] == '\0')
        return -1;
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof host)
        return -1;
    memcpy(host, spec, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    if (host[0] == '\0')
        snprintf(host, sizeof host, "127.0.0.1");
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 0 || port > 65535)
        return -1;
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *res;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        return -1;
    memcpy(out, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    if (res->ai_family == AF_INET)
        *loopback = (ntohl(((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr) >> 24) == 127;
    else
        *loopback = res->ai_family == AF_INET6 &&
                    IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr);
    freeaddrinfo(res);
    return 0;
}

static int open_recording(struct serve *s) {
    int fd;
    char path[600];
    if (s->rec_path != NULL) {
        if (s->run > 0)
            snprintf(path, sizeof path, "%s.%u", s->rec_path, s->run + 1);
        else
            snprintf(path, sizeof path, "%s", s->rec_path);
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } else {
        const char *dir = getenv("TMPDIR");
        snprintf(s->tmp_path, sizeof s->tmp_path, "%s/eventlog-socket-serve-XXXXXX",
                 dir && dir[0] ? dir : "/tmp");
        fd = mkstemp(s->tmp_path);
        if (fd >= 0)
            unlink(s->tmp_path);
    }
    if (fd < 0) {
        fprintf(stderr, "eventlog-socket serve: cannot create the recording %s: %s\n",
                s->rec_path ? path : s->tmp_path, strerror(errno));
        return -1;
    }
    s->rec_fd = fd;
    pthread_mutex_lock(&s->sh.mu);
    s->sh.rec_fd = fd;
    pthread_mutex_unlock(&s->sh.mu);
    es_blocks_set_fd(&s->blocks, fd);
    return 0;
}

static void open_conn(struct serve *s) {
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_bytes = on_bytes,
                                   .on_end = on_end,
                                   .ctx = s};
    s->conn = &s->conns[s->cur];
    if (es_conn_open(s->conn, s->loop, s->source, &s->opt, &cb) != 0) {
        fprintf(stderr, "eventlog-socket serve: %s\n", s->conn->error);
        s->status = 2;
        uv_stop(s->loop);
        return;
    }
    s->conn_open = true;
    /* After the first run, say nothing more of waiting on stderr. */
    if (s->run > 0)
        s->conn->said_waiting = true;
}

static void close_handle(uv_handle_t *h) {
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

int es_serve_main(int argc, char **argv) {
    static struct serve the_serve;
    struct serve *s = &the_serve;
    es_conn_default_options(&s->opt);
    s->opt.cost_notices = true;
    s->http = "127.0.0.1:8080";
    s->rec_fd = -1;
    const struct es_opt opts[] = {{"--http", NULL, ES_OPT_VALUE, &s->http, 0, NULL, NULL},
                                  {"--record", NULL, ES_OPT_VALUE, &s->rec_path, 0, NULL, NULL},
                                  {0}};
    const struct es_opts_spec spec = {.cmd = "serve",
                                      .opts = opts,
                                      .conn = &s->opt,
                                      .usage = serve_usage,
                                      .unknown = "unknown option or missing value: %s",
                                      .pos = &s->source,
                                      .npos = 1,
                                      .required = 1};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    struct sockaddr_storage sa;
    socklen_t salen;
    bool loopback = false;
    if (http_address(s->http, &sa, &salen, &loopback) != 0) {
        fprintf(stderr, "eventlog-socket serve: --http: not HOST:PORT: %s\n", s->http);
        return 2;
    }
    s->model = malloc(sizeof *s->model);
    if (s->model == NULL) {
        fprintf(stderr, "eventlog-socket serve: out of memory\n");
        return 2;
    }
    es_model_init(s->model);
    es_blocks_init(&s->blocks);
    s->blocks.skip_cost_notices = true;
    s->state = "connecting";
    s->loop = uv_default_loop();

    struct shared *sh = &s->sh;
    pthread_mutex_init(&sh->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&sh->cv, &ca);
    pthread_condattr_destroy(&ca);
    sh->rec_fd = -1;
    sh->loopback = loopback;
    snprintf(sh->rec_name, sizeof sh->rec_name, "eventlog.eventlog");
    uv_async_init(s->loop, &sh->async, on_async);
    sh->async.data = s;
    if (open_recording(s) != 0) {
        s->status = 2;
        goto out_early;
    }

    s->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
        0, NULL, NULL, on_request, sh, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)HTTP_MEMORY_LIMIT, MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_MAX_PER_IP, MHD_OPTION_THREAD_STACK_SIZE,
        (size_t)HTTP_THREAD_STACK, MHD_OPTION_NOTIFY_CONNECTION, on_connection, sh,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, sh, MHD_OPTION_END);
    if (s->daemon == NULL) {
        fprintf(stderr, "eventlog-socket serve: cannot serve HTTP on %s: %s\n", s->http,
                strerror(errno ? errno : EADDRINUSE));
        s->status = 2;
        goto out_early;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    sh->port = di ? di->port : 0;
    char host[300];
    const char *colon = strrchr(s->http, ':');
    snprintf(host, sizeof host, "%.*s", (int)(colon - s->http), s->http);
    printf("eventlog-socket serve: http://%s:%u/\n", host[0] ? host : "127.0.0.1", sh->port);
    fflush(stdout);

    s->conn = &s->conns[0];
    open_conn(s);
    if (s->status != 0)
        goto out;
    uv_timer_init(s->loop, &s->reconnect);
    s->reconnect.data = s;
    uv_timer_init(s->loop, &s->tick);
    s->tick.data = s;
    uv_timer_start(&s->tick, on_tick, TICK_MS, TICK_MS);
    uv_signal_init(s->loop, &s->sigint);
    uv_signal_init(s->loop, &s->sigterm);
    s->sigint.data = s->sigterm.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    publish(s, true);
    uv_run(s->loop, UV_RUN_DEFAULT);
    if (s->conn_open)
        es_conn_close(s->conn);
    close_handle((uv_handle_t *)&s->reconnect);
    close_handle((uv_handle_t *)&s->tick);
    close_handle((uv_handle_t *)&s->sigint);
    close_handle((uv_handle_t *)&s->sigterm);

out:
    /* Wake every event stream so its thread ends, then stop the server. */
    pthread_mutex_lock(&sh->mu);
    sh->closing = true;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    MHD_stop_daemon(s->daemon);
out_early:
    close_handle((uv_handle_t *)&sh->async);
    uv_run(s->loop, UV_RUN_DEFAULT);
    uv_loop_close(s->loop);
    free(sh->full);
    for (size_t i = 0; i < sh->ndeltas; i++)
        free(sh->deltas[i].data);
    if (s->rec_fd >= 0) {
        if (!s->ended && s->header)
            es_blocks_finish(&s->blocks);
        close(s->rec_fd);
    }
    es_blocks_destroy(&s->blocks);
    es_model_destroy(s->model);
    free(s->model);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
    return s->status;
}

/* ---- report. */

struct report {
    struct es_model *model;
    struct es_conn conn;
    enum es_conn_end how;
    bool header;
};

static void rep_header(struct es_conn *c, void *ctx) {
    struct report *r = ctx;
    r->header = true;
    es_model_header(r->model, &c->stream.header);
}

static void rep_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    es_model_event(((struct report *)ctx)->model, ev);
}

static void rep_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct report *r = ctx;
    (void)c;
    r->how = how;
    if (how == ES_CONN_COMPLETE)
        es_model_end(r->model);
}

static void report_usage(FILE *f) {
    fprintf(f, "usage: eventlog-socket report FILE|ADDR -o OUT.html\n"
               "Writes the web page of `serve` for a recorded eventlog (or a program, up to\n"
               "its exit) into one HTML file with its scripts and data inlined: it opens\n"
               "from disk, without a server or the internet.\n");
}

int es_report_main(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    struct es_conn_options opt;
    es_conn_default_options(&opt);
    opt.allow_file = true;
    const struct es_opt opts[] = {{"-o", NULL, ES_OPT_VALUE, &out, 0, NULL, NULL}, {0}};
    const struct es_opts_spec spec = {.cmd = "report",
                                      .opts = opts,
                                      .conn = &opt,
                                      .usage = report_usage,
                                      .unknown = "unknown option or missing value: %s",
                                      .pos = &in,
                                      .npos = 1,
                                      .too_many = "one input only (%s, then %s)",
                                      .pos_first = true};
    int parsed = es_opts_parse(&spec, argc, argv);
    if (parsed >= 0)
        return parsed;
    if (in == NULL || out == NULL) {
        report_usage(stderr);
        return 2;
    }
    struct report r = {.how = ES_CONN_FAILED};
    r.model = malloc(sizeof *r.model);
    if (r.model == NULL) {
        fprintf(stderr, "eventlog-socket report: out of memory\n");
        return 2;
    }
    es_model_init(r.model);
    uv_loop_t *loop = uv_default_loop();
    struct es_conn_callbacks cb = {
        .on_header = rep_header, .on_event = rep_event, .on_end = rep_end, .ctx = &r};
    int status = 0;
    if (es_conn_open(&r.conn, loop, in, &opt, &cb) != 0) {
        fprintf(stderr, "eventlog-socket report: %s\n", r.conn.error);
        status = 2;
    } else {
        uv_run(loop, UV_RUN_DEFAULT);
        es_conn_close(&r.conn);
        uv_run(loop, UV_RUN_DEFAULT);
        if (!r.header) {
            fprintf(stderr, "eventlog-socket: %s: %s\n", r.conn.name, r.conn.error);
            status = 2;
        }
    }
    uv_loop_close(loop);
    if (status == 0) {
        struct es_webjson_status st = {
            .state = r.how == ES_CONN_COMPLETE ? "exited" : "file",
            .source = r.conn.name,
            .error = r.how == ES_CONN_COMPLETE ? "" : r.conn.error,
            .bytes = r.conn.info.bytes,
        };
        struct es_webbuf json = {0}, html = {0};
        es_model_extend_to_now(r.model);
        es_webjson_state(&json, r.model, &st, NULL);
        page(&html, emit_inline, &json);
        FILE *f = json.oom || html.oom ? NULL : fopen(out, "wb");
        if (f == NULL || fwrite(html.p, 1, html.len, f) != html.len || fclose(f) != 0) {
            fprintf(stderr, "eventlog-socket report: cannot write %s: %s\n", out,
                    json.oom || html.oom ? "out of memory" : strerror(errno));
            status = 2;
        } else {
            fprintf(stderr, "eventlog-socket report: %s: %llu censuses, %llu GCs -> %s%s\n",
                    r.conn.name, (unsigned long long)r.model->censuses,
                    (unsigned long long)r.model->gcs, out,
                    r.how == ES_CONN_COMPLETE ? "" : " (the eventlog was cut)");
        }
        es_webbuf_free(&json);
        es_webbuf_free(&html);
    }
    es_model_destroy(r.model);
    free(r.model);
    return status;
}
