/* SPDX-License-Identifier: BSD-3-Clause */
/* A source of eventlog bytes (client/source/conn.h), in two halves:
 *   - the stream (es_conn_init_parser, es_conn_feed, es_conn_finish): the
 *     stream reader's callbacks, what the connection notes on its way (the
 *     program's arguments, pid and GHC, drop and wait notices; struct
 *     es_conn_info), and the end judged from the bytes. No I/O: the tests
 *     and fuzz targets feed bytes to it directly;
 *   - the I/O on the loop (es_conn_open, es_conn_send, es_conn_close):
 *     connecting to a Unix or TCP address with a timeout and --retry's
 *     backoff, or reading a file; each read fed to the stream, the end of
 *     the source, control frames sent, the server's pid.
 * Thread ownership: the connection's owner (the loop thread). */

/* SO_PEERCRED's struct ucred. */
#define _GNU_SOURCE
#include "conn.h"

#include "base/es_peer.h"
#include "format/es_control.h"
#include "format/es_notice_text.h"
#include "format/es_payload.h"
#include "format/es_utf8.h"
#include "peerpid.h"
#include "units.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- The stream ---- */

/* `n` bytes of payload text as a NUL-terminated string of at most size-1
 * bytes, by the command's one rule for text (format/es_utf8.h): a byte
 * that starts no UTF-8 character is U+FFFD, and the text is cut between
 * characters. Returns its length. */
static size_t copy_text(char *dst, size_t size, const uint8_t *p, size_t n) {
    return es_utf8_copy(dst, size, p, n);
}

/* The length copy_text gives `n` bytes of payload text when it has room. */
static size_t text_len(const uint8_t *p, size_t n) {
    size_t len = 0;
    for (size_t i = 0; i < n && p[i] != '\0';) {
        size_t k = es_utf8_len(p + i, n - i);
        len += k ? k : ES_UTF8_REPLACEMENT_LEN;
        i += k ? k : 1;
    }
    return len;
}

/* argv[0], `n` bytes at `p`: the program's name is its basename. */
static void note_name(struct es_conn_info *in, const uint8_t *p, size_t n) {
    const uint8_t *base = es_payload_basename(p, n);
    copy_text(in->program, sizeof in->program, base, (size_t)(p + n - base));
}

/* PROGRAM_ARGS: u32 capset, then the arguments, each ended by NUL. */
static void note_args(struct es_conn_info *in, const struct es_event *ev) {
    struct es_payload r = es_payload_of(ev);
    es_payload_skip(&r, 4); /* capset */
    if (es_payload_left(&r) == 0)
        return;
    /* One line: the arguments with a space between them, the empty ones
     * at the end dropped, each as text (copy_text); an argument that does
     * not fit whole is cut between characters, and ends the line. */
    size_t out = 0;
    bool first = true;
    in->args[0] = '\0';
    while (es_payload_left(&r) > 0 && out + 1 < sizeof in->args) {
        size_t len;
        const uint8_t *s = es_payload_str(&r, &len);
        if (first)
            note_name(in, s, len);
        if (!first)
            in->args[out++] = ' ';
        size_t put = copy_text(in->args + out, sizeof in->args - out, s, len);
        out += put;
        first = false;
        if (put < text_len(s, len))
            break; /* cut: what follows would read as whole arguments */
    }
    while (out > 0 && in->args[out - 1] == ' ')
        out--;
    in->args[out] = '\0';
    in->have_args = true;
}

/* The event types note_event looks into: one load per event, and the
 * reader's tap (es_stream_tap). */
static const bool noted[ES_MAX_EVENT_TYPES] = {
    [ES_EVENT_PROGRAM_ARGS] = true,           [ES_EVENT_OSPROCESS_PID] = true,
    [ES_EVENT_RTS_IDENTIFIER] = true,         [ES_EVENT_HEAP_PROF_BEGIN] = true,
    [ES_EVENT_HEAP_PROF_SAMPLE_BEGIN] = true, [ES_EVENT_USER_MSG] = true,
};

