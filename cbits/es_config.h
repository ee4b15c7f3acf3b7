/* Reading the GHC_EVENTLOG_* environment variables into a configuration,
 * with an error that names the offending variable. */
#ifndef ES_CONFIG_H
#define ES_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct es_env_config {
    const char *unix_path; /* NULL when not set */
    const char *inet_host; /* NULL when not set */
    const char *inet_port; /* NULL when not set */
    bool wait;
    bool graceful_sigterm; /* GHC_EVENTLOG_GRACEFUL_SIGTERM */
    int allow_other_users; /* GHC_EVENTLOG_ALLOW_OTHER_USERS: 0, 1, or -1 when not set */
    int flush_ms;          /* GHC_EVENTLOG_FLUSH_INTERVAL_MS, or -1 when not set */
    size_t max_buffer;     /* GHC_EVENTLOG_MAX_BUFFER, or 0 when not set */
    size_t client_buffer;  /* GHC_EVENTLOG_CLIENT_BUFFER, or 0 when not set */
    int slow_client;       /* GHC_EVENTLOG_SLOW_CLIENT, or -1 when not set */
    int control_ms;        /* GHC_EVENTLOG_CONTROL_INTERVAL_MS, or -1 when not set */
    unsigned max_clients;  /* GHC_EVENTLOG_MAX_CLIENTS, or 0 when not set */
};

/* The smallest buffer limit accepted. */
#define ES_MIN_BUFFER ((size_t)64 << 10)

/* The default flush interval on GHC >= 9.2 (milliseconds). */
#define ES_DEFAULT_FLUSH_MS 100

/* Parse a yes/no value: 1/true/yes/on or 0/false/no/off (any case); NULL or
 * "" is `false`. Returns 0 or -EINVAL. */
int es_config_parse_bool(const char *value, bool *out);

/* Parse a whole number of milliseconds from 0 to 60000. Returns 0 or -EINVAL. */
int es_config_parse_ms(const char *value, int *out);

/* Parse a size in bytes: digits with an optional K, M or G suffix (powers
 * of 1024; "MiB", "M" and "MB" mean the same). Returns 0 or -EINVAL. */
int es_config_parse_size(const char *value, size_t *out);

/* Read the environment. Returns 0, EVENTLOG_SOCKET_ENOTCONFIGURED when no
 * socket is configured, EVENTLOG_SOCKET_EINVAL after logging which
 * variable is wrong and why, or, for a GHC_EVENTLOG_UNIX_PATH that cannot
 * work, the error of es_listen_check_unix_path (logged with the variable). */
int es_config_from_env(struct es_env_config *out);

#endif
