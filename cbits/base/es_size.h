/* SPDX-License-Identifier: BSD-3-Clause */
/* Sizes as people type them: the one grammar, for the library's variables
 * (GHC_EVENTLOG_MAX_BUFFER, _CLIENT_BUFFER, _RETAIN, through es_config) and
 * the command's options and conditions (`watch --memory`, `heap-size>`,
 * `live>`), so that a size means the same on both sides.
 *
 * A size is a whole number of bytes in decimal digits, optionally followed
 * by B, or by a unit K, M, G or T (powers of 1024) and then optionally B or
 * iB; letters in any case: 4096, 4096B, 64K, 64k, 64KB, 64KiB, 256M, 2GiB,
 * 1T (KB and MB are powers of 1024 too: one grammar, no decimal units).
 * Refused: nothing, a unit alone, a sign, white space anywhere, a
 * fraction or exponent, any other unit or letter, and a number of bytes
 * that does not fit in 64 bits (2^64 and more, however it is written).
 *
 * Pure; any thread. */
#ifndef ES_SIZE_H
#define ES_SIZE_H

#include <stdbool.h>
#include <stdint.h>

/* What a size is, for the messages that refuse one: the words, then
 * with examples (a message about a size that has a least value gives
 * examples of its own, that value first, so that none is refused). */
#define ES_SIZE_WORDS   "bytes, or a whole number with K, M, G or T"
#define ES_SIZE_GRAMMAR ES_SIZE_WORDS ": 64K, 256MiB, 2GB"

/* A size, into *bytes (untouched when false): true when `text` is one. */
bool es_size_parse(const char *text, uint64_t *bytes);

#endif