/* The events note_event looks into, other than messages. */
static void note_program(struct es_conn_info *in, const struct es_event *ev) {
    struct es_payload r = es_payload_of(ev);
    switch (ev->type) {
    case ES_EVENT_PROGRAM_ARGS:
        if (!in->have_args)
            note_args(in, ev);
        break;
    case ES_EVENT_OSPROCESS_PID: { /* u32 capset, u32 pid */
        es_payload_skip(&r, 4);
        uint32_t pid = es_payload_u32(&r);
        if (es_payload_ok(&r) && !in->have_pid) {
            in->pid = pid;
            in->have_pid = true;
        }
        break;
    }
    case ES_EVENT_RTS_IDENTIFIER: { /* u32 capset, the text (no NUL) */
        es_payload_skip(&r, 4);
        size_t n;
        const uint8_t *s = es_payload_rest(&r, &n);
        if (n > 0)
            copy_text(in->rts_ident, sizeof in->rts_ident, s, n);
        break;
    }
    case ES_EVENT_HEAP_PROF_BEGIN: { /* u8 profile id, u64 period, u32 breakdown, ... */
        in->heap_prof = true;
        es_payload_skip(&r, 1);
        uint64_t period = es_payload_u64(&r);
        if (es_payload_ok(&r))
            in->heap_period_ns = period;
        uint32_t breakdown = es_payload_u32(&r);
        if (es_payload_ok(&r))
            in->heap_breakdown = breakdown;
        break;
    }
    default:
        break;
    }
}

/* A drop notice (read as the model reads it, client/model/notes.c):
 * counted, with where it is. False for any other message. */
static bool note_drop(struct es_conn_info *in, uint64_t t, const uint8_t *p, size_t n) {
    struct es_notice_read r;
    es_notice_text_parse(p, n, &r);
    if (r.kind != ES_NOTICE_DROP)
        return false;
    if (in->drop_notices++ == 0 || t < in->first_drop_time)
        in->first_drop_time = t;
    if (t > in->last_drop_time)
        in->last_drop_time = t;
    in->dropped_chunks += r.chunks;
    in->dropped_mib += r.mib;
    return true;
}

int es_conn_gaps_text(const struct es_conn_info *in, char *buf, size_t size) {
    if (in->drop_notices == 0)
        return snprintf(buf, size, "%s", "");
    char where[80];
    if (in->drop_notices == 1)
        snprintf(where, sizeof where, "at %.3f s", (double)in->first_drop_time / 1e9);
    else
        snprintf(where, sizeof where, "the first at %.3f s, the last at %.3f s",
                 (double)in->first_drop_time / 1e9, (double)in->last_drop_time / 1e9);
    return snprintf(
        buf, size, "with gaps: %llu chunk%s (%.1f MiB) missing in %llu drop notice%s, %s",
        (unsigned long long)in->dropped_chunks, in->dropped_chunks == 1 ? "" : "s", in->dropped_mib,
        (unsigned long long)in->drop_notices, in->drop_notices == 1 ? "" : "s", where);
}

void es_conn_complete_words(const struct es_conn_info *in, char *buf, size_t size) {
    char gaps[200];
    es_conn_gaps_text(in, gaps, sizeof gaps);
    snprintf(buf, size, "%s%s the program's end marker arrived", gaps[0] ? gaps : "complete",
             gaps[0] ? ";" : ",");
}

void es_conn_add_gaps(const struct es_conn_info *in, char *buf, size_t size) {
    size_t n = strnlen(buf, size);
    if (in->drop_notices == 0 || n + 1 >= size)
        return;
    char gaps[200];
    es_conn_gaps_text(in, gaps, sizeof gaps);
    snprintf(buf + n, size - n, "; %s", gaps);
}

const char *es_conn_signal_name(int signum) {
    return signum == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)";
}

void es_conn_signal_words(const struct es_conn_info *in, int signum, char *buf, size_t size) {
    snprintf(buf, size, "%s", es_conn_signal_name(signum));
    es_conn_add_gaps(in, buf, size);
}

