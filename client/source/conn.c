/* A source's stream (client/source/conn.h: es_conn_init_parser, es_conn_feed,
 * es_conn_finish): the stream reader's callbacks, what the connection
 * notes on its way (the program's arguments, pid and GHC, drop and wait
 * notices; struct es_conn_info), and the end judged from the bytes. No
 * I/O: client/source/conn_io.c connects, reads and feeds, the tests and fuzz
 * targets feed bytes directly. Thread ownership: the connection's owner
 * (the loop thread). */
#include "conn.h"

#include "format/es_notice_text.h"
#include "format/es_payload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A NUL-terminated copy of at most size-1 bytes of a payload string. */
static void copy_text(char *dst, size_t size, const uint8_t *p, size_t n) {
    size_t k = n < size - 1 ? n : size - 1;
    memcpy(dst, p, k);
    dst[k] = '\0';
}

/* PROGRAM_ARGS: u32 capset, then the arguments, each ended by NUL. */
static void note_args(struct es_conn_info *in, const struct es_event *ev) {
    struct es_payload r = es_payload_of(ev);
    es_payload_skip(&r, 4); /* capset */
    size_t n;
    const uint8_t *p = es_payload_peek(&r, &n);
    if (n == 0)
        return;
    /* One line: each NUL a space, the last ones dropped. */
    size_t out = 0;
    for (size_t i = 0; i < n && out + 1 < sizeof in->args; i++)
        in->args[out++] = p[i] == '\0' ? ' ' : (char)p[i];
    while (out > 0 && in->args[out - 1] == ' ')
        out--;
    in->args[out] = '\0';
    size_t arg0;
    const uint8_t *s = es_payload_str(&r, &arg0);
    char first[sizeof in->program * 4];
    copy_text(first, sizeof first, s, arg0);
    const char *slash = strrchr(first, '/');
    const char *base = slash ? slash + 1 : first;
    copy_text(in->program, sizeof in->program, (const uint8_t *)base, strlen(base));
    in->have_args = true;
}

static bool is_drop_notice(const uint8_t *p, size_t n, uint64_t *chunks) {
    static const char prefix[] = "eventlog-socket: dropped ";
    size_t k = sizeof prefix - 1;
    if (n <= k || memcmp(p, prefix, k) != 0)
        return false;
    uint64_t v = 0;
    size_t i = k;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    if (i == k)
        return false;
    *chunks = v;
    return true;
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

/* The answer to a window request; the window's blocks begin where the
 * notice's block ends. */
static void note_window(struct es_conn_info *in, const uint8_t *p, size_t n) {
    struct es_notice_read r;
    es_notice_parse(p, n, &r);
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
        uint64_t chunks;
        if (is_drop_notice(p, n, &chunks)) {
            in->drop_notices++;
            in->dropped_chunks += chunks;
        } else if (n > sizeof lossless - 1 && memcmp(p, lossless, sizeof lossless - 1) == 0) {
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
