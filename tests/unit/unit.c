/* SPDX-License-Identifier: BSD-3-Clause */
/* The unit tests' runner (unit.h): the cases' registry, the main that lists
 * and runs them, their TAP checks, and what the cases share (fixtures, a
 * directory of their own, stderr captured). Linked into every test binary.
 * Thread: main's; unit_ok() from any thread of a case. */
#define _GNU_SOURCE
#include "unit.h"

#include <assert.h>
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIT_MAX_CASES 512

/* A case as registered: one function, or one per recorded eventlog. */
struct unit_case {
    const char *name;
    void (*fn)(void);
    void (*fixture_fn)(const char *path);
    int line;
};

static struct unit_case cases[UNIT_MAX_CASES];
static size_t ncases;

/* A case as run and named: a fixture case once per eventlog
 * ("NAME/ghc-9.6.6", with its path), or with none as NAME alone. */
struct unit_run {
    const struct unit_case *c;
    char *name;
    char *path;
};

static struct unit_run runs[UNIT_MAX_CASES];
static size_t nruns;

/* The checks made so far, in memory the cases' child processes share with
 * the runner, so that a case that crashes has still counted its checks. */
struct unit_tally {
    int checks;
    int failed;
};
static struct unit_tally *tally;
static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *fixtures_dir = "tests/fixtures";
static const char *running;   /* the case's name */
static unsigned case_timeout; /* UNIT_TIMEOUT: seconds a case may take apart */
static char tmpdir[4096];     /* unit_tmpdir(), or "" */

void unit_register(const char *name, void (*fn)(void), int line) {
    assert(ncases < UNIT_MAX_CASES);
    cases[ncases++] = (struct unit_case){name, fn, NULL, line};
}

void unit_register_fixture(const char *name, void (*fn)(const char *path), int line) {
    assert(ncases < UNIT_MAX_CASES);
    cases[ncases++] = (struct unit_case){name, NULL, fn, line};
}

int unit_ok(int pass, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&tally_lock);
    printf("%sok %d - ", pass ? "" : "not ", ++tally->checks);
    vprintf(fmt, ap);
    printf("\n");
    if (!pass) {
        tally->failed++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    pthread_mutex_unlock(&tally_lock);
    va_end(ap);
    return pass;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tmpdir(void) {
    if (tmpdir[0] != '\0')
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    tmpdir[0] = '\0';
}

void unit_bail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("Bail out! %s: ", running != NULL ? running : "unit");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    remove_tmpdir();
    exit(1);
}

const char *unit_fixtures(void) {
    return fixtures_dir;
}

const char *unit_tmpdir(void) {
    if (tmpdir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/es-unit-XXXXXX",
                 base != NULL && base[0] != '\0' ? base : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            tmpdir[0] = '\0';
            unit_bail("cannot make a directory under %s: %s", base ? base : "/tmp",
                      strerror(errno));
        }
    }
    return tmpdir;
}

unsigned char *unit_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        unit_bail("cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n)
        unit_bail("cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

unsigned char *unit_read_fixture(const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir, name);
    return unit_read_file(path, len);
}

void unit_expect_path(const char *fixture, char *out, size_t size) {
    snprintf(out, size, "%.*s.expect", (int)(strlen(fixture) - strlen(".eventlog")), fixture);
}

long unit_expect(const char *path, const char *key) {
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

int unit_dies_of(void (*fn)(int), int arg) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        fclose(stderr);
        fn(arg);
        _exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status) == 0 ? 0 : -1;
}

