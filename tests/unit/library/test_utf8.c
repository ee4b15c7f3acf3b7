/* SPDX-License-Identifier: BSD-3-Clause */
/* The one rule for text that is not UTF-8 (cbits/format/es_utf8.[ch]): valid
 * sequences pass, every byte that starts none becomes U+FFFD, a copy cut
 * to fit and a cut text end between characters. Runs under ASan. */
#include "format/es_utf8.h"
#include "../unit.h"

#include <string.h>

#define R ES_UTF8_REPLACEMENT

static const char *copy(const char *in, size_t n, size_t size) {
    static char out[64];
    es_utf8_copy(out, size, (const uint8_t *)in, n);
    return out;
}

UNIT_CASE(utf8_lengths) {
    static const struct {
        const char *s;
        size_t want;
    } cases[] = {
        {"a", 1},
        {"\xc3\xa9", 2},
        {"\xe2\x82\xac", 3},
        {"\xf0\x9f\x98\x80", 4},
        {"\xc3", 0},
        {"\x80", 0},
        {"\xc0\xaf", 0}, /* overlong '/' */
        {"\xed\xa0\x80", 0},
        /* a surrogate */ {"\xf4\x90\x80\x80", 0}, /* past U+10FFFF */
        {"\xe0\x80\x80", 0},
        {"\xff", 0},
        {"\xc3(", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ok(es_utf8_len((const uint8_t *)cases[i].s, strlen(cases[i].s)) == cases[i].want,
           "sequence %zu is %zu bytes long (0: none)", i, cases[i].want);
}

UNIT_CASE(utf8_copies) {
    ok(strcmp(copy("plain", 5, 64), "plain") == 0, "ASCII passes");
    ok(strcmp(copy("caf\xc3\xa9", 5, 64), "caf\xc3\xa9") == 0, "valid UTF-8 passes");
    ok(strcmp(copy("a\xff"
                   "b",
                   3, 64),
              "a" R "b") == 0,
       "a bad byte is U+FFFD");
    ok(strcmp(copy("a\xc3", 2, 64), "a" R) == 0, "a sequence cut short is U+FFFD");
    ok(strcmp(copy("\xff\xfe", 2, 64), R R) == 0, "each bad byte is one U+FFFD");
    ok(strcmp(copy("ab\0cd", 5, 64), "ab") == 0, "the text ends at a NUL");
    ok(strcmp(copy("ab\xc3\xa9", 4, 4), "ab") == 0, "a character that does not fit is left out");
    ok(strcmp(copy("ab\xff", 3, 5), "ab") == 0, "so is a U+FFFD that does not fit");
    ok(strcmp(copy("abc", 3, 1), "") == 0, "a buffer of one byte holds the empty text");
}

UNIT_CASE(utf8_cuts) {
    char s[16];
    strcpy(s, "ab\xc3\xa9");
    ok(es_utf8_cut(s, 3) == 2 && strcmp(s, "ab") == 0, "a cut inside a character goes before it");
    strcpy(s, "ab\xc3\xa9");
    ok(es_utf8_cut(s, 4) == 4, "a cut after a character keeps it");
    strcpy(s, "ab\xe2\x82");
    ok(es_utf8_cut(s, 10) == 2 && strcmp(s, "ab") == 0,
       "a character cut short earlier (snprintf) goes whole");
    strcpy(s, "\xf0\x9f\x98\x80x");
    ok(es_utf8_cut(s, 3) == 0, "a four-byte character cut after three goes whole");
}