int es_conn_end_words(const struct es_conn *c, enum es_conn_end how, const char *cut_why, char *buf,
                      size_t size) {
    switch (how) {
    case ES_CONN_COMPLETE:
        if (cut_why == NULL) {
            es_conn_complete_words(&c->info, buf, size);
            return 0;
        }
        /* A recording whose end marker record added (client/source/blocks.h). */
        snprintf(buf, size, "cut: the recording was cut (%s)", cut_why);
        es_conn_add_gaps(&c->info, buf, size);
        return 1;
    case ES_CONN_CUT:
        snprintf(buf, size, "cut: the stream ended without its end marker (%s)", c->error);
        es_conn_add_gaps(&c->info, buf, size);
        return 1;
    case ES_CONN_FAILED:
        break;
    }
    snprintf(buf, size, "%s", c->error);
    return 2;
}

/* The answer to a window request; the window's blocks begin where the
 * notice's block ends. */
static void note_window(struct es_conn_info *in, const uint8_t *p, size_t n) {
    struct es_notice_read r;
    es_notice_text_parse(p, n, &r);
    if (r.kind == ES_NOTICE_WINDOW && in->window == 0) {
        in->window = 1;
        in->window_start = in->block_end;
        in->window_end = in->block_end + r.bytes;
        in->window_blocks = r.chunks;
        in->window_from_s = r.from_s;
        in->window_to_s = r.to_s;
    } else if (r.kind == ES_NOTICE_WINDOW_REFUSED && in->window == 0) {
        in->window = -1;
        snprintf(in->window_why, sizeof in->window_why, "%s", r.why);
    }
}

static void note_event(struct es_conn_info *in, const struct es_event *ev) {
    const uint8_t *p = ev->payload;
    size_t n = ev->payload_len;
    if (ev->type >= ES_MAX_EVENT_TYPES || !noted[ev->type])
        return;
    switch (ev->type) {
    case ES_EVENT_PROGRAM_ARGS:
    case ES_EVENT_OSPROCESS_PID:
    case ES_EVENT_RTS_IDENTIFIER:
    case ES_EVENT_HEAP_PROF_BEGIN:
        note_program(in, ev);
        break;
    case ES_EVENT_HEAP_PROF_SAMPLE_BEGIN:
        in->heap_samples++;
        if (ev->time > in->last_sample_time)
            in->last_sample_time = ev->time;
        break;
    case ES_EVENT_USER_MSG: {
        static const char lossless[] = "eventlog-socket: lossless delivery ";
        static const char cut[] = ES_NOTICE_PREFIX ES_NOTICE_CUT_WORDS;
        if (note_drop(in, ev->time, p, n))
            break;
        if (n > sizeof lossless - 1 && memcmp(p, lossless, sizeof lossless - 1) == 0) {
            copy_text(in->lossless_notice, sizeof in->lossless_notice, p, n);
            in->lossless_notices++;
        } else if (n > sizeof cut - 1 && memcmp(p, cut, sizeof cut - 1) == 0) {
            copy_text(in->cut_notice, sizeof in->cut_notice, p + sizeof cut - 1,
                      n - (sizeof cut - 1));
        } else if (in->window == 0) {
            note_window(in, p, n);
        }
        break;
    }
    default:
        break;
    }
}

static void stream_header(const struct es_header *hdr, void *ctx) {
    (void)hdr;
    struct es_conn *c = ctx;
    if (c->cb.on_header)
        c->cb.on_header(c, c->cb.ctx);
}

/* A run of events no one needs one by one (es_stream_callbacks.want):
 * none of the types note_event looks into, nor a block marker. */
static void stream_skip(const struct es_stream_skip *run, void *ctx) {
    struct es_conn *c = ctx;
    if (!c->ended)
        c->cb.on_skip(c, run, c->cb.ctx);
}

static void stream_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct es_conn *c = ctx;
    if (ev->type == ES_EVENT_BLOCK_MARKER && ev->payload_len >= 4)
        c->info.block_end = c->stream.offset + ev->offset + es_be32(ev->payload);
    note_event(&c->info, ev);
    if (c->ended)
        return; /* closed by an earlier callback of this same read */
    /* The reader's `offset` is the stream offset of the buffer the event's
     * offset is relative to (its pending bytes, or the new input). */
    if (c->cb.on_event)
        c->cb.on_event(c, ev, c->stream.offset + ev->offset, c->cb.ctx);
}

/* The reader calls the consumer itself (es_conn_callbacks.on_stream_event):
 * the source sees only the types it notes, first. */
