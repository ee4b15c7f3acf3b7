/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal TAP producer for the unit tests: `ok(cond, name...)` per check,
 * `tap_done()` at the end prints the plan and returns the exit status. */
#ifndef TAP_H
#define TAP_H

#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_count, tap_failed;

#define TAP_UNUSED __attribute__((unused))

__attribute__((format(printf, 4, 5))) static int tap_ok(int pass, const char *file, int line,
                                                        const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!pass) {
        tap_failed++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    return pass;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static int tap_done(void) {
    printf("1..%d\n", tap_count);
    return tap_failed ? 1 : 0;
}

/* Read a whole file (tests/fixtures/...); exits the test on failure. */
TAP_UNUSED static unsigned char *tap_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        printf("Bail out! cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        printf("Bail out! cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The .expect file next to a recorded fixture: "X.eventlog" -> "X.expect". */
TAP_UNUSED static void tap_expect_path(const char *fixture, char *out, size_t size) {
    snprintf(out, size, "%.*s.expect", (int)(strlen(fixture) - strlen(".eventlog")), fixture);
}

/* The value of "KEY N" in a fixture's .expect file, or -1. */
TAP_UNUSED static long tap_expect(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    char k[64];
    long v;
    long found = -1;
    if (f == NULL)
        return -1;
    while (fscanf(f, "%63s %ld", k, &v) == 2)
        if (strcmp(k, key) == 0)
            found = v;
    fclose(f);
    return found;
}

/* Run `check` on every recorded fixture (DIR/ghc-*.eventlog); one check
 * that at least one exists. */
TAP_UNUSED static void tap_each_fixture(const char *dir, void (*check)(const char *path)) {
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/ghc-*.eventlog", dir);
    glob_t g;
    ok(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0, "fixtures found in %s", dir);
    for (size_t i = 0; i < g.gl_pathc; i++)
        check(g.gl_pathv[i]);
    globfree(&g);
}

/* `s` with tabs and newlines escaped, for a check's name. */
TAP_UNUSED static const char *tap_shown(const char *s, char *buf, size_t size) {
    size_t k = 0;
    for (; *s && k + 3 < size; s++) {
        if (*s == '\n' || *s == '\t') {
            buf[k++] = '\\';
            buf[k++] = *s == '\n' ? 'n' : 't';
        } else {
            buf[k++] = *s;
        }
    }
    buf[k] = '\0';
    return buf;
}

/* Capture what the code under test writes to stderr: tap_capture_begin(),
 * run it, then tap_capture_end() fills `out`. The library's log lines are
 * written by its logging thread: drain them (es_log_drain) before each. */
TAP_UNUSED static struct {
    FILE *file;
    int saved;
} tap_capture;

TAP_UNUSED static void tap_capture_begin(void) {
    tap_capture.file = tmpfile();
    tap_capture.saved = dup(STDERR_FILENO);
    if (tap_capture.file == NULL || tap_capture.saved < 0 ||
        dup2(fileno(tap_capture.file), STDERR_FILENO) < 0) {
        printf("Bail out! cannot capture stderr\n");
        exit(1);
    }
}

TAP_UNUSED static const char *tap_capture_end(char *out, size_t size) {
    dup2(tap_capture.saved, STDERR_FILENO);
    close(tap_capture.saved);
    rewind(tap_capture.file);
    size_t n = fread(out, 1, size - 1, tap_capture.file);
    out[n] = '\0';
    fclose(tap_capture.file);
    return out;
}

#endif
