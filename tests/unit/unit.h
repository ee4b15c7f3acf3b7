/* SPDX-License-Identifier: BSD-3-Clause */
/* The unit tests' runner: a test file is a list of named cases and no main.
 *
 *   UNIT_CASE(lossless_stall) {
 *       ok(cond, "what a user would notice (%d)", n);
 *   }
 *
 *   UNIT_FIXTURE_CASE(model_cut_streams, path) {
 *       ...                       once per recorded eventlog (ghc-*.eventlog),
 *   }                             as cases model_cut_streams/ghc-9.6.6, ...
 *
 * unit.c is the main of every test binary:
 *
 *   test_X --list                 the cases' names, in the file's order
 *   test_X --case NAME [...]      those cases (NAME alone: every fixture's)
 *   test_X                        every case
 *   test_X ... FIXTURES_DIR       the recorded eventlogs (tests/fixtures)
 *
 * One case runs in the runner's own process; several run one after another,
 * each in a child process of its own, so that what one leaves behind
 * (globals, the library's singletons, a counted signal) never reaches
 * another; each such child has UNIT_TIMEOUT seconds (when set) and its
 * time is a comment after it ("# NAME: 12 ms"). A case therefore makes everything it needs, through
 * helpers the file's cases share, and may leave files only in unit_tmpdir(), which the runner
 * removes after it. Names are unique across tests/unit/ (they name the file's module first:
 * lossless_stall in test_lossless.c), so that `make unit-test CASE=NAME` picks one case, in every
 * flavour built.
 *
 * Output is TAP: "ok N - ..." per check, "1..N" at the end; a case that
 * checks nothing, or ends without saying why (a crash, an exit), is a
 * failed check of its own.
 *
 * Thread: ok() may be called from any thread of a case; everything else
 * from the case's main thread. */
#ifndef UNIT_H
#define UNIT_H

/* What every test uses. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void unit_register(const char *name, void (*fn)(void), int line);
void unit_register_fixture(const char *name, void (*fn)(const char *path), int line);

/* A case: its name (a C identifier) and then its body. The cases register
 * before main (constructors) and run in the order of their lines. */
#define UNIT_CASE(name)                                                                            \
    static void unit_case_##name(void);                                                            \
    __attribute__((constructor)) static void unit_register_##name(void) {                          \
        unit_register(#name, unit_case_##name, __LINE__);                                          \
    }                                                                                              \
    static void unit_case_##name(void)

/* A case run once for each recorded eventlog, its path in `path`; with
 * none in the fixtures' directory, a failed check says so. */
#define UNIT_FIXTURE_CASE(name, path)                                                              \
    static void unit_case_##name(const char *path);                                                \
    __attribute__((constructor)) static void unit_register_##name(void) {                          \
        unit_register_fixture(#name, unit_case_##name, __LINE__);                                  \
    }                                                                                              \
    static void unit_case_##name(const char *path)

/* One check: prints "ok N - NAME" or "not ok N - NAME" and where it failed;
 * returns whether it passed. */
__attribute__((format(printf, 4, 5))) int unit_ok(int pass, const char *file, int line,
                                                  const char *fmt, ...);
#define ok(cond, ...) unit_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Ends the case as failed: "Bail out! REASON" (a setup that cannot go on). */
__attribute__((format(printf, 1, 2), noreturn)) void unit_bail(const char *fmt, ...);

/* The recorded eventlogs' directory: the command line's, or tests/fixtures. */
const char *unit_fixtures(void);

/* A directory of the case's own under /tmp, made at the first call and
 * removed with what is in it when the case ends. */
const char *unit_tmpdir(void);

/* A whole file, malloc'd (one byte more, a NUL); bails out if unreadable. */
unsigned char *unit_read_file(const char *path, size_t *len);

/* A fixture's whole file: unit_fixtures()/NAME. */
unsigned char *unit_read_fixture(const char *name, size_t *len);

/* The .expect file next to a recorded fixture: "X.eventlog" -> "X.expect". */
void unit_expect_path(const char *fixture, char *out, size_t size);

/* The value of "KEY N" in a fixture's .expect file, or -1. */
long unit_expect(const char *path, const char *key);

/* `s` with tabs and newlines escaped, for a check's name. */
const char *unit_shown(const char *s, char *buf, size_t size);

/* Run fn(arg) in a child without a core file and with its stderr closed
 * (an assertion's message is expected): the signal that ended it, 0 when
 * fn returned, -1 when it exited otherwise or could not be run. For the
 * misuses the code asserts against (SIGABRT). */
int unit_dies_of(void (*fn)(int), int arg);

/* What the code under test writes to stderr: unit_capture_begin(), run it,
 * then unit_capture_end() fills `out`. The library's log lines are written
 * by its logging thread: drain them (es_log_drain) before each. */
void unit_capture_begin(void);
const char *unit_capture_end(char *out, size_t size);

#endif