static void stream_tap(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct es_conn *c = ctx;
    note_event(&c->info, ev);
}

/* A fresh stream reader; skimming when the callbacks ask for it: the
 * events of their `want` and of the types struct es_conn_info is made of
 * one by one, the rest in runs. */
static void stream_setup(struct es_conn *c) {
    es_stream_init(&c->stream);
    bool direct = c->cb.on_stream_event != NULL;
    if (direct)
        es_stream_tap(&c->stream, noted, stream_tap);
    es_stream_skip_fn skip = direct ? c->cb.on_stream_skip : c->cb.on_skip ? stream_skip : NULL;
    if (c->cb.want == NULL || skip == NULL)
        return;
    for (unsigned t = 0; t < ES_MAX_EVENT_TYPES; t++)
        c->want[t] = c->cb.want[t] || noted[t];
    c->want[ES_EVENT_BLOCK_MARKER] = true;
    es_stream_skim(&c->stream, c->want, c->cb.window, skip);
}

void es_conn_skim_window(struct es_conn *c, const uint64_t *window) {
    c->cb.window = window;
    es_stream_window(&c->stream, window);
}

void es_conn_reset_parser(struct es_conn *c) {
    es_stream_destroy(&c->stream);
    stream_setup(c);
    memset(&c->info, 0, sizeof c->info);
}

void es_conn_init_parser(struct es_conn *c, const struct es_conn_callbacks *cb) {
    memset(c, 0, sizeof *c);
    if (cb)
        c->cb = *cb;
    c->file_fd = -1;
    stream_setup(c);
}

void es_conn_destroy_parser(struct es_conn *c) {
    es_stream_destroy(&c->stream);
}

int es_conn_feed(struct es_conn *c, const uint8_t *data, size_t n) {
    bool in_header = c->stream.state == ES_STREAM_HEADER;
    struct es_stream_callbacks scb = {
        .on_header = stream_header, .on_event = stream_event, .ctx = c};
    bool direct = c->cb.on_stream_event != NULL;
    if (direct) {
        scb.on_event = c->cb.on_stream_event;
        scb.ctx = c->cb.ctx;
        scb.owner_ctx = c;
    }
    c->info.bytes += n;
    /* A callback may close the connection: the reader is freed only once
     * it has returned (es_conn_close). */
    c->feeding = true;
    int r = es_stream_feed(&c->stream, data, n, &scb);
    /* The reader counts the events and keeps the latest time. */
    c->info.events = c->stream.events;
    if (c->stream.latest_time > c->info.latest_time)
        c->info.latest_time = c->stream.latest_time;
    /* The bytes go to on_bytes even when the parse failed in them: the
     * events before the fault were reported, and a whole-block writer
     * keeps what they complete. */
    if (r != -ENOMEM && c->cb.on_bytes && !c->ended)
        c->cb.on_bytes(c, data, n, c->cb.ctx);
    c->feeding = false;
    if (c->destroy_pending) {
        c->destroy_pending = false;
        es_conn_destroy_parser(c);
    }
    if (r == -ENOMEM) {
        snprintf(c->error, sizeof c->error, "out of memory");
        return -1;
    }
    if (r != 0) {
        if (in_header && c->stream.state == ES_STREAM_ERROR && c->stream.error_offset == 0)
            snprintf(c->error, sizeof c->error, "%s: the first bytes are not a GHC eventlog header",
                     c->is_file ? "not an eventlog" : "not an eventlog-socket server");
        else
            snprintf(c->error, sizeof c->error, "malformed eventlog at byte %llu: %s",
                     (unsigned long long)c->stream.error_offset, c->stream.error);
        return -1;
    }
    return 0;
}

enum es_conn_end es_conn_finish(struct es_conn *c) {
    int r = es_stream_finish(&c->stream);
    if (r == 0)
        return ES_CONN_COMPLETE;
    if (c->stream.state == ES_STREAM_HEADER) {
        if (c->is_file)
            snprintf(c->error, sizeof c->error, "%s",
                     c->info.bytes == 0 ? "an empty file, not an eventlog"
                                        : "not an eventlog: the file ends inside its header");
        else
            snprintf(c->error, sizeof c->error, "%s before a whole eventlog header arrived",
                     c->info.bytes == 0 ? "the stream ended" : "the stream was cut");
        return ES_CONN_FAILED;
    }
    if (r == -EINVAL)
        return ES_CONN_FAILED; /* c->error was set by es_conn_feed */
    snprintf(c->error, sizeof c->error, "%s", c->stream.error);
    return ES_CONN_CUT;
}

