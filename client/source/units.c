/* SPDX-License-Identifier: BSD-3-Clause */
#include "units.h"
#include "base/es_duration.h"

bool es_units_duration(const char *text, uint64_t *ns) {
    return es_duration_parse(text, ns);
}

bool es_units_seconds(const char *text, double max_s, bool zero_ok, double *s) {
    uint64_t ns;
    if (!es_units_duration(text, &ns) || (ns == 0 && !zero_ok) || (double)ns > max_s * 1e9)
        return false;
    *s = (double)ns / 1e9;
    return true;
}
