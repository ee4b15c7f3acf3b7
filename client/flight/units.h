/* SPDX-License-Identifier: BSD-3-Clause */
/* Durations and sizes as people type them on the command line, for the
 * flight recorder's options and conditions: "90", "90s", "500ms", "5m",
 * "1.5h"; "512", "64K", "256MiB", "2G" (powers of 1024). Pure; any
 * thread. */
#ifndef ES_UNITS_H
#define ES_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/* A duration, into *ns: a number (a fraction allowed) with no unit
 * (seconds) or ns, us, ms, s, m, h; at least 0, at most a year. False for
 * anything else. */
bool es_units_duration(const char *text, uint64_t *ns);

/* A size, into *bytes: a whole number with no unit (bytes) or K, M, G, T
 * (KB, KiB, ... the same: powers of 1024). False for anything else. */
bool es_units_size(const char *text, uint64_t *bytes);

#endif
