/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging never blocks on a stderr that nobody reads, loses lines rather
 * than wait (and says so once it can), and a repeating cause makes one
 * line a second plus a summary, however often it happens; its thread
 * starts also in a program with large thread-locals, is started again
 * after a start that failed, and waits for a stderr made non-blocking. */
#define _GNU_SOURCE
#include "base/es_log.h"
#include "../unit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int logged;

static void *flood(void *arg) {
    (void)arg;
    for (int i = 0; i < 5000; i++) {
        es_log("line %d of a flood that nobody reads", i);
        atomic_store(&logged, i + 1);
    }
    return NULL;
}

/* Everything in the pipe now, as a string. */
static char *drain_pipe(int fd) {
    static char all[1 << 20];
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, all + n, sizeof all - 1 - n)) > 0)
        n += (size_t)r;
    all[n] = 0;
    return all;
}

static size_t count(const char *s, const char *what) {
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* stderr made a 4 KiB pipe that nobody reads unless the case does: its
 * reading end (non-blocking) in p[0]; the old stderr's copy returned. */
static int stderr_to_pipe(int p[2]) {
    int saved = dup(STDERR_FILENO);
    if (pipe2(p, O_CLOEXEC) != 0)
        unit_bail("pipe");
    fcntl(p[1], F_SETPIPE_SZ, 4096);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    dup2(p[1], STDERR_FILENO);
    return saved;
}

UNIT_CASE(log_full_pipe) {
    int p[2];
    int saved = stderr_to_pipe(p);

    /* 5000 lines into a 4 KiB pipe nobody reads: es_log must return. */
    pthread_t t;
    pthread_create(&t, NULL, flood, NULL);
    for (int i = 0; i < 500 && atomic_load(&logged) < 5000; i++) {
        struct timespec ms10 = {0, 10 * 1000000L};
        nanosleep(&ms10, NULL);
    }
    int done = atomic_load(&logged);
    if (!ok(done == 5000, "5000 lines logged into a full pipe without blocking (%d returned)",
            done)) {
        dup2(saved, STDERR_FILENO);
        return; /* the flooding thread is stuck: do not join it */
    }
    pthread_join(t, NULL);
    ok(es_log_lost() > 0, "lines that found no room were lost (%llu), not waited for",
       (unsigned long long)es_log_lost());
    ok(!es_log_drain(100), "nothing drains while the pipe is full");

    /* Once somebody reads, what was kept comes out, with the loss. */
    char *out = NULL;
    static char seen[1 << 20];
    size_t seen_len = 0;
    for (int i = 0; i < 200; i++) {
        out = drain_pipe(p[0]);
        size_t n = strlen(out);
        if (seen_len + n < sizeof seen) {
            memcpy(seen + seen_len, out, n);
            seen_len += n;
        }
        seen[seen_len] = 0;
        if (es_log_drain(10) && strstr(seen, "were lost") != NULL)
            break;
    }
    /* What the logging thread wrote after the last read. */
    out = drain_pipe(p[0]);
    if (seen_len + strlen(out) < sizeof seen) {
        memcpy(seen + seen_len, out, strlen(out));
        seen_len += strlen(out);
    }
    seen[seen_len] = 0;
    ok(strstr(seen, "eventlog-socket: line 0 of a flood") != NULL,
       "the first line came out once the pipe was read");
    unsigned long long reported = 0, n;
    for (const char *q = seen; (q = strstr(q, "eventlog-socket: ")) != NULL; q++)
        if (sscanf(q, "eventlog-socket: %llu log lines were lost: stderr was not being read", &n) ==
            1)
            reported += n;
    ok(reported == es_log_lost(), "lines saying how many were lost add up to %llu", reported);
    ok(count(seen, "of a flood") + es_log_lost() == 5000,
       "lines written (%zu) + lines lost (%llu) = 5000", count(seen, "of a flood"),
       (unsigned long long)es_log_lost());
    dup2(saved, STDERR_FILENO);
}

/* The limiter: 1000 occurrences in one second make one line + a summary. */
UNIT_CASE(log_limiter) {
    int p[2];
    int saved = stderr_to_pipe(p);
    char *out;
    struct es_log_limit lim = {.what = "clients too slow"};
    for (uint64_t ms = 0; ms < 1000; ms++)
        es_log_limited(&lim, 5000 + ms, "client %llu is too slow", (unsigned long long)ms);
    es_log_limit_flush(&lim, 5999, false);
    es_log_drain(1000);
    out = drain_pipe(p[0]);
    ok(count(out, "is too slow") == 1 && strstr(out, "client 0 is too slow") != NULL,
       "1000 occurrences within a second: the first logged in full");
    ok(strstr(out, "999 more") == NULL, "the summary waits for the window to end");
    es_log_limited(&lim, 6000, "client %d is too slow", 1000);
    es_log_drain(1000);
    out = drain_pipe(p[0]);
    ok(strstr(out, "999 more clients too slow in the last 1.0 s") != NULL &&
           strstr(out, "client 1000 is too slow") != NULL,
       "the next window begins with the summary of the last, then its first line");
    es_log_limited(&lim, 6500, "client %d is too slow", 1001);
    es_log_limit_flush(&lim, 6600, true);
    es_log_drain(1000);
    out = drain_pipe(p[0]);
    ok(strstr(out, "1 more clients too slow") != NULL, "a forced flush summarises at once");
    dup2(saved, STDERR_FILENO);
}

static void *log_other(void *arg) {
    (void)arg;
    es_log("a line of another thread");
    return NULL;
}

/* A refused call hands its caller the line that said why: the first line
 * this thread logs while capturing, without the prefix; other threads'
 * lines are not taken; nothing after the capture ends. */
UNIT_CASE(log_capture) {
    char why[64];
    es_log_capture(why, sizeof why);
    pthread_t t;
    pthread_create(&t, NULL, log_other, NULL);
    pthread_join(t, NULL);
    ok(why[0] == '\0', "another thread's line is not captured");
    es_log("GHC_EVENTLOG_RETAIN=\"%s\" is not a size", "1.5M");
    es_log("a second line");
    ok(strcmp(why, "GHC_EVENTLOG_RETAIN=\"1.5M\" is not a size") == 0, "the first line: %s", why);
    es_log_capture(NULL, 0);
    es_log("after the capture");
    ok(strcmp(why, "GHC_EVENTLOG_RETAIN=\"1.5M\" is not a size") == 0, "nothing after it");
    char small[8];
    es_log_capture(small, sizeof small);
    es_log("a line longer than the room");
    es_log_capture(NULL, 0);
    ok(strcmp(small, "a line ") == 0, "a line too long is cut to the room: \"%s\"", small);
    es_log_drain(1000);
}

/* A cause told once: the first occurrence is logged in full, the next
 * ones not at all; another cause has its own flag. */
UNIT_CASE(log_once) {
    int p[2];
    int saved = stderr_to_pipe(p);
    bool said = false, other = false;
    int logged_n = 0;
    for (int i = 0; i < 100; i++)
        logged_n += es_log_once(&said, "a header that does not parse (%d)", i);
    logged_n += es_log_once(&other, "data before the header");
    es_log_drain(1000);
    char *out = drain_pipe(p[0]);
    ok(logged_n == 2 && said && other, "two causes, two lines told (%d)", logged_n);
    ok(count(out, "does not parse") == 1 && strstr(out, "does not parse (0)") != NULL &&
           count(out, "data before the header") == 1,
       "the first occurrence of each, in full, once");
    dup2(saved, STDERR_FILENO);
}

/* Thread-local storage as large as a program may have (glibc places it
 * on every thread's stack, the logging thread's too). */
static _Thread_local char large_locals[256 << 10];

/* In a program with that much thread-local storage the logging thread
 * still starts, and lines reach stderr instead of being lost. */
UNIT_CASE(log_with_large_thread_locals) {
    memset(large_locals, 'x', sizeof large_locals);
    int p[2];
    int saved = stderr_to_pipe(p);
    es_log("a line of a program with %zu KiB of thread-locals", sizeof large_locals >> 10);
    bool drained = es_log_drain(5000);
    char *out = drain_pipe(p[0]);
    dup2(saved, STDERR_FILENO);
    ok(drained && strstr(out, "a line of a program with 256 KiB of thread-locals") != NULL,
       "the line was written");
    ok(es_log_lost() == 0, "and none lost (%llu)", (unsigned long long)es_log_lost());
}

/* When the logging thread cannot be started (no thread can be created for
 * the moment), lines wait and the next line tries again: nothing is lost
 * to a failure that passes. */
UNIT_CASE(log_thread_start_tried_again) {
    int p[2];
    int saved = stderr_to_pipe(p);
    es_log_fail_thread_starts(2);
    es_log("a line while no thread can start");
    es_log("another");
    es_log("a line once one can");
    bool drained = es_log_drain(5000);
    char *out = drain_pipe(p[0]);
    dup2(saved, STDERR_FILENO);
    ok(drained && strstr(out, "eventlog-socket: a line while no thread can start\n") != NULL &&
           strstr(out, "eventlog-socket: another\n") != NULL &&
           strstr(out, "eventlog-socket: a line once one can\n") != NULL,
       "every line was written once the thread started");
    ok(es_log_lost() == 0, "none lost (%llu)", (unsigned long long)es_log_lost());
}

static atomic_int nonblocking_read_fd;

/* Reads what is logged after a while, until 200 lines have come (or 10 s). */
static void *late_reader(void *arg) {
    char *seen = arg;
    size_t n = 0;
    struct timespec ms200 = {0, 200 * 1000000L}, ms5 = {0, 5 * 1000000L};
    nanosleep(&ms200, NULL);
    for (int i = 0; i < 2000 && count(seen, "of 200 lines\n") < 200; i++) {
        ssize_t r = read(atomic_load(&nonblocking_read_fd), seen + n, (1 << 16) - 1 - n);
        if (r > 0)
            seen[n += (size_t)r] = '\0';
        else
            nanosleep(&ms5, NULL);
    }
    return NULL;
}

/* A stderr its owner made non-blocking, which fills (nobody reads it for a
 * while): the logging thread waits for it as for a blocking one, and no
 * line is lost. */
UNIT_CASE(log_nonblocking_stderr) {
    int p[2];
    int saved = dup(STDERR_FILENO);
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
        unit_bail("pipe");
    fcntl(p[1], F_SETPIPE_SZ, 4096);
    dup2(p[1], STDERR_FILENO);
    atomic_store(&nonblocking_read_fd, p[0]);
    static char seen[1 << 16];
    pthread_t t;
    pthread_create(&t, NULL, late_reader, seen);
    for (int i = 0; i < 200; i++)
        es_log("line %03d of 200 lines", i);
    bool drained = es_log_drain(10000);
    pthread_join(t, NULL);
    dup2(saved, STDERR_FILENO);
    ok(drained, "everything was written");
    ok(count(seen, "of 200 lines\n") == 200 && strstr(seen, "line 199 of 200 lines") != NULL,
       "all 200 lines came out, in a pipe that held 4 KiB (%zu)", count(seen, "of 200 lines\n"));
    ok(es_log_lost() == 0, "none lost (%llu)", (unsigned long long)es_log_lost());
}

/* A line that waits for a thread that could not start, with no line after
 * it (a start that failed for want of threads, and its reason): the drain
 * at exit starts the thread and writes it. */
UNIT_CASE(log_drain_starts_the_thread) {
    int p[2];
    int saved = stderr_to_pipe(p);
    es_log_fail_thread_starts(1);
    es_log("the only line");
    bool drained = es_log_drain(5000);
    char *out = drain_pipe(p[0]);
    dup2(saved, STDERR_FILENO);
    ok(drained && strstr(out, "eventlog-socket: the only line\n") != NULL,
       "the drain wrote it (%s)", drained ? "drained" : "not drained");
}
