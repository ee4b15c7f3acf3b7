/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_config.h"
#include "es_duration.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_listen.h"
#include "es_log.h"
#include "es_size.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void es_config_defaults(struct es_config *cfg) {
    *cfg = (struct es_config){
        .flush_ms = -1,
        .max_buffer = (size_t)64 << 20,
        .client_limit = (size_t)64 << 20,
        .slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DROP,
        .defs_limit = (size_t)16 << 20,
        .linger_ms = 2000,
        .linger_max_ms = 10000,
        .max_clients = 1024,
        .control_interval_ms = 1000,
        .lossless_clients = EVENTLOG_SOCKET_LOSSLESS_OWNER,
        .lossless_stall_ms = 10000,
    };
    assert(es_config_invalid(cfg) == NULL); /* the defaults meet every limit */
}

/* The flight recorder's settings. */
static const char *invalid_window(const struct es_config *cfg) {
    if (cfg->retain != 0 && cfg->retain < ES_MIN_BUFFER)
        return "GHC_EVENTLOG_RETAIN must be 0 (no window) or at least 64K";
    if (cfg->retain_seconds > ES_MAX_RETAIN_SECS)
        return "GHC_EVENTLOG_RETAIN_SECONDS must be at most 604800 (a week)";
    if (cfg->retain == 0 && cfg->retain_seconds != 0)
        return "GHC_EVENTLOG_RETAIN_SECONDS limits a window that GHC_EVENTLOG_RETAIN=0 turns "
               "off: give the window a size (for example 64M)";
    if (cfg->retain == 0 && cfg->dump_on_failure[0] != '\0')
        return "GHC_EVENTLOG_DUMP_ON_FAILURE writes the window, which GHC_EVENTLOG_RETAIN=0 "
               "turns off: give the window a size (for example 64M)";
    if (strnlen(cfg->dump_on_failure, sizeof cfg->dump_on_failure) >= sizeof cfg->dump_on_failure)
        return "GHC_EVENTLOG_DUMP_ON_FAILURE is longer than 1023 bytes";
    return NULL;
}

const char *es_config_invalid(const struct es_config *cfg) {
    if (cfg->max_buffer < ES_MIN_BUFFER)
        return "GHC_EVENTLOG_MAX_BUFFER must be at least 64K";
    if (cfg->client_limit < ES_MIN_BUFFER)
        return "GHC_EVENTLOG_CLIENT_BUFFER must be at least 64K";
    if (cfg->slow_client != EVENTLOG_SOCKET_SLOW_CLIENT_DROP &&
        cfg->slow_client != EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT &&
        cfg->slow_client != EVENTLOG_SOCKET_SLOW_CLIENT_WAIT)
        return "GHC_EVENTLOG_SLOW_CLIENT must be drop, disconnect or wait";
    if (cfg->control_interval_ms > ES_MAX_MS)
        return "GHC_EVENTLOG_CONTROL_INTERVAL_MS must be at most 60000";
    if (cfg->flush_ms > (int)ES_MAX_MS)
        return "GHC_EVENTLOG_FLUSH_INTERVAL_MS must be at most 60000";
    if (cfg->max_clients == 0 || cfg->max_clients > ES_MAX_CLIENTS)
        return "GHC_EVENTLOG_MAX_CLIENTS must be from 1 to 1000000";
    if (cfg->lossless_clients != EVENTLOG_SOCKET_LOSSLESS_OWNER &&
        cfg->lossless_clients != EVENTLOG_SOCKET_LOSSLESS_ALL &&
        cfg->lossless_clients != EVENTLOG_SOCKET_LOSSLESS_NONE)
        return "GHC_EVENTLOG_LOSSLESS_CLIENTS must be owner, all or none";
    if (cfg->linger_ms > ES_MAX_LINGER_MS)
        return "GHC_EVENTLOG_LINGER_MS must be at most 600000 (ten minutes)";
    if (cfg->linger_max_ms > ES_MAX_LINGER_MS)
        return "GHC_EVENTLOG_LINGER_MAX_MS must be at most 600000 (ten minutes)";
    if (cfg->lossless_stall_ms > ES_MAX_STALL_MS)
        return "GHC_EVENTLOG_LOSSLESS_STALL_MS must be at most 3600000 (an hour)";
    if (cfg->slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_WAIT &&
        cfg->lossless_clients == EVENTLOG_SOCKET_LOSSLESS_NONE)
        return "GHC_EVENTLOG_SLOW_CLIENT=wait makes every client lossless, which "
               "GHC_EVENTLOG_LOSSLESS_CLIENTS=none refuses: set one of them";
    return invalid_window(cfg);
}

