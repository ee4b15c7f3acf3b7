/* SPDX-License-Identifier: BSD-3-Clause */
/* CSV output for the subcommands that write tables (`table`, `compare`):
 * RFC 4180 fields (quoted when they hold a comma, a quote or a line
 * break; quotes doubled), text made valid UTF-8 (a byte that is not part
 * of a valid sequence becomes U+FFFD, cbits/format/es_utf8.h's rule, so that a
 * reader that expects UTF-8, as pandas, polars and R do by default, reads
 * any stream's labels), and
 * times as exact decimal seconds from the stream's nanoseconds.
 *
 * Pure functions on a FILE; used by the thread that owns it. */
#ifndef ES_CSV_H
#define ES_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* `n` bytes of text as one field (stopping at a NUL). */
void es_csv_text(FILE *f, const char *s, size_t n);
/* A NUL-terminated text as one field. */
void es_csv_str(FILE *f, const char *s);
/* Nanoseconds as seconds with nine decimals, exactly ("12.000345678"). */
void es_csv_time(FILE *f, uint64_t ns);

#endif
