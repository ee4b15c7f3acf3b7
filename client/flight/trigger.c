/* SPDX-License-Identifier: BSD-3-Clause */
#include "trigger.h"

#include "base/es_size.h"
#include "format/es_classes.h"
#include "format/es_notice_text.h"
#include "source/units.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    char op;
    enum es_trigger_kind kind;
} kinds[] = {
    {"gc-pause", '>', ES_TRIGGER_GC_PAUSE}, {"heap-size", '>', ES_TRIGGER_HEAP_SIZE},
    {"live", '>', ES_TRIGGER_LIVE},         {"marker", '~', ES_TRIGGER_MARKER},
    {"message", '~', ES_TRIGGER_MESSAGE},
};

#define CONDITIONS                                                                                 \
    "gc-pause>DURATION, heap-size>SIZE, live>SIZE, marker~PATTERN, message~PATTERN, "              \
    "span:LABEL>DURATION or exit-failure"

/* The condition's value after its operator, into `t`. */
static int value(struct es_trigger *t, const char *v, char *err, size_t size) {
    if (t->kind == ES_TRIGGER_GC_PAUSE) {
        if (es_units_duration(v, &t->threshold) && t->threshold > 0)
            return 0;
        snprintf(err, size, "%s: not a duration (100ms, 1.5s)", t->text);
        return -1;
    }
    if (t->kind == ES_TRIGGER_HEAP_SIZE || t->kind == ES_TRIGGER_LIVE) {
        if (es_size_parse(v, &t->threshold))
            return 0;
        snprintf(err, size, "%s: not a size (" ES_SIZE_GRAMMAR ")", t->text);
        return -1;
    }
    int r = regcomp(&t->re, v, REG_EXTENDED | REG_NOSUB);
    if (r == 0 && v[0] != '\0')
        return 0;
    char why[160] = "an empty pattern";
    if (r != 0)
        regerror(r, &t->re, why, sizeof why);
    else
        regfree(&t->re);
    snprintf(err, size, "%s: not a pattern: %s", t->text, why);
    return -1;
}

static void span_done(const struct es_span *s, void *ctx);

/* span:LABEL>DURATION, the label up to the last '>' (a label may hold
 * one), into `t`; the matcher made with the first. */
static int span_condition(struct es_triggers *ts, struct es_trigger *t, char *err, size_t size) {
    const char *label = t->text + 5, *gt = strrchr(label, '>');
    if (gt == NULL || gt == label || (size_t)(gt - label) > ES_SPANS_LABEL_MAX) {
        snprintf(err, size,
                 "%s: not span:LABEL>DURATION (a label of 1 to %d bytes, span:request>1s)", t->text,
                 ES_SPANS_LABEL_MAX);
        return -1;
    }
    if (!es_units_duration(gt + 1, &t->threshold) || t->threshold == 0) {
        snprintf(err, size, "%s: not a duration (100ms, 1.5s)", t->text);
        return -1;
    }
    t->kind = ES_TRIGGER_SPAN;
    t->label = label;
    t->label_len = (size_t)(gt - label);
    if (ts->spans == NULL) {
        ts->spans = malloc(sizeof *ts->spans);
        if (ts->spans == NULL) {
            snprintf(err, size, "%s: out of memory", t->text);
            return -1;
        }
        es_spans_init(ts->spans, span_done, ts);
    }
    return 0;
}

int es_triggers_add(struct es_triggers *ts, const char *text, char *err, size_t size) {
    if (ts->n >= ES_TRIGGERS_MAX) {
        snprintf(err, size, "at most %d conditions", ES_TRIGGERS_MAX);
        return -1;
    }
    struct es_trigger *t = &ts->t[ts->n];
    memset(t, 0, sizeof *t);
    t->text = text;
    if (strcmp(text, "exit-failure") == 0) {
        t->kind = ES_TRIGGER_EXIT_FAILURE;
        ts->n++;
        return 0;
    }
    if (strncmp(text, "span:", 5) == 0) {
        if (span_condition(ts, t, err, size) != 0)
            return -1;
        ts->n++;
        return 0;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t k = strlen(kinds[i].name);
        if (strncmp(text, kinds[i].name, k) == 0 && text[k] == kinds[i].op) {
            t->kind = kinds[i].kind;
            if (value(t, text + k + 1, err, size) != 0)
                return -1;
            ts->n++;
            return 0;
        }
    }
    snprintf(err, size, "%s: not a condition (" CONDITIONS ")", text);
    return -1;
}

void es_triggers_free(struct es_triggers *ts) {
    for (unsigned i = 0; i < ts->n; i++)
        if (ts->t[i].kind == ES_TRIGGER_MARKER || ts->t[i].kind == ES_TRIGGER_MESSAGE)
            regfree(&ts->t[i].re);
    ts->n = 0;
    if (ts->spans != NULL)
        es_spans_destroy(ts->spans);
    free(ts->spans);
    ts->spans = NULL;
}

