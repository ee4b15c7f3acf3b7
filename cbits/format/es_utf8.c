/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_utf8.h"

#include <assert.h>
#include <string.h>

size_t es_utf8_len(const uint8_t *s, size_t n) {
    assert(n >= 1);
    uint8_t c = s[0];
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* Overlong forms, surrogates, past U+10FFFF. */
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return len;
}

size_t es_utf8_copy(char *out, size_t size, const uint8_t *s, size_t n) {
    assert(size >= 1);
    const uint8_t *nul = memchr(s, 0, n);
    if (nul != NULL)
        n = (size_t)(nul - s);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        /* ASCII runs, the common case, a byte at a time without a call. */
        if (s[i] < 0x80) {
            if (k + 1 >= size)
                break;
            out[k++] = (char)s[i++];
            continue;
        }
        size_t len = es_utf8_len(s + i, n - i);
        const uint8_t *from = len ? s + i : (const uint8_t *)ES_UTF8_REPLACEMENT;
        size_t put = len ? len : ES_UTF8_REPLACEMENT_LEN;
        if (k + put >= size)
            break;
        memcpy(out + k, from, put);
        k += put;
        i += len ? len : 1;
    }
    out[k] = '\0';
    return k;
}

size_t es_utf8_cut(char *s, size_t max) {
    size_t n = strnlen(s, max);
    /* The last character's first byte, and whether it is whole within n:
     * the text was valid, but may have been cut short already. */
    size_t i = n;
    while (i > 0 && n - i < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
        i--;
    if (i > 0) {
        unsigned char c = (unsigned char)s[i - 1];
        size_t want = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        if (want > n - (i - 1))
            n = i - 1;
    }
    s[n] = '\0';
    return n;
}
