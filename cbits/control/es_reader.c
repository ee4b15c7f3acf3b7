/* SPDX-License-Identifier: BSD-3-Clause */
/* What clients write (es_reader.h). */
#include "es_reader.h"

#include "base/es_log.h"
#include "base/es_peer.h"
#include "es_registry.h"
#include "format/es_classes.h"
#include "format/es_commands.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

/* The reader of `c` (es_reader_start set it). */
static struct es_reader *reader_of(const struct es_client *c) {
    return es_client_reader(c);
}

/* A command the connection keeps to itself (its row's target). */
static void for_connection(struct es_reader *r, struct es_client *c,
                           const struct es_commands_row *row) {
    switch (row->target) {
    case ES_COMMANDS_TO_COST_NOTICES:
        es_client_want_cost_notices(c);
        break;
    case ES_COMMANDS_TO_WINDOW:
        es_fanout_window(r->fan, c);
        break;
    case ES_COMMANDS_TO_LOSSLESS:
        es_lossless_request(r->lossless, c);
        break;
    case ES_COMMANDS_TO_CLASSES_REPORT: {
        char text[512];
        es_command_classes_text(r->command, text, sizeof text);
        es_fanout_tell(r->fan, c, text);
        break;
    }
    default:
        assert(false && "a connection's command with a program's target");
        break;
    }
}

/* Who `c` is, for a log line: its user where the kernel tells, and its
 * address over TCP. */
static void describe(struct es_client *c, char *buf, size_t size) {
    int fd = es_client_fd(c);
    struct sockaddr_storage peer, local;
    socklen_t pl = sizeof peer, ll = sizeof local;
    uid_t uid;
    if (fd < 0 || getpeername(fd, (struct sockaddr *)&peer, &pl) != 0) {
        snprintf(buf, size, "a client that has gone");
    } else if (peer.ss_family == AF_UNIX) {
        if (es_peer_unix_uid(fd, &uid) == 0)
            snprintf(buf, size, "a client of the Unix socket (uid %u)", (unsigned)uid);
        else
            snprintf(buf, size, "a client of the Unix socket (user unknown)");
    } else {
        char host[INET6_ADDRSTRLEN] = "?";
        const void *a = peer.ss_family == AF_INET6
                            ? (const void *)&((struct sockaddr_in6 *)&peer)->sin6_addr
                            : (const void *)&((struct sockaddr_in *)&peer)->sin_addr;
        inet_ntop(peer.ss_family, a, host, sizeof host);
        bool known =
            getsockname(fd, (struct sockaddr *)&local, &ll) == 0 &&
            es_peer_is_loopback((struct sockaddr *)&peer) &&
            es_peer_uid(NULL, (struct sockaddr *)&peer, (struct sockaddr *)&local, &uid) == 0;
        if (known)
            snprintf(buf, size, "a TCP client from %s (uid %u)", host, (unsigned)uid);
        else
            snprintf(buf, size, "a TCP client from %s", host);
    }
}

/* A switch of event classes changes what every client receives: the
 * program says who asked for it (after it acted, or while it waits for
 * the rate limit). */
static void log_switch(struct es_client *c, uint8_t cmd) {
    char who[160], classes[128];
    describe(c, who, sizeof who);
    es_classes_words(classes, sizeof classes, cmd & EVENTLOG_SOCKET_EVENTS_ALL);
    es_log("%s asks to switch event classes %s: %s", who,
           (cmd & EVENTLOG_SOCKET_UPSTREAM_EVENTS_ON) != 0 ? "on" : "off", classes);
}

/* One frame from `c`, to the module it is for. */
static void dispatch(struct es_reader *r, struct es_client *c, const struct es_control_found *f) {
    if (f->kind == ES_CONTROL_CUSTOM) {
        if (!es_registry_dispatch(f->ns, f->ns_len, f->id))
            es_client_frame_ignored(c);
        return;
    }
    assert(f->kind == ES_CONTROL_COMMAND);
    const struct es_commands_row *row = es_commands_find(f->cmd);
    assert(row != NULL); /* the parser returns known commands only */
    if (row->scope == ES_COMMANDS_CONNECTION) {
        for_connection(r, c, row);
        return;
    }
    uint64_t was = es_command_folded(r->command);
    es_command_offer(r->command, f->cmd);
    /* Once per switch that acts or waits, not per one folded into a
     * waiting one (a flood of them is thousands a buffer). */
    if (row->target == ES_COMMANDS_TO_EVENT_CLASSES && es_command_folded(r->command) == was)
        log_switch(c, f->cmd);
}

/* Every frame in buf[0..len), in order, while the client is not closing
 * (what a closing connection asks is moot). */
