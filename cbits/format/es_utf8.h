/* SPDX-License-Identifier: BSD-3-Clause */
/* UTF-8 in the text an eventlog carries (census labels, program names,
 * markers, messages): the one rule the `eventlog-socket` command applies
 * to every text it keeps or writes out, whatever the stream holds. A byte
 * that starts no valid sequence (a lone continuation byte, an overlong
 * form, a surrogate, a code point past U+10FFFF, a sequence cut short)
 * stands for U+FFFD, the replacement character; text cut to fit a buffer
 * is cut between characters, never inside one. So the Prometheus
 * exposition, the CSV, the .hp file and the page all read the same text,
 * and each is valid for its reader (promtool, pandas, hp2ps, a browser).
 *
 * Pure functions on buffers; any thread. */
#ifndef ES_UTF8_H
#define ES_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* U+FFFD in UTF-8. */
#define ES_UTF8_REPLACEMENT     "\xef\xbf\xbd"
#define ES_UTF8_REPLACEMENT_LEN 3

/* The length of the valid sequence at s[0..n) (1 to 4), or 0 when s[0]
 * starts none. n >= 1. */
size_t es_utf8_len(const uint8_t *s, size_t n);

/* `n` bytes at `s` (up to a NUL, if any) as valid UTF-8 into `out`
 * (`size` >= 1 bytes, NUL-terminated): each byte that starts no valid
 * sequence as U+FFFD, and as many whole characters as fit. Returns the
 * length written. */
size_t es_utf8_copy(char *out, size_t size, const uint8_t *s, size_t n);

/* Cut the UTF-8 text `s` to at most `max` bytes, between two characters:
 * a character the cut (or an earlier cut, such as snprintf's) would split
 * goes whole. Returns the new length. */
size_t es_utf8_cut(char *s, size_t max);

#endif
