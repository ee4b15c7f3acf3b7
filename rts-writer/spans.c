/* SPDX-License-Identifier: BSD-3-Clause */
/* Spans of C code (eventlog_socket_span_begin, eventlog_socket_span_end):
 * from any thread, whether the RTS knows it or not, so not through the
 * RTS's buffers (a user event needs the capability the caller holds). The
 * library posts each as a notice (es_notice_text_span: the OS thread's id
 * pairs them) stamped with the RTS's own clock, straight into every
 * client's stream and the window, as the event classes' notices are. Also
 * the clock itself (es_rts_now). Any thread; no state of its own. */
#include "es_rts.h"

#include "format/es_notice_text.h"

#include <Rts.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The clock the RTS stamps its events with (rts/Stats.c: the time since
 * the RTS began to start, in nanoseconds), hidden in the static RTS as the
 * event classes' switches are; NULL where it is not found (a -dynamic
 * program). */
extern Time stat_getElapsedTime(void) __attribute__((weak, visibility("default")));

bool es_rts_now(uint64_t *ns) {
    if (&stat_getElapsedTime == NULL)
        return false;
    *ns = (uint64_t)stat_getElapsedTime();
    return true;
}

/* A label as a span's: not empty, one line, short enough to be read whole
 * (EVENTLOG_SOCKET_SPAN_LABEL_MAX bytes, as the command reads them). */
static bool label_ok(const char *label) {
    if (label == NULL || label[0] == '\0')
        return false;
    size_t n = strnlen(label, EVENTLOG_SOCKET_SPAN_LABEL_MAX + 1);
    return n <= EVENTLOG_SOCKET_SPAN_LABEL_MAX && strpbrk(label, "\r\n") == NULL;
}

/* The calling OS thread's id, asked of the kernel once per thread. */
static uint32_t os_thread(void) {
    static _Thread_local uint32_t tid;
    if (tid == 0)
        tid = (uint32_t)syscall(SYS_gettid);
    return tid;
}

static int post(const char *word, const char *label) {
    if (!label_ok(label))
        return EVENTLOG_SOCKET_EINVAL;
    struct es_server *s = es_instance_server();
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    uint64_t now;
    if (!es_rts_now(&now))
        return EVENTLOG_SOCKET_ENOTSUP;
    /* A forked child's eventlog is discarded (writer.c): its spans too. */
    if (atomic_load_explicit(&es_rts.forked, memory_order_relaxed) || es_server_pid(s) != getpid())
        return 0;
    char text[EVENTLOG_SOCKET_SPAN_LABEL_MAX + 64];
    es_notice_text_span(text, sizeof text, os_thread(), word, label);
    es_server_post_text_at(s, now, text);
    return 0;
}

int eventlog_socket_span_begin(const char *label) {
    return post("START", label);
}

int eventlog_socket_span_end(const char *label, bool failed) {
    if (failed) {
        int r = post("FAIL", label);
        if (r != 0)
            return r;
    }
    return post("STOP", label);
}