int es_config_from_options(struct es_config *cfg, const struct eventlog_socket_options *opts) {
    if (opts == NULL)
        return EVENTLOG_SOCKET_EINVAL;
    struct es_config next = *cfg;
    next.max_buffer = opts->max_buffer;
    next.client_limit = opts->client_buffer;
    next.slow_client = opts->slow_client;
    next.linger_ms = opts->linger_ms;
    next.linger_max_ms = opts->linger_max_ms;
    next.control_interval_ms = opts->control_interval_ms;
    next.max_clients = opts->max_clients;
    next.allow_other_users = opts->allow_other_users != 0;
    next.lossless_clients = opts->lossless_clients;
    next.lossless_stall_ms = opts->lossless_stall_ms;
    next.retain = opts->retain_bytes;
    next.retain_seconds = opts->retain_seconds;
    const char *dump = opts->dump_on_failure ? opts->dump_on_failure : "";
    if (strlen(dump) >= sizeof next.dump_on_failure) {
        es_log("options refused: dump_on_failure is longer than %zu bytes",
               sizeof next.dump_on_failure - 1);
        return EVENTLOG_SOCKET_EINVAL;
    }
    strcpy(next.dump_on_failure, dump);
    const char *why = es_config_invalid(&next);
    if (why != NULL) {
        /* The reason names the variable; docs/configuration.md maps each
         * to its field of struct eventlog_socket_options. */
        es_log("options refused: %s (the same rule holds for the field of "
               "eventlog_socket_options that sets it)",
               why);
        return EVENTLOG_SOCKET_EINVAL;
    }
    *cfg = next;
    return 0;
}

void es_config_to_options(const struct es_config *cfg, struct eventlog_socket_options *opts) {
    opts->max_buffer = cfg->max_buffer;
    opts->client_buffer = cfg->client_limit;
    opts->slow_client = cfg->slow_client;
    opts->linger_ms = cfg->linger_ms;
    opts->linger_max_ms = cfg->linger_max_ms;
    opts->control_interval_ms = cfg->control_interval_ms;
    opts->max_clients = cfg->max_clients;
    opts->allow_other_users = cfg->allow_other_users;
    opts->lossless_clients = cfg->lossless_clients;
    opts->lossless_stall_ms = cfg->lossless_stall_ms;
    opts->retain_bytes = cfg->retain;
    opts->retain_seconds = cfg->retain_seconds;
    /* The configuration's copy: valid while it is (es_instance's lives as
     * long as the program). */
    opts->dump_on_failure = cfg->dump_on_failure[0] ? cfg->dump_on_failure : NULL;
}

