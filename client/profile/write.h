/* SPDX-License-Identifier: BSD-3-Clause */
/* A time profile (prof.h) written in the formats the tools people use read:
 *
 *  - folded stacks (`.folded`): one line per distinct stack, frames root
 *    first joined by ';', a space, the number of samples; what
 *    flamegraph.pl, inferno and speedscope read;
 *  - speedscope's file format (`.speedscope.json`): one sampled profile per
 *    capability, in time order, weighted in seconds;
 *  - pprof's profile.proto, gzipped (`.pb.gz`): what `pprof`, Pyroscope
 *    and Grafana read; values "samples" (count) and "cpu" (nanoseconds).
 *
 * Each returns 0, or an errno value (the file is then incomplete). Called
 * by `profile`'s thread. */
#ifndef ES_PROFWRITE_H
#define ES_PROFWRITE_H

#include "prof.h"

#include <stdio.h>

enum es_profwrite_format {
    ES_PROFWRITE_NONE,
    ES_PROFWRITE_FOLDED,
    ES_PROFWRITE_SPEEDSCOPE,
    ES_PROFWRITE_PPROF,
};

/* The format a file name's ending asks for; NONE for another ending. */
enum es_profwrite_format es_profwrite_format_of(const char *path);

/* `name`: the program's name, for the profile's title ("" if unknown). */
int es_profwrite(FILE *f, enum es_profwrite_format fmt, const struct es_prof *p, const char *name);

#endif
