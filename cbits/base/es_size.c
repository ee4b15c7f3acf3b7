/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_size.h"

#include <stddef.h>

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static char upper(char c) {
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* What follows the number: nothing or B (a shift of 0), or a unit and
 * nothing, B or iB after it. The unit's shift, or -1. */
static int unit_shift(const char *s) {
    static const char units[] = "KMGT";
    int shift = 0;
    for (int i = 0; units[i] != '\0'; i++)
        if (upper(s[0]) == units[i])
            shift = 10 * (i + 1);
    if (shift != 0) {
        s++;
        if (upper(s[0]) == 'I' && upper(s[1]) == 'B')
            s++;
    }
    if (upper(s[0]) == 'B')
        s++;
    return s[0] == '\0' ? shift : -1;
}

bool es_size_parse(const char *text, uint64_t *bytes) {
    if (text == NULL || !is_digit(text[0]))
        return false;
    const char *s = text;
    uint64_t v = 0;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    int shift = unit_shift(s);
    if (shift < 0 || v > (UINT64_MAX >> shift))
        return false;
    *bytes = v << shift;
    return true;
}