/* ---- The options, and the I/O ---- */

/* Reads are consumed before the next one starts, so one buffer serves
 * every connection and file of the process. */
#define READ_SIZE ((size_t)1 << 20)
static uint8_t read_buf[READ_SIZE];

/* How long --retry waits between attempts. */
#define RETRY_MS 100

struct es_conn_attempt {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } h;
    uv_connect_t req;
    struct es_conn *c; /* NULL once the connection has let go of it */
    bool connected;
    bool got_bytes;
};

void es_conn_default_options(struct es_conn_options *o) {
    memset(o, 0, sizeof *o);
    o->connect_timeout = 5.0;
}

int es_conn_parse_option(struct es_conn_options *o, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    if (strcmp(a, "--retry") == 0) {
        o->retry = true;
        return 1;
    }
    if (strcmp(a, "--connect-timeout") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr,
                    "eventlog-socket: --connect-timeout needs a duration (" ES_UNITS_GRAMMAR ")\n");
            return -1;
        }
        if (!es_units_seconds(argv[*i + 1], 86400, false, &o->connect_timeout)) {
            fprintf(stderr,
                    "eventlog-socket: --connect-timeout %s: not a duration above 0 and up to a day "
                    "(" ES_UNITS_GRAMMAR ")\n",
                    argv[*i + 1]);
            return -1;
        }
        ++*i;
        return 1;
    }
    return 0;
}

/* ---- I/O on the loop ---- */

static void start_attempt(struct es_conn *c);

static void free_attempt(uv_handle_t *h) {
    free(h->data);
}

static void drop_attempt(struct es_conn *c) {
    struct es_conn_attempt *a = c->attempt;
    if (a == NULL)
        return;
    c->attempt = NULL;
    a->c = NULL;
    if (!uv_is_closing(&a->h.handle))
        uv_close(&a->h.handle, free_attempt);
}

static void end(struct es_conn *c, enum es_conn_end how) {
    if (c->ended)
        return;
    c->ended = true;
    if (c->timer_open)
        uv_timer_stop(&c->timer);
    if (c->idle_open)
        uv_idle_stop(&c->idle);
    drop_attempt(c);
    if (c->cb.on_end)
        c->cb.on_end(c, how, c->cb.ctx);
}

static void fail(struct es_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct es_conn *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
    end(c, ES_CONN_FAILED);
}

static void on_retry_timer(uv_timer_t *t) {
    start_attempt(t->data);
}

/* The pause before the next attempt: RETRY_MS, doubled after each refusal
 * from the same socket file (or from none) up to opt.retry_max_ms, and
 * RETRY_MS again once another file is at the path (a program started
 * again; seen when the pause ends, so within retry_max_ms). */
static unsigned next_retry_ms(struct es_conn *c) {
    if (c->opt.retry_max_ms <= RETRY_MS)
        return RETRY_MS;
    uint64_t id[4] = {0, 0, 0, 0};
    struct stat st;
    if (c->is_unix && stat(c->addr.path, &st) == 0) {
        id[0] = (uint64_t)st.st_dev;
        id[1] = (uint64_t)st.st_ino;
        id[2] = (uint64_t)st.st_mtim.tv_sec;
        id[3] = (uint64_t)st.st_mtim.tv_nsec;
    }
    if (c->retry_ms == 0 || memcmp(id, c->retry_file, sizeof id) != 0) {
        memcpy(c->retry_file, id, sizeof id);
        c->retry_ms = RETRY_MS;
    } else if (c->retry_ms < c->opt.retry_max_ms) {
        c->retry_ms = c->retry_ms * 2 < c->opt.retry_max_ms ? c->retry_ms * 2 : c->opt.retry_max_ms;
    }
    return c->retry_ms;
}