const char *unit_shown(const char *s, char *buf, size_t size) {
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

static struct {
    FILE *file;
    int saved;
} capture;

void unit_capture_begin(void) {
    fflush(stderr);
    capture.file = tmpfile();
    capture.saved = dup(STDERR_FILENO);
    if (capture.file == NULL || capture.saved < 0 || dup2(fileno(capture.file), STDERR_FILENO) < 0)
        unit_bail("cannot capture stderr");
}

const char *unit_capture_end(char *out, size_t size) {
    fflush(stderr);
    dup2(capture.saved, STDERR_FILENO);
    close(capture.saved);
    rewind(capture.file);
    size_t n = fread(out, 1, size - 1, capture.file);
    out[n] = '\0';
    fclose(capture.file);
    return out;
}

/* The case in this process; a check of its own if it made none. */
static void run_case(const struct unit_run *r) {
    running = r->name;
    int before = tally->checks;
    if (r->c->fn != NULL)
        r->c->fn();
    else if (r->path != NULL)
        r->c->fixture_fn(r->path);
    else
        ok(0, "%s: no recorded eventlogs (ghc-*.eventlog) in %s", r->name, fixtures_dir);
    if (tally->checks == before)
        ok(0, "%s: the case made no checks", r->name);
    remove_tmpdir();
    running = NULL;
}

/* The case in a child process; a failed check of its own if the child
 * ended other than by returning from it (a crash, a sanitizer's report, an
 * exit) without a failed check that says why. */
static void run_case_apart(const struct unit_run *c) {
    printf("# %s\n", c->name);
    fflush(stdout);
    int failed = tally->failed;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unit_tmpdir(); /* made here, so that it goes however the child ends */
    pid_t pid = fork();
    if (pid < 0) {
        ok(0, "%s: cannot start a process for it: %s", c->name, strerror(errno));
        remove_tmpdir();
        return;
    }
    if (pid == 0) {
        if (case_timeout > 0)
            alarm(case_timeout); /* SIGALRM ends it: a failed check below */
        run_case(c);
        fflush(stdout);
        exit(tally->failed > failed ? 1 : 0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    remove_tmpdir();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("# %s: %lld ms\n", c->name,
           (long long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        ok(0, "%s: still running after %u s (UNIT_TIMEOUT)", c->name, case_timeout);
    else if (WIFSIGNALED(status))
        ok(0, "%s: killed by signal %d", c->name, WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0 && tally->failed == failed)
        ok(0, "%s: exited with status %d", c->name, WEXITSTATUS(status));
}

static int by_line(const void *a, const void *b) {
    return ((const struct unit_case *)a)->line - ((const struct unit_case *)b)->line;
}

static void add_run(const struct unit_case *c, char *name, char *path) {
    assert(nruns < UNIT_MAX_CASES);
    if (name == NULL) {
        perror("malloc");
        exit(1);
    }
    runs[nruns++] = (struct unit_run){c, name, path};
}

/* The cases in their file's order, each fixture case once per eventlog. */
static void expand(void) {
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/ghc-*.eventlog", fixtures_dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        g.gl_pathc = 0;
    qsort(cases, ncases, sizeof cases[0], by_line);
    for (size_t i = 0; i < ncases; i++) {
        const struct unit_case *c = &cases[i];
        if (c->fixture_fn == NULL || g.gl_pathc == 0) {
            add_run(c, strdup(c->name), NULL);
            continue;
        }
        for (size_t k = 0; k < g.gl_pathc; k++) {
            const char *base = strrchr(g.gl_pathv[k], '/') + 1;
            char *name;
            if (asprintf(&name, "%s/%.*s", c->name, (int)(strlen(base) - strlen(".eventlog")),
                         base) < 0)
                name = NULL;
            add_run(c, name, strdup(g.gl_pathv[k]));
        }
    }
    if (g.gl_pathc > 0)
        globfree(&g);
}

/* Adds the runs `name` names to `chosen`: the one of that name, or every
 * run of the fixture case of that name. Returns how many. */
static size_t choose(const char *name, const struct unit_run **chosen, size_t *nchosen) {
    size_t found = 0;
    for (size_t i = 0; i < nruns; i++)
        if ((strcmp(runs[i].name, name) == 0 || strcmp(runs[i].c->name, name) == 0) &&
            *nchosen < UNIT_MAX_CASES) {
            chosen[(*nchosen)++] = &runs[i];
            found++;
        }
    return found;
}

static int usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s [--list] [--case NAME]... [FIXTURES_DIR]\n"
            "  --list       the cases' names\n"
            "  --case NAME  run that case (again for more; without --case: every case)\n",
            argv0);
    return 2;
}

int main(int argc, char **argv) {
    static const struct unit_run *chosen[UNIT_MAX_CASES];
    const char *names[UNIT_MAX_CASES];
    size_t nnames = 0, nchosen = 0;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0)
            list = true;
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc && nnames < UNIT_MAX_CASES)
            names[nnames++] = argv[++i];
        else if (argv[i][0] == '-')
            return usage(argv[0]);
        else
            fixtures_dir = argv[i];
    }
    const char *limit = getenv("UNIT_TIMEOUT");
    case_timeout = limit != NULL ? (unsigned)strtoul(limit, NULL, 10) : 0;
    if (ncases == 0) {
        fprintf(stderr, "%s: no cases (UNIT_CASE) in this test\n", argv[0]);
        return 1;
    }
    expand();
    if (list) {
        for (size_t i = 0; i < nruns; i++)
            printf("%s\n", runs[i].name);
        return 0;
    }
    for (size_t i = 0; i < nnames; i++)
        if (choose(names[i], chosen, &nchosen) == 0) {
            fprintf(stderr, "%s: no case named %s (--list shows them)\n", argv[0], names[i]);
            return 2;
        }
    if (nnames == 0)
        for (size_t i = 0; i < nruns; i++)
            chosen[nchosen++] = &runs[i];
    tally = mmap(NULL, sizeof *tally, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (tally == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    if (nchosen == 1)
        run_case(chosen[0]);
    else
        for (size_t i = 0; i < nchosen; i++)
            run_case_apart(chosen[i]);
    printf("1..%d\n", tally->checks);
    return tally->failed > 0 ? 1 : 0;
}
