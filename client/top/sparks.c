/* SPDX-License-Identifier: BSD-3-Clause */
/* The sparks block of `top` (client/top/sparks.h). */
#include "sparks.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

/* The table fits 80 columns below this width: shorter headings
 * ("conv'd", "ovflw'd") and narrower columns. */
#define WIDE_COLS 90

/* One row of the table: a name and the counters, pool and rate. */
static void row(char *out, bool wide, const char *name, const uint64_t v[ES_SPARK_KINDS],
                uint64_t pool, double rate) {
    unsigned long long c[ES_SPARK_KINDS];
    for (int k = 0; k < ES_SPARK_KINDS; k++)
        c[k] = (unsigned long long)v[k];
    if (wide)
        snprintf(out, ES_TOP_SPARK_LEN, "  %-6s %9llu %9llu %9llu %9llu %9llu %10llu %7llu %9.0f",
                 name, c[ES_SPARK_CREATED], c[ES_SPARK_CONVERTED], c[ES_SPARK_FIZZLED],
                 c[ES_SPARK_GCD], c[ES_SPARK_DUD], c[ES_SPARK_OVERFLOWED], (unsigned long long)pool,
                 rate);
    else
        snprintf(out, ES_TOP_SPARK_LEN, "  %-5s %8llu %8llu %8llu %8llu %8llu %8llu %6llu %7.0f",
                 name, c[ES_SPARK_CREATED], c[ES_SPARK_CONVERTED], c[ES_SPARK_FIZZLED],
                 c[ES_SPARK_GCD], c[ES_SPARK_DUD], c[ES_SPARK_OVERFLOWED], (unsigned long long)pool,
                 rate);
}

size_t es_top_sparks_lines(const struct es_model *m, char lines[][ES_TOP_SPARK_LEN], size_t max,
                           int cols) {
    bool wide = cols >= WIDE_COLS;
    if (max == 0)
        return 0;
    if (max > ES_TOP_SPARK_LINES)
        max = ES_TOP_SPARK_LINES;
    if (!m->sparks_seen) {
        snprintf(lines[0], ES_TOP_SPARK_LEN,
                 "Sparks  no spark counters yet (%s at GCs and at exit; "
                 "+RTS -l's p class)",
                 wide ? "the RTS posts them" : "posted");
        return 1;
    }
    if (!es_model_has_sparks(m)) {
        snprintf(lines[0], ES_TOP_SPARK_LEN, "Sparks  no sparks: the program made none (par)");
        return 1;
    }
    size_t n = 0;
    if (wide)
        snprintf(lines[n++], ES_TOP_SPARK_LEN, "Sparks  %9s %9s %9s %9s %9s %10s %7s %9s",
                 "created", "converted", "fizzled", "GC'd", "dud", "overflowed", "pool", "rate/s");
    else
        snprintf(lines[n++], ES_TOP_SPARK_LEN, "Sparks %8s %8s %8s %8s %8s %8s %6s %7s", "created",
                 "conv'd", "fizzled", "GC'd", "dud", "ovflw'd", "pool", "rate/s");
    uint64_t v[ES_SPARK_KINDS];
    es_model_sparks(m, v);
    if (n < max)
        row(lines[n++], wide, "all", v, es_model_spark_pool(m, ES_MODEL_MAX_CAPS),
            es_model_spark_rate(m, ES_MODEL_MAX_CAPS));
    bool events = m->spark_events_seen;
    unsigned ncaps = m->ncaps;
    if (ncaps > ES_MODEL_MAX_CAPS)
        ncaps = ES_MODEL_MAX_CAPS;
    size_t room = max - n - (events && max - n > 1 ? 1 : 0);
    for (unsigned c = 0; c < ncaps && room > 0; c++, room--) {
        if (room == 1 && c + 1 < ncaps) {
            snprintf(lines[n++], ES_TOP_SPARK_LEN, "  (+%u more capabilities)", ncaps - c);
            break;
        }
        char name[16];
        snprintf(name, sizeof name, "cap %u", c);
        es_model_cap_sparks(m, c, v);
        row(lines[n++], wide, name, v, es_model_spark_pool(m, c), es_model_spark_rate(m, c));
    }
    if (events && n < max) {
        uint64_t e[ES_SPARK_EV_KINDS];
        es_model_spark_events(m, e);
        snprintf(lines[n++], ES_TOP_SPARK_LEN,
                 "  events (-lf): create %llu run %llu steal %llu fizzle %llu gc %llu dud %llu "
                 "overflow %llu",
                 (unsigned long long)e[ES_SPARK_EV_CREATE], (unsigned long long)e[ES_SPARK_EV_RUN],
                 (unsigned long long)e[ES_SPARK_EV_STEAL],
                 (unsigned long long)e[ES_SPARK_EV_FIZZLE], (unsigned long long)e[ES_SPARK_EV_GC],
                 (unsigned long long)e[ES_SPARK_EV_DUD],
                 (unsigned long long)e[ES_SPARK_EV_OVERFLOW]);
    }
    return n;
}

int es_top_sparks_draw(const struct es_model *m, int y, size_t max) {
    char lines[ES_TOP_SPARK_LINES][ES_TOP_SPARK_LEN];
    size_t n = es_top_sparks_lines(m, lines, max, COLS);
    for (size_t i = 0; i < n && y < LINES; i++, y++) {
        attr_t a = i > 0 ? A_NORMAL : es_model_has_sparks(m) ? A_UNDERLINE : A_DIM;
        attron(a);
        mvaddnstr(y, 0, lines[i], COLS);
        attroff(a);
        if (i == 0) {
            attron(A_BOLD);
            mvaddnstr(y, 0, "Sparks", COLS);
            attroff(A_BOLD);
        }
    }
    return y;
}
