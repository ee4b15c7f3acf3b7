/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's one configuration: what eventlog_socket_set_options and
 * the GHC_EVENTLOG_* environment variables set, with the defaults, the
 * limits every setting must meet (checked in one place, es_config_invalid),
 * and the translation from the public struct eventlog_socket_options. The
 * server, the memory bound and the command gate read their settings from
 * it. Not thread-safe: set up before the server starts, read-only after. */
#ifndef ES_CONFIG_H
#define ES_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* The event classes on now and those this program can switch
 * (EVENTLOG_SOCKET_EVENTS_* bits), and why some cannot (a sentence, or
 * NULL): eventlog_socket_event_classes's answer. */
typedef int (*es_classes_fn)(unsigned *on, unsigned *switchable, const char **why);

struct eventlog_socket_options;

/* The longest dump path accepted, in bytes with its NUL. */
#define ES_DUMP_PATH_MAX 1024

struct es_config {
    /* Where to listen, from the environment; NULL when not set (the
     * strings are the environment's). */
    const char *unix_path;
    const char *inet_host;
    const char *inet_port;
    bool wait;             /* GHC_EVENTLOG_WAIT: wait for a first client */
    bool graceful_sigterm; /* GHC_EVENTLOG_GRACEFUL_SIGTERM */
    int flush_ms;          /* the flush interval; -1 for the default */

    size_t max_buffer;            /* bytes held for clients at most, and kept for the
                                   * first client before it connects (64 MiB) */
    size_t client_limit;          /* unsent bytes one client may fall behind (64 MiB) */
    int slow_client;              /* EVENTLOG_SOCKET_SLOW_CLIENT_*: past its limit a
                                   * client skips chunks (DROP, default), is
                                   * disconnected, or the program waits (WAIT) */
    size_t defs_limit;            /* bytes of definition events kept (16 MiB) */
    unsigned linger_ms;           /* how long exit waits for every client that
                                   * reads (2000; es_linger.h) */
    unsigned linger_max_ms;       /* ... and for one that keeps draining its
                                   * backlog (10000; never less than linger_ms) */
    unsigned max_clients;         /* connections served at once (1024) */
    bool allow_other_users;       /* TCP: serve loopback clients of any user */
    unsigned control_interval_ms; /* a census, or a start/stop, at most this
                                   * often (es_gate.h; 1000, 0: no limit) */
    int lossless_clients;         /* EVENTLOG_SOCKET_LOSSLESS_*: who may have
                                   * lossless delivery (es_lossless.h; OWNER) */
    unsigned lossless_stall_ms;   /* a lossless client that reads nothing this
                                   * long while the program waits for it is
                                   * demoted (10000; 0: never) */
    /* The flight recorder (es_window.h): the most recent bytes of the
     * stream kept at all times (0: no window), and at most this much
     * program time of them (0: no limit); where the window is written when
     * the program exits with a failure ("": nowhere; %p the pid, %t the
     * time in seconds, %% a %). */
    size_t retain;
    unsigned retain_seconds;
    char dump_on_failure[ES_DUMP_PATH_MAX];
    /* Not the user's: the RTS side's answer to a client that asks which
     * event classes are on (es_instance_hooks.event_classes, set as the
     * server starts); NULL where there is no RTS (unit tests). */
    es_classes_fn event_classes;
};

/* The smallest buffer limit accepted. */
#define ES_MIN_BUFFER ((size_t)64 << 10)
/* The longest interval accepted (flush, control), in milliseconds. */
#define ES_MAX_MS 60000u
/* The longest lossless stall time accepted (an hour), in milliseconds. */
#define ES_MAX_STALL_MS 3600000u
/* The longest linger times accepted (ten minutes), in milliseconds. */
#define ES_MAX_LINGER_MS 600000u
/* The most clients that may be allowed at once. */
#define ES_MAX_CLIENTS 1000000u

/* The window's size when only its age or the dump is set (from the
 * environment), and the longest age accepted (a week), in seconds. */
#define ES_DEFAULT_RETAIN  ((size_t)64 << 20)
#define ES_MAX_RETAIN_SECS 604800u

/* The default flush interval on GHC >= 9.2 (milliseconds). */
#define ES_DEFAULT_FLUSH_MS 100

/* Parse a yes/no value: 1/true/yes/on or 0/false/no/off (any case); NULL or
 * "" is `false`. Returns 0 or -EINVAL. */
int es_config_parse_bool(const char *value, bool *out);

/* Parse a whole number (of milliseconds, seconds, clients) from 0 to `max`:
 * decimal digits, nothing else. Returns 0, or -EINVAL (`*out` then
 * untouched). */
int es_config_parse_whole(const char *value, unsigned max, unsigned *out);

/* Parse a number of seconds, as the command reads a duration (es_duration.h:
 * 300, 300s, 5m, 1.5h), that is whole seconds from 0 to `max`. Returns 0,
 * -EINVAL when it is no duration or more than `max`, or -ERANGE when it is
 * one but not whole seconds (500ms, 1.5); `*out` untouched on error. */
int es_config_parse_seconds(const char *value, unsigned max, unsigned *out);

/* Parse a size in bytes, as the command reads one (es_size.h: 64K, 256MiB,
 * 2GB, 1T; powers of 1024), that fits in a size_t. Returns 0 or -EINVAL
 * (`*out` then untouched). */
int es_config_parse_size(const char *value, size_t *out);

/* The longest exit waits for a client that keeps reading: linger_max_ms,
 * or linger_ms when that is longer. */
static inline unsigned es_config_linger_max(const struct es_config *cfg) {
    return cfg->linger_max_ms > cfg->linger_ms ? cfg->linger_max_ms : cfg->linger_ms;
}

/* The defaults. */
void es_config_defaults(struct es_config *cfg);

/* The limits every configuration meets, whoever set it: NULL when it does,
 * else what is wrong, naming the setting as the environment does (for
 * example "GHC_EVENTLOG_MAX_BUFFER must be at least 64K"). */
const char *es_config_invalid(const struct es_config *cfg);

/* The public options into `cfg` (the socket and the environment-only
 * settings untouched). Returns 0, or EVENTLOG_SOCKET_EINVAL when they break
 * a limit (`cfg` is then unchanged). */
int es_config_from_options(struct es_config *cfg, const struct eventlog_socket_options *opts);
void es_config_to_options(const struct es_config *cfg, struct eventlog_socket_options *opts);

/* Apply the environment on top of `cfg` (what is not set stays; on an
 * error nothing changes). Returns 0, EVENTLOG_SOCKET_ENOTCONFIGURED when no socket is configured,
 * EVENTLOG_SOCKET_EINVAL after logging which variable is wrong and why, or,
 * for a GHC_EVENTLOG_UNIX_PATH that cannot work, the error of
 * es_listen_check_unix_path (logged with the variable). */
int es_config_from_env(struct es_config *cfg);

#endif