static void retry_later(struct es_conn *c) {
    drop_attempt(c);
    /* The stream reader starts afresh with the next connection. */
    es_conn_reset_parser(c);
    if (!c->said_waiting && !c->opt.quiet && isatty(2)) {
        fprintf(stderr, "eventlog-socket: waiting for %s (--retry)\n", c->name);
        c->said_waiting = true;
    }
    uv_timer_stop(&c->timer);
    uv_timer_start(&c->timer, on_retry_timer, next_retry_ms(c), 0);
}

static void on_timer(uv_timer_t *t) {
    struct es_conn *c = t->data;
    struct es_conn_attempt *a = c->attempt;
    char secs[32];
    snprintf(secs, sizeof secs, "%g", c->opt.connect_timeout);
    if (a != NULL && a->connected)
        fail(c,
             "connected, but no eventlog header arrived within %s s: not an eventlog-socket "
             "server, or a program that is stuck (--connect-timeout)",
             secs);
    else
        fail(c, "could not connect within %s s (--connect-timeout)", secs);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)h;
    (void)suggested;
    *buf = uv_buf_init((char *)read_buf, READ_SIZE);
}

/* Bytes from the connection or the file: parse, and end the source at the
 * end marker or a fault. Returns false when the source has ended. */
static bool take_bytes(struct es_conn *c, const uint8_t *data, size_t n) {
    bool had_header = c->stream.state != ES_STREAM_HEADER;
    if (es_conn_feed(c, data, n) != 0) {
        end(c, ES_CONN_FAILED);
        return false;
    }
    if (!had_header && c->stream.state != ES_STREAM_HEADER) {
        if (c->timer_open)
            uv_timer_stop(&c->timer); /* the header is in: no more deadline */
        /* As soon as the server reads frames from this connection; an
         * older server ignores the frame, and a file has no one to ask. */
        if (c->opt.cost_notices && !c->is_file && !c->ended)
            es_conn_send_command(c, EVENTLOG_SOCKET_CMD_COST_NOTICES);
    }
    if (c->stream.state == ES_STREAM_END) {
        end(c, ES_CONN_COMPLETE);
        return false;
    }
    return !c->ended;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    struct es_conn_attempt *a = s->data;
    struct es_conn *c = a->c;
    if (c == NULL || nread == 0)
        return;
    if (nread > 0) {
        a->got_bytes = true;
        take_bytes(c, (const uint8_t *)buf->base, (size_t)nread);
        return;
    }
    /* EOF or an error. A server that closes at once without a byte is
     * one refusing clients, or a program on its way out: --retry tries
     * again. */
    if (!a->got_bytes && c->opt.retry) {
        retry_later(c);
        return;
    }
    if (c->stream.state == ES_STREAM_HEADER) {
        if (!a->got_bytes)
            fail(c, "the server closed the connection without sending an eventlog header (%s)",
                 nread == UV_EOF ? "too many clients, or not an eventlog-socket server"
                                 : uv_strerror((int)nread));
        else
            fail(c, "the connection ended inside the eventlog header (%s)",
                 nread == UV_EOF ? "not an eventlog-socket server?" : uv_strerror((int)nread));
        return;
    }
    enum es_conn_end how = es_conn_finish(c);
    if (how == ES_CONN_CUT && nread != UV_EOF) {
        size_t l = strlen(c->error);
        snprintf(c->error + l, sizeof c->error - l, " (%s)", uv_strerror((int)nread));
    }
    end(c, how);
}

static bool retriable(int status) {
    return status == UV_ENOENT || status == UV_ECONNREFUSED || status == UV_EAGAIN;
}

