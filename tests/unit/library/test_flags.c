/* SPDX-License-Identifier: BSD-3-Clause */
/* A client's state word (es_client.h): es_client_set_flags lets a client
 * live its whole life, and stops at each transition the header calls
 * illegal (an assert: the forked child that tries one dies of SIGABRT). */
#include "delivery/es_client.h"
#include "../unit.h"

#include <signal.h>

/* A transition: set (on) or clear `f`. */
struct step {
    unsigned f;
    bool on;
};

/* Versions 14 and 19 of clang-format lay a braced macro body out apart. */
/* clang-format off */
#define SET(f)   {(f), true}
#define CLEAR(f) {(f), false}
/* clang-format on */

/* The steps run() hands its child. */
static const struct step *child_steps;
static size_t child_n;

static void run_steps(int unused) {
    (void)unused;
    struct es_client c;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < child_n; i++)
        es_client_set_flags(&c, child_steps[i].f, child_steps[i].on);
}

/* Run the steps on a fresh client in a child; returns the signal that
 * ended it (0: it finished them all). */
static int run(const struct step *steps, size_t n) {
    child_steps = steps;
    child_n = n;
    return unit_dies_of(run_steps, 0);
}

#define RUN(...)                                                                                   \
    run((const struct step[]){__VA_ARGS__},                                                        \
        sizeof((const struct step[]){__VA_ARGS__}) / sizeof(struct step))

/* A whole life: started, a write with the header, lossless then demoted,
 * paused and resumed, a second write, shut down, closed; a write that had
 * finished before the close still counts. */
UNIT_CASE(flags_a_whole_life) {
    struct es_client c;
    memset(&c, 0, sizeof c);
    const struct step life[] = {
        SET(ES_CLIENT_STARTED),
        SET(ES_CLIENT_LOSSLESS),
        SET(ES_CLIENT_WRITING | ES_CLIENT_WRITE_HEADER),
        CLEAR(ES_CLIENT_WRITING | ES_CLIENT_WRITE_HEADER),
        SET(ES_CLIENT_HEADER_SENT),
        SET(ES_CLIENT_EVER_READ),
        SET(ES_CLIENT_COST_NOTICES),
        SET(ES_CLIENT_READ_PAUSED),
        CLEAR(ES_CLIENT_READ_PAUSED),
        CLEAR(ES_CLIENT_LOSSLESS),
        SET(ES_CLIENT_LOSSLESS_OVER),
        SET(ES_CLIENT_WRITING),
        CLEAR(ES_CLIENT_WRITING),
        SET(ES_CLIENT_FINISHING),
        SET(ES_CLIENT_CLOSING),
        SET(ES_CLIENT_EVER_READ),
        SET(ES_CLIENT_HEADER_SENT),
    };
    for (size_t i = 0; i < sizeof life / sizeof life[0]; i++)
        es_client_set_flags(&c, life[i].f, life[i].on);
    ok(c.flags == (ES_CLIENT_STARTED | ES_CLIENT_HEADER_SENT | ES_CLIENT_EVER_READ |
                   ES_CLIENT_COST_NOTICES | ES_CLIENT_LOSSLESS_OVER | ES_CLIENT_FINISHING |
                   ES_CLIENT_CLOSING),
       "a whole life ends in the expected word (%#x)", c.flags);
    ok(es_client_is(&c, ES_CLIENT_CLOSING | ES_CLIENT_FINISHING) &&
           !es_client_is(&c, ES_CLIENT_CLOSING | ES_CLIENT_WRITING),
       "es_client_is wants every bit asked for");
    ok(RUN(SET(ES_CLIENT_STARTED), SET(ES_CLIENT_CLOSING)) == 0, "the same in a child: it lives");
}

/* The transitions the asserts refuse: each one aborts its child. */
UNIT_CASE(flags_refused_transitions) {
    ok(RUN(SET(ES_CLIENT_CLOSING), CLEAR(ES_CLIENT_CLOSING)) == SIGABRT,
       "CLOSING is never cleared");
    ok(RUN(SET(ES_CLIENT_HEADER_SENT), CLEAR(ES_CLIENT_HEADER_SENT)) == SIGABRT,
       "HEADER_SENT is never cleared");
    ok(RUN(SET(ES_CLIENT_STARTED), SET(ES_CLIENT_STARTED)) == SIGABRT, "started twice");
    ok(RUN(SET(ES_CLIENT_WRITING), SET(ES_CLIENT_WRITING)) == SIGABRT,
       "a second write while one is in flight");
    ok(RUN(CLEAR(ES_CLIENT_WRITING)) == SIGABRT, "a write ends that never began");
    ok(RUN(SET(ES_CLIENT_CLOSING), SET(ES_CLIENT_WRITING)) == SIGABRT,
       "a write on a closing client");
    ok(RUN(SET(ES_CLIENT_CLOSING), SET(ES_CLIENT_LOSSLESS)) == SIGABRT,
       "lossless delivery for a closing client");
    ok(RUN(SET(ES_CLIENT_CLOSING), SET(ES_CLIENT_READ_PAUSED)) == SIGABRT,
       "a closing client paused for its budget");
    ok(RUN(SET(ES_CLIENT_LOSSLESS_OVER), SET(ES_CLIENT_LOSSLESS)) == SIGABRT,
       "lossless again after it ended");
    ok(RUN(CLEAR(ES_CLIENT_LOSSLESS)) == SIGABRT, "lossless ends that never began");
    ok(RUN(SET(ES_CLIENT_WRITE_HEADER)) == SIGABRT, "the header in no write");
    ok(RUN(SET(ES_CLIENT_HEADER_SENT), SET(ES_CLIENT_WRITING | ES_CLIENT_WRITE_HEADER)) == SIGABRT,
       "the header sent twice");
    ok(RUN(SET(ES_CLIENT_WRITING), SET(ES_CLIENT_FINISHING)) == SIGABRT,
       "shut down with a write in flight");
    ok(RUN(SET(ES_CLIENT_READ_EOF), SET(ES_CLIENT_READ_PAUSED)) == SIGABRT,
       "paused after the client's end of writing");
}
