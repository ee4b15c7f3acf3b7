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
 * by `profile`'s thread. And the tree the web page's flame graph draws
 * (es_profwrite_tree), by the thread that owns the profile. */
#ifndef ES_PROFWRITE_H
#define ES_PROFWRITE_H

#include "prof.h"
#include "http/buf.h"

#include <stdint.h>
#include <stdio.h>

enum es_profwrite_format {
    ES_PROFWRITE_NONE,
    ES_PROFWRITE_FOLDED,
    ES_PROFWRITE_SPEEDSCOPE,
    ES_PROFWRITE_PPROF,
};

/* The format a file name's ending asks for; NONE for another ending. */
enum es_profwrite_format es_profwrite_format_of(const char *path);

/* The profile as one tree, d3-flame-graph's form, into `b`: {"name":
 * "MAIN", "value": samples, "children": [...]}, each node a cost centre
 * under its caller, its value the samples of every stack through it (the
 * root's: all of them; what its children leave is its own). Nodes of fewer
 * than `least` samples (1 if 0) are left out, their samples left in their
 * parent's. The names are JSON strings fit for an HTML <script>. Returns 0
 * or ENOMEM (the text is then incomplete). */
int es_profwrite_tree(struct es_httpbuf *b, const struct es_prof *p, uint64_t least);

/* `name`: the program's name, for the profile's title ("" if unknown). */
int es_profwrite(FILE *f, enum es_profwrite_format fmt, const struct es_prof *p, const char *name);

#endif