void es_triggers_want(const struct es_triggers *ts, bool *want) {
    want[ES_EVENT_BLOCK_MARKER] = want[ES_EVENT_USER_MSG] = true;
    for (unsigned i = 0; i < ts->n; i++) {
        switch (ts->t[i].kind) {
        case ES_TRIGGER_GC_PAUSE:
            want[ES_EVENT_GC_START] = want[ES_EVENT_GC_END] = true;
            break;
        case ES_TRIGGER_HEAP_SIZE:
            want[ES_EVENT_HEAP_SIZE] = true;
            break;
        case ES_TRIGGER_LIVE:
            want[ES_EVENT_HEAP_LIVE] = true;
            break;
        case ES_TRIGGER_MARKER:
            want[ES_EVENT_USER_MARKER] = true;
            break;
        case ES_TRIGGER_SPAN:
            want[ES_EVENT_USER_MARKER] = want[ES_EVENT_USER_BINARY_MSG] = true;
            want[ES_EVENT_RUN_THREAD] = want[ES_EVENT_STOP_THREAD] = true;
            break;
        default:
            break;
        }
    }
}

static bool matches(const struct es_trigger *t, const struct es_event *ev) {
    char text[4096];
    size_t n = ev->payload_len < sizeof text - 1 ? ev->payload_len : sizeof text - 1;
    memcpy(text, ev->payload, n);
    text[n] = '\0';
    return regexec(&t->re, text, 0, NULL, 0) == 0;
}

__attribute__((format(printf, 4, 5))) static bool
fire(const struct es_trigger *t, uint64_t time, struct es_firing *out, const char *fmt, ...) {
    out->by = t;
    out->time = out->from = time;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->what, sizeof out->what, fmt, ap);
    va_end(ap);
    return true;
}

/* A capability's GC ended: was it long? */
static bool gc_event(struct es_triggers *ts, const struct es_trigger *t, const struct es_event *ev,
                     uint16_t cap, struct es_firing *out) {
    if (cap >= ES_TRIGGER_CAPS)
        return false;
    if (ev->type == ES_EVENT_GC_START) {
        ts->gc_start[cap] = ev->time;
        return false;
    }
    uint64_t start = ts->gc_start[cap];
    if (ev->type != ES_EVENT_GC_END || start == 0 || ev->time < start)
        return false;
    if (ev->time - start <= t->threshold)
        return false;
    return fire(t, ev->time, out, "a GC pause of %.1f ms", (double)(ev->time - start) / 1e6);
}

/* A span ended (the matcher's callback, within es_triggers_event): the
 * first span condition it breaks fires, once per event. */
static void span_done(const struct es_span *s, void *ctx) {
    struct es_triggers *ts = ctx;
    if (ts->span_firing)
        return;
    uint64_t ns = s->end - s->start;
    for (unsigned i = 0; i < ts->n; i++) {
        const struct es_trigger *t = &ts->t[i];
        if (t->kind != ES_TRIGGER_SPAN || ns <= t->threshold || strlen(s->label) != t->label_len ||
            memcmp(s->label, t->label, t->label_len) != 0)
            continue;
        char thread[32] = "";
        if (s->thread != 0)
            snprintf(thread, sizeof thread, ", thread %u", (unsigned)s->thread);
        ts->span_firing =
            fire(t, s->end, &ts->span_fired, "a span \"%s\" of %.1f ms (from %.3f s%s%s)", s->label,
                 (double)ns / 1e6, (double)s->start / 1e9, thread, s->failed ? ", failed" : "");
        ts->span_fired.from = s->start;
        return;
    }
}

/* One condition against one event. */
static bool holds(struct es_triggers *ts, const struct es_trigger *t, const struct es_event *ev,
                  uint16_t cap, bool notice, struct es_firing *out) {
    switch (t->kind) {
    case ES_TRIGGER_GC_PAUSE:
        return (ev->type == ES_EVENT_GC_START || ev->type == ES_EVENT_GC_END) &&
               gc_event(ts, t, ev, cap, out);
    case ES_TRIGGER_HEAP_SIZE:
    case ES_TRIGGER_LIVE: {
        uint16_t type = t->kind == ES_TRIGGER_LIVE ? ES_EVENT_HEAP_LIVE : ES_EVENT_HEAP_SIZE;
        if (ev->type != type || ev->payload_len < 12)
            return false;
        uint64_t v = es_be64(ev->payload + 4); /* after the capset */
        return v > t->threshold &&
               fire(t, ev->time, out, "%s %.1f MiB",
                    t->kind == ES_TRIGGER_LIVE ? "live bytes" : "a heap of", (double)v / (1 << 20));
    }
    case ES_TRIGGER_MARKER:
    case ES_TRIGGER_MESSAGE: {
        bool marker = t->kind == ES_TRIGGER_MARKER;
        if (ev->type != (marker ? ES_EVENT_USER_MARKER : ES_EVENT_USER_MSG) || notice ||
            !matches(t, ev))
            return false;
        int n = ev->payload_len < 200 ? (int)ev->payload_len : 200;
        return fire(t, ev->time, out, "the %s \"%.*s\"", marker ? "marker" : "message", n,
                    (const char *)ev->payload);
    }
    case ES_TRIGGER_EXIT_FAILURE:
        return notice && ts->error_seen && fire(t, ev->time, out, "the RTS reported an error");
    case ES_TRIGGER_SPAN:
        return false; /* judged by the matcher: es_triggers_event */
    }
    return false;
}

