/* SPDX-License-Identifier: BSD-3-Clause */
/* Durations as people type them on the command line: one grammar for
 * every option and condition that takes a time (--connect-timeout,
 * `record --duration`, `control --timeout`, `metrics --linger`, the flight
 * recorder's options and conditions): "90", "90s", "500ms", "5m", "1.5h".
 * The grammar is the library's (base/es_duration.h), as sizes are
 * (base/es_size.h), so that a time or a size means the same to the command
 * and to the program's variables. Pure; any thread. */
#ifndef ES_UNITS_H
#define ES_UNITS_H

#include "base/es_duration.h"

#include <stdbool.h>
#include <stdint.h>

/* A duration, into *ns: a number (a fraction allowed) with no unit
 * (seconds) or ns, us, ms, s, m, h; at least 0, at most a year. False for
 * anything else. */
bool es_units_duration(const char *text, uint64_t *ns);

/* The same, into seconds: more than 0 (or at least 0 when zero_ok) and
 * at most max_s. False for anything else. */
bool es_units_seconds(const char *text, double max_s, bool zero_ok, double *s);

/* What a duration is, for the messages that refuse one. */
#define ES_UNITS_GRAMMAR ES_DURATION_GRAMMAR

#endif