static void on_connect(uv_connect_t *req, int status) {
    struct es_conn_attempt *a = req->data;
    struct es_conn *c = a->c;
    if (c == NULL)
        return; /* let go of (closed, or canceled by the timeout) */
    if (status < 0) {
        if (c->opt.retry && retriable(status)) {
            retry_later(c);
            return;
        }
        struct stat st;
        if (status == UV_ENOENT)
            fail(c, "%s", "no such socket (is the program running? --retry waits for it)");
        else if (c->is_unix && status == UV_ECONNREFUSED && stat(c->addr.path, &st) == 0 &&
                 !S_ISSOCK(st.st_mode))
            fail(c, "%s", "not a socket");
        else if (status == UV_ECONNREFUSED)
            fail(c,
                 "connection refused: nothing listens %s (is the program running? --retry "
                 "waits for it)",
                 c->is_unix ? "on this socket" : "on this port");
        else
            fail(c, "cannot connect: %s", uv_strerror(status));
        return;
    }
    a->connected = true;
    uv_os_fd_t fd;
    if (c->is_unix && uv_fileno(&a->h.handle, &fd) == 0) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
            c->peer_pid = cred.pid;
    } else if (!c->is_unix && uv_fileno(&a->h.handle, &fd) == 0) {
        socklen_t pl = sizeof c->tcp_peer, ll = sizeof c->tcp_local;
        c->have_tcp_addrs = getpeername(fd, (struct sockaddr *)&c->tcp_peer, &pl) == 0 &&
                            getsockname(fd, (struct sockaddr *)&c->tcp_local, &ll) == 0;
        c->tcp_pid_looked = false;
    }
    int r = uv_read_start(&a->h.stream, alloc_cb, on_read);
    if (r < 0) {
        fail(c, "cannot read: %s", uv_strerror(r));
        return;
    }
    /* The first thing the connection sends (protocol.md, section 2). */
    if (c->opt.window)
        es_conn_send_command(c, EVENTLOG_SOCKET_CMD_WINDOW);
}

static void start_attempt(struct es_conn *c) {
    struct es_conn_attempt *a = calloc(1, sizeof *a);
    if (a == NULL) {
        fail(c, "%s", "out of memory");
        return;
    }
    a->c = c;
    a->req.data = a;
    c->attempt = a;
    uv_timer_stop(&c->timer);
    uv_timer_start(&c->timer, on_timer, (uint64_t)(c->opt.connect_timeout * 1000 + 0.5), 0);
    if (c->is_unix) {
        uv_pipe_init(c->loop, &a->h.pipe, 0);
        a->h.handle.data = a;
        uv_pipe_connect(&a->req, &a->h.pipe, c->addr.path, on_connect);
        return;
    }
    uv_tcp_init(c->loop, &a->h.tcp);
    a->h.handle.data = a;
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)c->addr.port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int r = getaddrinfo(c->addr.host, port, &hints, &res);
    if (r != 0) {
        fail(c, "cannot resolve the host: %s", gai_strerror(r));
        return;
    }
    r = uv_tcp_connect(&a->req, &a->h.tcp, res->ai_addr, on_connect);
    freeaddrinfo(res);
    if (r < 0)
        fail(c, "cannot connect: %s", uv_strerror(r));
}

static void on_idle(uv_idle_t *idle) {
    struct es_conn *c = idle->data;
    ssize_t n = read(c->file_fd, read_buf, READ_SIZE);
    if (n < 0 && errno == EINTR)
        return;
    if (n > 0) {
        take_bytes(c, read_buf, (size_t)n);
        return;
    }
    if (n < 0) {
        fail(c, "cannot read: %s", strerror(errno));
        return;
    }
    end(c, es_conn_finish(c));
}

int es_conn_address(struct es_conn *c, const char *source, const struct es_conn_options *opt) {
    struct stat st;
    /* A file where a program's socket was expected: a recording given to
     * a subcommand that needs the running program. */
    if (!opt->allow_file && stat(source, &st) == 0 && S_ISREG(st.st_mode)) {
        snprintf(c->name, sizeof c->name, "%s", source);
        snprintf(c->error, sizeof c->error,
                 "a file, not a running program's socket (a recorded eventlog is read by "
                 "`eventlog-socket report %s -o OUT.html`, and by heap, table and compare)",
                 source);
        return -EINVAL;
    }
    const char *why;
    if (es_addr_parse(source, &c->addr, &why) != 0) {
        snprintf(c->name, sizeof c->name, "%s", source);
        snprintf(c->error, sizeof c->error, "%s", why);
        return -EINVAL;
    }
    es_addr_format(&c->addr, c->name, sizeof c->name);
    c->is_unix = c->addr.kind == ES_ADDR_UNIX;
    /* Said at once, before the subcommand goes on (serve's HTTP server,
     * a file): without --retry nothing would wait for the socket. */
    if (c->is_unix && !opt->retry && stat(c->addr.path, &st) != 0 && errno == ENOENT) {
        snprintf(c->error, sizeof c->error, "%s",
                 "no such socket (is the program running? --retry waits for it)");
        return -EINVAL;
    }
    return 0;
}

