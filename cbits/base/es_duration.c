/* SPDX-License-Identifier: BSD-3-Clause */
/* Durations as people type them (es_duration.h). */
#include "es_duration.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define YEAR_NS 31536000e9

bool es_duration_parse(const char *text, uint64_t *ns) {
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"", 1e9},   {"s", 1e9},  {"ns", 1},     {"us", 1e3},
                 {"ms", 1e6}, {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}};
    if (text == NULL || !((text[0] >= '0' && text[0] <= '9') || text[0] == '.'))
        return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || !(v >= 0) || strspn(text, "0123456789.") != (size_t)(end - text))
        return false; /* digits and a point only: no exponent, no hexadecimal */
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) != 0)
            continue;
        double t = v * units[i].ns;
        if (t > YEAR_NS)
            return false;
        *ns = (uint64_t)(t + 0.5);
        return true;
    }
    return false;
}
