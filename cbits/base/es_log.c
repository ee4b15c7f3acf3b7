/* SPDX-License-Identifier: BSD-3-Clause */
/* For pthread_atfork and clock_gettime. */
#define _GNU_SOURCE
#include "es_log.h"

#include "es_time.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_LEN 512

/* The buffer and the logging thread. `buf` holds whole lines, oldest
 * first; the thread takes everything, writes it without the lock held, and
 * sets `writing` meanwhile so that es_log_drain knows. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t more;    /* lines were added */
    pthread_cond_t drained; /* the buffer was written out */
    char buf[ES_LOG_BUFFER];
    size_t len;
    bool writing;
    bool started;         /* the thread runs */
    unsigned fail_starts; /* tests: starts still to fail */
    uint64_t lost;        /* lines that found no room, not yet reported */
    atomic_uint_fast64_t lost_total;
} lg = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .more = PTHREAD_COND_INITIALIZER,
    .drained = PTHREAD_COND_INITIALIZER,
};

static void write_all(const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* A stderr its owner made non-blocking: wait until it takes
             * more, as a blocking one would (this thread may wait). */
            struct pollfd pf = {.fd = STDERR_FILENO, .events = POLLOUT};
            if (poll(&pf, 1, -1) < 0 && errno != EINTR)
                return;
            continue;
        }
        if (w <= 0)
            return; /* stderr closed or broken: nothing to be done */
        p += w;
        n -= (size_t)w;
    }
}

static void *log_thread(void *arg) {
    (void)arg;
    static char out[ES_LOG_BUFFER + LINE_MAX_LEN];
    pthread_mutex_lock(&lg.lock);
    for (;;) {
        while (lg.len == 0 && lg.lost == 0)
            pthread_cond_wait(&lg.more, &lg.lock);
        size_t n = lg.len;
        memcpy(out, lg.buf, n);
        lg.len = 0;
        if (lg.lost > 0) {
            n += (size_t)snprintf(out + n, LINE_MAX_LEN,
                                  "eventlog-socket: %llu log lines were lost: stderr was not "
                                  "being read\n",
                                  (unsigned long long)lg.lost);
            lg.lost = 0;
        }
        lg.writing = true;
        pthread_mutex_unlock(&lg.lock);
        /* The only place that may block on stderr. */
        write_all(out, n);
        pthread_mutex_lock(&lg.lock);
        assert(lg.writing); /* this thread is its only writer */
        lg.writing = false;
        if (lg.len == 0)
            pthread_cond_broadcast(&lg.drained);
    }
    return NULL;
}

/* A forked child has no logging thread: start a new one when it logs. */
static void after_fork_child(void) {
    pthread_mutex_init(&lg.lock, NULL);
    pthread_cond_init(&lg.more, NULL);
    pthread_cond_init(&lg.drained, NULL);
    lg.started = lg.writing = false;
    lg.len = 0; /* the parent's thread writes those lines */
    lg.lost = 0;
}

static void drain_at_exit(void) {
    es_log_drain(500);
}

/* With the lock held: the thread runs, or is started now. A start that
 * fails (no thread can be created for the moment: RLIMIT_NPROC, a
 * container's limit on processes) is tried again at the next line;
 * meanwhile lines wait in the buffer. */
static void start_thread(void) {
    if (lg.started)
        return;
    static bool registered;
    if (!registered) {
        registered = true;
        pthread_atfork(NULL, NULL, after_fork_child);
        atexit(drain_at_exit);
    }
    /* The thread must not take the program's signals (the RTS relies on
     * its own threads getting them). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* The default stack size: glibc places the program's thread-local
     * storage on each thread's stack, so a small fixed stack fails
     * (EINVAL) in a program whose thread-locals are larger, and every
     * line would be lost. Only the pages it touches are used. */
    if (lg.fail_starts > 0)
        lg.fail_starts--;
    else
        lg.started = pthread_create(&t, &attr, log_thread, NULL) == 0;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* es_log_capture's buffer, of this thread. */
static _Thread_local char *capture_buf;
static _Thread_local size_t capture_size;

void es_log_capture(char *buf, size_t size) {
    capture_buf = size > 0 ? buf : NULL;
    capture_size = size;
    if (capture_buf != NULL)
        capture_buf[0] = '\0';
}

static void vlog(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void vlog(const char *fmt, va_list ap) {
    char line[LINE_MAX_LEN];
    int n = snprintf(line, sizeof line, "eventlog-socket: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    if (capture_buf != NULL && capture_buf[0] == '\0')
        snprintf(capture_buf, capture_size, "%.*s", (int)(len - (size_t)n), line + n);
    line[len++] = '\n';
    assert(len <= sizeof line);
    pthread_mutex_lock(&lg.lock);
    start_thread();
    if (lg.len + len <= sizeof lg.buf) {
        memcpy(lg.buf + lg.len, line, len);
        lg.len += len;
        assert(lg.buf[lg.len - 1] == '\n'); /* whole lines only */
    } else {
        lg.lost++;
        atomic_fetch_add(&lg.lost_total, 1);
    }
    pthread_cond_signal(&lg.more);
    pthread_mutex_unlock(&lg.lock);
}

void es_log(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

bool es_log_once(bool *said, const char *fmt, ...) {
    if (*said)
        return false;
    *said = true;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
    return true;
}

/* Nothing left to write: under lg.lock. */
static bool drained_locked(void) {
    return lg.len == 0 && lg.lost == 0 && !lg.writing;
}

bool es_log_drain(unsigned timeout_ms) {
    struct timespec until = es_time_realtime_in_ms(timeout_ms);
    pthread_mutex_lock(&lg.lock);
    /* Lines that wait for a thread that could not start (at exit, or
     * after a start that failed for want of threads) try once more. */
    if (!drained_locked())
        start_thread();
    /* Without the thread, nothing is being written now. */
    while (lg.started && !drained_locked())
        if (pthread_cond_timedwait(&lg.drained, &lg.lock, &until) != 0)
            break;
    bool done = drained_locked();
    pthread_mutex_unlock(&lg.lock);
    return done;
}

uint64_t es_log_lost(void) {
    return atomic_load(&lg.lost_total);
}

void es_log_fail_thread_starts(unsigned n) {
    pthread_mutex_lock(&lg.lock);
    lg.fail_starts = n;
    pthread_mutex_unlock(&lg.lock);
}

void es_log_limit_flush(struct es_log_limit *l, uint64_t now_ms, bool force) {
    if (l->suppressed == 0 || (!force && now_ms - l->window_start_ms < ES_LOG_LIMIT_WINDOW_MS))
        return;
    uint64_t span = now_ms - l->window_start_ms;
    es_log("%llu more %s in the last %.1f s", (unsigned long long)l->suppressed, l->what,
           (double)(span < ES_LOG_LIMIT_WINDOW_MS ? ES_LOG_LIMIT_WINDOW_MS : span) / 1000);
    l->suppressed = 0;
}

void es_log_limited(struct es_log_limit *l, uint64_t now_ms, const char *fmt, ...) {
    assert(l->what != NULL); /* named before its first line: the summary says what */
    if (l->seen && now_ms - l->window_start_ms < ES_LOG_LIMIT_WINDOW_MS) {
        l->suppressed++;
        return;
    }
    es_log_limit_flush(l, now_ms, true);
    l->seen = true;
    l->window_start_ms = now_ms;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}