int es_conn_open(struct es_conn *c, uv_loop_t *loop, const char *source,
                 const struct es_conn_options *opt, const struct es_conn_callbacks *cb) {
    es_conn_init_parser(c, cb);
    c->loop = loop;
    c->opt = *opt;
    struct stat st;
    if (opt->allow_file && stat(source, &st) == 0 && !S_ISSOCK(st.st_mode) &&
        !S_ISDIR(st.st_mode)) {
        snprintf(c->name, sizeof c->name, "%s", source);
        c->is_file = true;
        c->file_fd = open(source, O_RDONLY | O_CLOEXEC);
        if (c->file_fd < 0) {
            snprintf(c->error, sizeof c->error, "cannot open: %s", strerror(errno));
            return -EINVAL;
        }
        uv_idle_init(loop, &c->idle);
        c->idle.data = c;
        c->idle_open = true;
        uv_idle_start(&c->idle, on_idle);
        return 0;
    }
    /* A recording's name that is not there is a missing file (a typo), not
     * a program that is not running yet. */
    size_t n = strlen(source);
    if (opt->allow_file && n > 9 && strcmp(source + n - 9, ".eventlog") == 0 &&
        stat(source, &st) != 0) {
        snprintf(c->name, sizeof c->name, "%s", source);
        snprintf(c->error, sizeof c->error, "%s", "no such file");
        return -EINVAL;
    }
    int r = es_conn_address(c, source, opt);
    if (r < 0)
        return r;
    uv_timer_init(loop, &c->timer);
    c->timer.data = c;
    c->timer_open = true;
    start_attempt(c);
    return 0;
}

struct send_req {
    uv_write_t req;
    uint8_t data[];
};

static void on_written(uv_write_t *req, int status) {
    struct es_conn_attempt *a = req->handle->data;
    struct es_conn *c = a->c;
    free(req->data);
    if (c != NULL && !c->ended && c->cb.on_sent)
        c->cb.on_sent(c, status, c->cb.ctx);
}

int es_conn_send(struct es_conn *c, const void *data, size_t n) {
    struct es_conn_attempt *a = c->attempt;
    if (a == NULL || !a->connected)
        return UV_ENOTCONN;
    struct send_req *s = malloc(sizeof *s + n);
    if (s == NULL)
        return UV_ENOMEM;
    memcpy(s->data, data, n);
    s->req.data = s;
    uv_buf_t buf = uv_buf_init((char *)s->data, (unsigned)n);
    int r = uv_write(&s->req, &a->h.stream, &buf, 1, on_written);
    if (r < 0)
        free(s);
    return r;
}

int es_conn_send_command(struct es_conn *c, uint8_t command) {
    uint8_t frame[ES_CONTROL_MAGIC_LEN + 1];
    es_control_frame(frame, command);
    return es_conn_send(c, frame, sizeof frame);
}

static void nothing(uv_handle_t *h) {
    (void)h;
}

void es_conn_close(struct es_conn *c) {
    c->ended = true;
    drop_attempt(c);
    if (c->timer_open) {
        uv_close((uv_handle_t *)&c->timer, nothing);
        c->timer_open = false;
    }
    if (c->idle_open) {
        uv_close((uv_handle_t *)&c->idle, nothing);
        c->idle_open = false;
    }
    if (c->file_fd >= 0) {
        close(c->file_fd);
        c->file_fd = -1;
    }
    if (c->feeding)
        c->destroy_pending = true;
    else
        es_conn_destroy_parser(c);
}

int es_conn_peer_pid(struct es_conn *c) {
    if (c->peer_pid == 0 && c->have_tcp_addrs && !c->tcp_pid_looked) {
        c->tcp_pid_looked = true;
        if (es_peer_is_loopback((const struct sockaddr *)&c->tcp_peer))
            c->peer_pid = es_peerpid_tcp((const struct sockaddr *)&c->tcp_peer,
                                         (const struct sockaddr *)&c->tcp_local);
    }
    return c->peer_pid;
}