static void take_frames(struct es_reader *r, struct es_client *c, const uint8_t *buf, size_t len) {
    while (len > 0 && !es_client_is(c, ES_CLIENT_CLOSING)) {
        struct es_control_found f;
        size_t n = es_client_next_frame(c, buf, len, &f);
        buf += n;
        len -= n;
        if (f.kind != ES_CONTROL_NONE)
            dispatch(r, c, &f);
    }
}

/* Requests folded so far into one of the same kind still waiting. */
static uint64_t folded(const struct es_reader *r) {
    return es_command_folded(r->command) + es_registry_folded();
}

static void on_resume(uv_timer_t *t);

/* Past its budget, `c` is not read until its second is over. */
static void pause_reading(struct es_reader *r, struct es_client *c) {
    uv_read_stop(es_client_stream(c));
    es_client_set_flags(c, ES_CLIENT_READ_PAUSED, true);
    if (!uv_is_active((uv_handle_t *)&r->resume))
        uv_timer_start(&r->resume, on_resume, 100, 100);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    struct es_reader *r = reader_of(h->data);
    *buf = uv_buf_init((char *)r->buf, sizeof r->buf);
}

/* What `c` wrote: its frames, then its budget. */
static void got_bytes(struct es_reader *r, struct es_client *c, const uint8_t *buf, size_t n) {
    uint64_t was = folded(r);
    take_frames(r, c, buf, n);
    uint64_t now = uv_now(r->loop);
    /* It has said what it wanted first: its stream may begin. */
    es_client_end_hold(c, now, true);
    size_t bytes = es_client_count_read(c, now, n);
    if (folded(r) != was) {
        bytes = ES_READER_BUDGET + 1;
        es_client_restart_reads(c, now, bytes); /* a whole window from now */
    }
    if (bytes > ES_READER_BUDGET && !es_client_is(c, ES_CLIENT_CLOSING))
        pause_reading(r, c);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    struct es_client *c = stream->data;
    struct es_reader *r = reader_of(c);
    if (nread > 0) {
        got_bytes(r, c, (const uint8_t *)buf->base, (size_t)nread);
    } else if (nread == UV_EOF) {
        /* The client has nothing more to say; it may still be reading, as
         * `nc` does after its standard input ends, or be gone. */
        es_client_set_flags(c, ES_CLIENT_READ_EOF, true);
        uv_read_stop(stream);
        if (!es_client_check_peer(c, uv_now(r->loop), 0))
            es_hangup_watch(r->hangup); /* still there: look again later */
        es_client_end_hold(c, 0, true); /* nor will it ask for the window */
    } else if (nread < 0) {
        es_client_close(c);
    }
}

/* Resume a client paused for its budget once its window has ended;
 * returns whether it is still paused. */
static bool resume(struct es_client *c, uint64_t now_ms) {
    if (!es_client_is(c, ES_CLIENT_READ_PAUSED) ||
        es_client_is_any(c, ES_CLIENT_CLOSING | ES_CLIENT_READ_EOF))
        return false;
    if (!es_client_reads_due(c, now_ms))
        return true;
    es_client_set_flags(c, ES_CLIENT_READ_PAUSED, false);
    es_client_restart_reads(c, now_ms, 0);
    if (uv_read_start(es_client_stream(c), on_alloc, on_read) != 0)
        es_client_close(c);
    return false;
}

static void on_resume(uv_timer_t *t) {
    struct es_reader *r = t->data;
    bool any = false;
    uint64_t now = uv_now(r->loop);
    es_fanout_each(r->fan, c, next) any |= resume(c, now);
    if (!any)
        uv_timer_stop(&r->resume);
}

void es_reader_open(struct es_reader *r, uv_loop_t *loop, struct es_command *command,
                    struct es_fanout *fan, struct es_lossless *lossless, struct es_hangup *hangup) {
    r->loop = loop;
    r->command = command;
    r->fan = fan;
    r->lossless = lossless;
    r->hangup = hangup;
    uv_timer_init(loop, &r->resume); /* cannot fail */
    r->resume.data = r;
    r->open = true;
}

void es_reader_close(struct es_reader *r, uv_close_cb cb) {
    if (!r->open)
        return;
    r->open = false;
    uv_close((uv_handle_t *)&r->resume, cb);
}

int es_reader_start(struct es_reader *r, struct es_client *c) {
    assert(r->open);
    if (es_client_is(c, ES_CLIENT_CLOSING))
        return 0;
    es_client_set_reader(c, r);
    int err = uv_read_start(es_client_stream(c), on_alloc, on_read);
    if (err != 0)
        es_client_close(c);
    return err;
}