int es_config_parse_bool(const char *value, bool *out) {
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off", ""};
    if (value == NULL) {
        *out = false;
        return 0;
    }
    for (unsigned i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (strcasecmp(value, yes[i]) == 0) {
            *out = true;
            return 0;
        }
    for (unsigned i = 0; i < sizeof no / sizeof no[0]; i++)
        if (strcasecmp(value, no[i]) == 0) {
            *out = false;
            return 0;
        }
    return EVENTLOG_SOCKET_EINVAL;
}

int es_config_parse_whole(const char *value, unsigned max, unsigned *out) {
    if (value == NULL || value[0] < '0' || value[0] > '9')
        return EVENTLOG_SOCKET_EINVAL;
    char *end;
    errno = 0;
    unsigned long v = strtoul(value, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return EVENTLOG_SOCKET_EINVAL;
    *out = (unsigned)v;
    return 0;
}

int es_config_parse_seconds(const char *value, unsigned max, unsigned *out) {
    uint64_t ns;
    if (!es_duration_parse(value, &ns) || ns / 1000000000u > max)
        return EVENTLOG_SOCKET_EINVAL;
    if (ns % 1000000000u != 0)
        return -ERANGE;
    *out = (unsigned)(ns / 1000000000u);
    return 0;
}

int es_config_parse_size(const char *value, size_t *out) {
    uint64_t v;
    if (!es_size_parse(value, &v) || (uint64_t)(size_t)v != v)
        return EVENTLOG_SOCKET_EINVAL;
    *out = (size_t)v;
    return 0;
}

/* A size variable, into *out when set; the limits are es_config_invalid's. */
static int size_var(const char *name, size_t *out) {
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0')
        return 0;
    if (es_config_parse_size(v, out) != 0) {
        es_log("%s=\"%s\" is not a size of at least 64K (" ES_SIZE_GRAMMAR ")", name, v);
        return EVENTLOG_SOCKET_EINVAL;
    }
    return 0;
}

/* An unset and an empty variable mean the same: not configured. */
static const char *env(const char *name) {
    const char *v = getenv(name);
    return (v != NULL && v[0] != '\0') ? v : NULL;
}

/* A yes/no variable: *out is 1 or 0, or -1 when it is unset or empty. */
static int bool_var(const char *name, const char *yes, int *out) {
    const char *v = getenv(name);
    bool b;
    if (es_config_parse_bool(v, &b) != 0) {
        es_log("%s=\"%s\" is not a yes/no value: 1, true, yes or on %s; 0, false, no, off or "
               "empty does not (any case)",
               name, v, yes);
        return EVENTLOG_SOCKET_EINVAL;
    }
    *out = v == NULL || v[0] == '\0' ? -1 : b;
    return 0;
}

/* The yes/no switches: waiting for a client, SIGTERM, other users. */
static int read_switches(struct es_config *out) {
    int wait, term, others;
    if (bool_var("GHC_EVENTLOG_WAIT", "waits for a client", &wait) != 0 ||
        bool_var("GHC_EVENTLOG_GRACEFUL_SIGTERM", "makes SIGTERM exit through hs_exit", &term) !=
            0 ||
        bool_var("GHC_EVENTLOG_ALLOW_OTHER_USERS", "serves every user over TCP", &others) != 0)
        return EVENTLOG_SOCKET_EINVAL;
    out->wait = wait == 1;
    out->graceful_sigterm = term == 1;
    if (others >= 0)
        out->allow_other_users = others == 1;
    return 0;
}

/* The memory limits. */
static int read_sizes(struct es_config *out) {
    if (size_var("GHC_EVENTLOG_MAX_BUFFER", &out->max_buffer) != 0 ||
        size_var("GHC_EVENTLOG_CLIENT_BUFFER", &out->client_limit) != 0)
        return EVENTLOG_SOCKET_EINVAL;
    return 0;
}

/* A variable of whole `unit`s, when it is set, from 0 (`zero`: what 0
 * means, or NULL) to `max` (`most`: what that is in words, or NULL), into
 * *out. 0, or EINVAL after a line that says why. */
static int read_whole(const char *name, const char *unit, unsigned max, const char *zero,
                      const char *most, unsigned *out) {
    const char *value = env(name);
    if (value == NULL || es_config_parse_whole(value, max, out) == 0)
        return 0;
    char from[40] = "", to[40] = "";
    if (zero != NULL)
        snprintf(from, sizeof from, " (%s)", zero);
    if (most != NULL)
        snprintf(to, sizeof to, " (%s)", most);
    es_log("%s=\"%s\" is not a number of %s from 0%s to %u%s", name, value, unit, from, max, to);
    return EVENTLOG_SOCKET_EINVAL;
}

/* A variable of whole seconds written as a duration (es_duration.h), as
 * the command takes one: 300, 300s, 5m. A value that is not whole seconds
 * (1.5, 500ms) is refused, not rounded: the window's age is whole
 * seconds, and a limit that silently differs from the one written would
 * surprise. */
static int read_seconds(const char *name, unsigned max, const char *zero, const char *most,
                        unsigned *out) {
    const char *value = env(name);
    if (value == NULL)
        return 0;
    int r = es_config_parse_seconds(value, max, out);
    if (r == 0)
        return 0;
    if (r == -ERANGE)
        es_log("%s=\"%s\" is not whole seconds: the age is counted in seconds (90, 90s, 1.5m)",
               name, value);
    else
        es_log("%s=\"%s\" is not a duration (" ES_DURATION_GRAMMAR ") from 0 (%s) to %u s (%s)",
               name, value, zero, max, most);
    return EVENTLOG_SOCKET_EINVAL;
}

static int read_ms(const char *name, unsigned max, const char *zero, unsigned *out) {
    return read_whole(name, "milliseconds", max, zero, NULL, out);
}

/* What happens to a client that falls behind. */
static int read_slow_client(struct es_config *out) {
    const char *slow = env("GHC_EVENTLOG_SLOW_CLIENT");
    if (slow && strcasecmp(slow, "drop") == 0) {
        out->slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DROP;
    } else if (slow && strcasecmp(slow, "disconnect") == 0) {
        out->slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT;
    } else if (slow && strcasecmp(slow, "wait") == 0) {
        out->slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_WAIT;
    } else if (slow) {
        es_log("GHC_EVENTLOG_SLOW_CLIENT=\"%s\" is none of drop, disconnect and wait", slow);
        return EVENTLOG_SOCKET_EINVAL;
    }
    return 0;
}

/* The flush and control-command intervals. */
static int read_intervals(struct es_config *out) {
    unsigned flush_ms = UINT_MAX; /* stays so when the variable is not set */
    if (read_ms("GHC_EVENTLOG_FLUSH_INTERVAL_MS", ES_MAX_MS, "off", &flush_ms) != 0 ||
        read_ms("GHC_EVENTLOG_CONTROL_INTERVAL_MS", ES_MAX_MS, "no limit",
                &out->control_interval_ms) != 0)
        return EVENTLOG_SOCKET_EINVAL;
    if (flush_ms != UINT_MAX)
        out->flush_ms = (int)flush_ms;
    return 0;
}

/* Who may be lossless, and how long one may stall the program. */
static int read_lossless(struct es_config *out) {
    const char *lossless = env("GHC_EVENTLOG_LOSSLESS_CLIENTS");
    if (lossless && strcasecmp(lossless, "owner") == 0) {
        out->lossless_clients = EVENTLOG_SOCKET_LOSSLESS_OWNER;
    } else if (lossless && strcasecmp(lossless, "all") == 0) {
        out->lossless_clients = EVENTLOG_SOCKET_LOSSLESS_ALL;
    } else if (lossless && strcasecmp(lossless, "none") == 0) {
        out->lossless_clients = EVENTLOG_SOCKET_LOSSLESS_NONE;
    } else if (lossless) {
        es_log("GHC_EVENTLOG_LOSSLESS_CLIENTS=\"%s\" is none of owner (the program's own user "
               "and root), all and none",
               lossless);
        return EVENTLOG_SOCKET_EINVAL;
    }
    return read_ms("GHC_EVENTLOG_LOSSLESS_STALL_MS", ES_MAX_STALL_MS, "never",
                   &out->lossless_stall_ms);
}

/* How long exit waits for clients. */
static int read_linger(struct es_config *out) {
    if (read_ms("GHC_EVENTLOG_LINGER_MS", ES_MAX_LINGER_MS, NULL, &out->linger_ms) != 0 ||
        read_ms("GHC_EVENTLOG_LINGER_MAX_MS", ES_MAX_LINGER_MS, NULL, &out->linger_max_ms) != 0)
        return EVENTLOG_SOCKET_EINVAL;
    return 0;
}

/* How many clients may connect at once. */
static int read_max_clients(struct es_config *out) {
    const char *clients = env("GHC_EVENTLOG_MAX_CLIENTS");
    unsigned v;
    if (clients == NULL)
        return 0;
    if (es_config_parse_whole(clients, ES_MAX_CLIENTS, &v) != 0 || v == 0) {
        es_log("GHC_EVENTLOG_MAX_CLIENTS=\"%s\" is not a number of clients from 1 to 1000000",
               clients);
        return EVENTLOG_SOCKET_EINVAL;
    }
    out->max_clients = v;
    return 0;
}

/* The flight recorder: the window's size and age, and the dump at a
 * failing exit. Either of the last two alone keeps a window of the
 * default size. */
static int read_window(struct es_config *out) {
    bool sized = env("GHC_EVENTLOG_RETAIN") != NULL;
    if (size_var("GHC_EVENTLOG_RETAIN", &out->retain) != 0)
        return EVENTLOG_SOCKET_EINVAL;
    const char *secs = env("GHC_EVENTLOG_RETAIN_SECONDS");
    if (read_seconds("GHC_EVENTLOG_RETAIN_SECONDS", ES_MAX_RETAIN_SECS, "no limit", "a week",
                     &out->retain_seconds) != 0)
        return EVENTLOG_SOCKET_EINVAL;
    const char *dump = env("GHC_EVENTLOG_DUMP_ON_FAILURE");
    if (dump && strlen(dump) >= sizeof out->dump_on_failure) {
        es_log("GHC_EVENTLOG_DUMP_ON_FAILURE is longer than %zu bytes",
               sizeof out->dump_on_failure - 1);
        return EVENTLOG_SOCKET_EINVAL;
    }
    if (dump)
        strcpy(out->dump_on_failure, dump);
    if (!sized && out->retain == 0 && ((secs && out->retain_seconds > 0) || dump))
        out->retain = ES_DEFAULT_RETAIN;
    return 0;
}

/* Where to listen: one Unix path or one TCP port (and host). */
static int check_addresses(const struct es_config *out) {
    if (out->unix_path && (out->inet_port || out->inet_host)) {
        es_log("both GHC_EVENTLOG_UNIX_PATH and GHC_EVENTLOG_INET_%s are set; set only one",
               out->inet_port ? "PORT" : "HOST");
        return EVENTLOG_SOCKET_EINVAL;
    }
    if (out->inet_host && !out->inet_port) {
        es_log("GHC_EVENTLOG_INET_HOST is set but GHC_EVENTLOG_INET_PORT is not; set the port "
               "(0 picks a free one)");
        return EVENTLOG_SOCKET_EINVAL;
    }
    if (!out->unix_path && !out->inet_port)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    /* A path that cannot work is reported here, where the message can name
     * the variable; listening checks again (the file system may change). */
    if (out->unix_path)
        return es_listen_check_unix_path(out->unix_path, "GHC_EVENTLOG_UNIX_PATH=");
    return 0;
}

/* es_config_from_env into `out`, which the caller discards on an error.
 * The variables are read in this order, and the first wrong one is the
 * one reported. */
static int read_env(struct es_config *out) {
    out->unix_path = env("GHC_EVENTLOG_UNIX_PATH");
    out->inet_host = env("GHC_EVENTLOG_INET_HOST");
    out->inet_port = env("GHC_EVENTLOG_INET_PORT");
    int r;
    if ((r = read_switches(out)) != 0 || (r = read_sizes(out)) != 0 ||
        (r = read_slow_client(out)) != 0 || (r = read_intervals(out)) != 0 ||
        (r = read_lossless(out)) != 0 || (r = read_linger(out)) != 0 ||
        (r = read_max_clients(out)) != 0 || (r = read_window(out)) != 0)
        return r;
    const char *invalid = es_config_invalid(out);
    if (invalid != NULL) {
        es_log("%s", invalid);
        return EVENTLOG_SOCKET_EINVAL;
    }
    return check_addresses(out);
}

int es_config_from_env(struct es_config *cfg) {
    struct es_config next = *cfg;
    int r = read_env(&next);
    if (r == 0)
        *cfg = next;
    return r;
}
