/* SPDX-License-Identifier: BSD-3-Clause */
/* Hand-made events for the unit tests of the command's model (test_model_census,
 * test_model_threads): a payload built field by field, big-endian as the
 * RTS writes it, then given to es_model_event. The test's one thread. */
#ifndef ES_TEST_MODEL_EVENTS_H
#define ES_TEST_MODEL_EVENTS_H

#include "model/model.h"

#include <stdbool.h>
#include <string.h>

struct ev {
    struct es_event e;
    uint8_t p[600];
    size_t n;
};

/* An event of `type` at `time` with an empty payload. */
static inline struct ev *mk(struct ev *b, uint16_t type, uint64_t time) {
    memset(b, 0, sizeof *b);
    b->e.type = type;
    b->e.time = time;
    return b;
}

/* `v` appended as an `n`-byte big-endian field. */
static inline struct ev *u(struct ev *b, uint64_t v, int n) {
    es_put_be(b->p + b->n, v, n);
    b->n += (size_t)n;
    return b;
}

/* `s` appended, with its NUL when `nul`. */
static inline struct ev *str(struct ev *b, const char *s, bool nul) {
    size_t l = strlen(s) + nul;
    memcpy(b->p + b->n, s, l);
    b->n += l;
    return b;
}

/* The event to the model. Its length counts the size field a thread
 * label has before its payload (the threads' tests read it); the other
 * events are counted as if of fixed size. */
static inline void put(struct es_model *m, struct ev *b) {
    b->e.payload = b->p;
    b->e.payload_len = b->n;
    b->e.len = 10 + b->n + (b->e.type == ES_EVENT_THREAD_LABEL ? 2 : 0);
    es_model_event(m, &b->e);
}

#endif
