/* SPDX-License-Identifier: BSD-3-Clause */
/* Durations as people type them: the one grammar, for the library's
 * seconds variable (GHC_EVENTLOG_RETAIN_SECONDS, through es_config) and
 * the command's options and conditions (client/source/units.h:
 * --connect-timeout, `record --duration`, `--since`, `watch`), so that a
 * time means the same on both sides.
 *
 * A duration is a number in decimal digits with at most one point (a
 * fraction allowed, no sign, exponent or hexadecimal), then no unit
 * (seconds) or one of ns, us, ms, s, m, min, h: "90", "90s", "500ms",
 * "5m", "1.5h". At least 0, at most a year. Refused: nothing, a unit
 * alone, white space anywhere, any other unit or letter.
 *
 * Pure; any thread. */
#ifndef ES_DURATION_H
#define ES_DURATION_H

#include <stdbool.h>
#include <stdint.h>

/* What a duration is, for the messages that refuse one. */
#define ES_DURATION_GRAMMAR "seconds, or a number with ms, s, m or h: 30, 500ms, 5m"

/* A duration, into *ns (untouched when false): true when `text` is one. */
bool es_duration_parse(const char *text, uint64_t *ns);

#endif
