/* Reading the GHC_EVENTLOG_* environment variables into a configuration,
 * with an error that names the offending variable. */
#ifndef ES_CONFIG_H
#define ES_CONFIG_H

#include <stdbool.h>

struct es_env_config {
    const char *unix_path; /* NULL when not set */
    const char *inet_host; /* NULL when not set */
    const char *inet_port; /* NULL when not set */
    bool wait;
    int flush_ms; /* GHC_EVENTLOG_FLUSH_INTERVAL_MS, or -1 when not set */
};

/* The default flush interval on GHC >= 9.2 (milliseconds). */
#define ES_DEFAULT_FLUSH_MS 100

/* Parse a yes/no value: 1/true/yes/on or 0/false/no/off (any case); NULL or
 * "" is `false`. Returns 0 or -EINVAL. */
int es_config_parse_bool(const char *value, bool *out);

/* Parse a whole number of milliseconds from 0 to 60000. Returns 0 or -EINVAL. */
int es_config_parse_ms(const char *value, int *out);

/* Read the environment. Returns 0, EVENTLOG_SOCKET_ENOTCONFIGURED when no
 * socket is configured, or EVENTLOG_SOCKET_EINVAL after logging which
 * variable is wrong and why. */
int es_config_from_env(struct es_env_config *out);

#endif