/* The class of events (EVENTLOG_SOCKET_EVENTS_*) a condition reads, or 0. */
static unsigned class_of(const struct es_trigger *t) {
    switch (t->kind) {
    case ES_TRIGGER_GC_PAUSE:
    case ES_TRIGGER_HEAP_SIZE:
    case ES_TRIGGER_LIVE:
        return EVENTLOG_SOCKET_EVENTS_GC;
    case ES_TRIGGER_MARKER:
    case ES_TRIGGER_MESSAGE:
    case ES_TRIGGER_SPAN:
        return EVENTLOG_SOCKET_EVENTS_USER;
    default:
        return 0;
    }
}

/* An event classes switch at `t`: each condition whose class went off
 * cannot fire until it is back, and the user is told so (and when it is
 * back), rather than left watching for what the program no longer posts. */
static void classes_switched(const struct es_triggers *ts, uint64_t t,
                             const struct es_notice_read *r) {
    for (unsigned i = 0; i < ts->n; i++) {
        unsigned c = class_of(&ts->t[i]);
        if ((c & r->classes_switched_off) != 0)
            fprintf(stderr,
                    "eventlog-socket: %s cannot hold from %.3f s: the program's %s events were "
                    "switched off (eventlog-socket control ADDR events on %s)\n",
                    ts->t[i].text, (double)t / 1e9, es_classes_name(c), es_classes_name(c));
        else if ((c & r->classes_switched_on) != 0)
            fprintf(stderr, "eventlog-socket: %s is watched again from %.3f s: %s events are on\n",
                    ts->t[i].text, (double)t / 1e9, es_classes_name(c));
    }
}

bool es_triggers_event(struct es_triggers *ts, const struct es_event *ev, uint16_t cap,
                       struct es_firing *out) {
    /* The library's notices are not the program's messages; its first
     * error notice is what exit-failure looks for. */
    bool notice = false;
    if (ev->type == ES_EVENT_USER_MSG) {
        struct es_notice_read r;
        es_notice_text_parse(ev->payload, ev->payload_len, &r);
        if (r.kind == ES_NOTICE_ERROR) {
            if (ts->error_seen)
                return false;
            ts->error_seen = notice = true;
        } else if (r.kind == ES_NOTICE_CLASSES) {
            if (r.classes_switched)
                classes_switched(ts, ev->time, &r);
            return false;
        } else if (r.kind != ES_NOTICE_NOT) {
            return false;
        }
    }
    /* The matcher sees every event it reads (one firing per event: a
     * span's STOP that is also a matching marker fires as the span). */
    if (ts->spans != NULL && !notice) {
        ts->span_firing = false;
        es_spans_event(ts->spans, ev, cap == 0xffff ? -1 : (int)cap);
        if (ts->span_firing) {
            *out = ts->span_fired;
            return true;
        }
    }
    for (unsigned i = 0; i < ts->n; i++)
        if (holds(ts, &ts->t[i], ev, cap, notice, out))
            return true;
    return false;
}

uint64_t es_triggers_keep_from(struct es_triggers *ts, uint64_t from, uint64_t every) {
    if (ts->spans == NULL)
        return from;
    if (ts->open_at == 0 || from < ts->open_at || from - ts->open_at >= every) {
        ts->open_at = from;
        ts->open_oldest = UINT64_MAX;
        for (unsigned i = 0; i < ts->n; i++) {
            const struct es_trigger *t = &ts->t[i];
            if (t->kind != ES_TRIGGER_SPAN)
                continue;
            uint64_t o = es_spans_oldest_open(ts->spans, t->label, t->label_len);
            if (o < ts->open_oldest)
                ts->open_oldest = o;
        }
    }
    return ts->open_oldest < from ? ts->open_oldest : from;
}

bool es_triggers_end(struct es_triggers *ts, bool cut, uint64_t time, bool fired_at_error,
                     struct es_firing *out) {
    for (unsigned i = 0; i < ts->n; i++) {
        const struct es_trigger *t = &ts->t[i];
        if (t->kind != ES_TRIGGER_EXIT_FAILURE || (fired_at_error && ts->error_seen))
            continue;
        if (cut)
            return fire(t, time, out, "the stream ended without its end marker");
    }
    return false;
}
