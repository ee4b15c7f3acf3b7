/* SPDX-License-Identifier: BSD-3-Clause */
/* Prometheus's text exposition format (version 0.0.4) of the programs an
 * exporter follows: each program's model (client/model/model.h) and what its
 * connection knows, written family by family (every sample of a metric
 * together, its HELP and TYPE first), with the labels program, pid and
 * source on every sample. A figure the program's eventlog has not
 * delivered is left out, never written as 0; what a program's eventlog
 * lacks (a heap profile, live delivery before GHC 9.2, spark counters) is
 * said by ghc_eventlog_lacking_info. Pure: no I/O; used by the thread that
 * owns the models (`metrics`'s loop thread). */
#ifndef ES_PROMTEXT_H
#define ES_PROMTEXT_H

#include "model/model.h"
#include "http/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The N largest census labels written by default; the rest are summed
 * under label="other". */
#define ES_PROMTEXT_TOP_LABELS 20

/* One program (or one source with nobody there yet). */
struct es_promtext_target {
    const struct es_model *m; /* NULL: no eventlog from it (only connected 0) */
    const char *program;      /* the name, "" when unknown */
    uint32_t pid;             /* 0 when unknown */
    const char *source;       /* the address it is read from */
    bool connected;
    uint64_t received_bytes; /* eventlog bytes received from it */
    /* For GHC 9.0, which streams its heap profile's set-up at exit: an -h
     * option in the server process's arguments or GHCRTS (1), none (0),
     * cannot tell (-1; es_heapmode_of_pid). */
    int heap_mode_proc;
};

/* Append the exposition of `n` targets to `b`; `top` census labels each. */
void es_promtext_write(struct es_httpbuf *b, const struct es_promtext_target *t, size_t n,
                       unsigned top);

#endif
