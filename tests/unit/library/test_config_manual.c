/* SPDX-License-Identifier: BSD-3-Clause */
/* eventlog-socket(7) against the code: each variable the page documents
 * is read (a value it cannot take is refused, naming it), and setting it
 * to the default the page gives changes nothing, as the code's defaults
 * (es_config_defaults) are what the page says. The page's source is
 * docs/man/eventlog-socket.7.scd; its variables are the terms of its
 * ENVIRONMENT section, "*GHC_EVENTLOG_NAME*=...", each with
 * "Default: *VALUE*." or "Default: none". */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "base/es_config.h"
#include "base/es_log.h"
#include "../unit.h"

#include <sys/stat.h>

struct var {
    char name[64];
    char def[64]; /* "" for none */
    bool path;    /* its value is a _PATH_: any text is one */
};

/* The page's variables and their defaults; returns how many. */
static int read_page(const char *path, struct var *vars, int max) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        ok(0, "cannot open %s", path);
        return 0;
    }
    char line[512];
    int n = 0;
    bool in = false; /* in its ENVIRONMENT section */
    while (fgets(line, sizeof line, f) != NULL) {
        if (!in) {
            in = strcmp(line, "# ENVIRONMENT\n") == 0;
            continue;
        }
        if (strncmp(line, "*GHC_EVENTLOG_", 14) == 0 && n < max) {
            size_t len = strcspn(line + 1, "*");
            snprintf(vars[n].name, sizeof vars[n].name, "%.*s", (int)len, line + 1);
            vars[n].def[0] = '\0';
            vars[n].path = strstr(line, "=_PATH_") != NULL;
            n++;
        } else if (line[0] == '#') {
            break;
        }
        const char *d = n > 0 ? strstr(line, "Default: *") : NULL;
        if (d != NULL) {
            d += strlen("Default: *");
            snprintf(vars[n - 1].def, sizeof vars[n - 1].def, "%.*s", (int)strcspn(d, "*"), d);
        }
    }
    fclose(f);
    return n;
}

static char sock[4096];

static void clear(const struct var *vars, int n) {
    for (int i = 0; i < n; i++)
        unsetenv(vars[i].name);
}

/* The environment applied to the defaults, the socket set (unless `var`
 * is an address), then `var` set to `value`. */
static int apply(const char *var, const char *value, struct es_config *c) {
    es_config_defaults(c);
    if (strstr(var, "_INET_") != NULL) {
        setenv("GHC_EVENTLOG_INET_PORT", "0", 1);
    } else if (strcmp(var, "GHC_EVENTLOG_UNIX_PATH") != 0) {
        setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    }
    setenv(var, value, 1);
    int r = es_config_from_env(c);
    es_log_drain(5000);
    return r;
}

/* The settings a variable may change, equal in both. */
static bool same(const struct es_config *a, const struct es_config *b) {
    return a->wait == b->wait && a->graceful_sigterm == b->graceful_sigterm &&
           a->flush_ms == b->flush_ms && a->max_buffer == b->max_buffer &&
           a->client_limit == b->client_limit && a->slow_client == b->slow_client &&
           a->max_clients == b->max_clients && a->allow_other_users == b->allow_other_users &&
           a->control_interval_ms == b->control_interval_ms &&
           a->lossless_clients == b->lossless_clients &&
           a->lossless_stall_ms == b->lossless_stall_ms && a->retain == b->retain &&
           a->retain_seconds == b->retain_seconds &&
           strcmp(a->dump_on_failure, b->dump_on_failure) == 0;
}

static void check_var(const struct var *v, const struct var *vars, int n) {
    struct es_config base, set;
    clear(vars, n);
    bool address = strstr(v->name, "_UNIX_PATH") != NULL || strstr(v->name, "_INET_") != NULL;
    if (!address && !v->path) {
        /* Read: a value no variable takes is refused, naming it. */
        char log[1024];
        es_log_drain(5000);
        unit_capture_begin();
        int r = apply(v->name, "not-a-value!", &set);
        unit_capture_end(log, sizeof log);
        ok(r == EVENTLOG_SOCKET_EINVAL && strstr(log, v->name) != NULL,
           "%s=not-a-value! is refused, naming it: the library reads it", v->name);
        clear(vars, n);
    }
    if (v->def[0] == '\0') {
        ok(strcmp(v->name, "GHC_EVENTLOG_UNIX_PATH") == 0 ||
               strcmp(v->name, "GHC_EVENTLOG_INET_PORT") == 0 || v->path,
           "%s has no default: only the socket's path and port, and a file's path, may have none",
           v->name);
        return;
    }
    if (strcmp(v->name, "GHC_EVENTLOG_INET_HOST") == 0) {
        /* Applied where the server listens (es_listen), not here. */
        ok(apply(v->name, v->def, &set) == 0 && strcmp(set.inet_host, v->def) == 0,
           "%s=%s is accepted", v->name, v->def);
        return;
    }
    es_config_defaults(&base);
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    int r0 = es_config_from_env(&base);
    clear(vars, n);
    int r = apply(v->name, v->def, &set);
    if (strcmp(v->name, "GHC_EVENTLOG_FLUSH_INTERVAL_MS") == 0) {
        /* Unset, the RTS side flushes every ES_DEFAULT_FLUSH_MS. */
        ok(r == 0 && set.flush_ms == ES_DEFAULT_FLUSH_MS && base.flush_ms == -1,
           "%s: the page's default %s is the flush interval used when it is unset (%d ms)", v->name,
           v->def, ES_DEFAULT_FLUSH_MS);
        return;
    }
    ok(r0 == 0 && r == 0 && same(&base, &set),
       "%s=%s (the page's default) configures what leaving it unset does", v->name, v->def);
}

UNIT_CASE(config_manual_every_variable) {
    char path[4096];
    snprintf(path, sizeof path, "%s/../../docs/man/eventlog-socket.7.scd", unit_fixtures());
    snprintf(sock, sizeof sock, "%s/app.sock", unit_tmpdir());
    struct var vars[32];
    int n = read_page(path, vars, 32);
    ok(n >= 10, "%d variables documented in %s", n, path);
    for (int i = 0; i < n; i++)
        check_var(&vars[i], vars, n);
    clear(vars, n);
}
