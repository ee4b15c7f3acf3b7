/* SPDX-License-Identifier: BSD-3-Clause */
/* The fan-out's list of clients (cbits/delivery/es_fanout.h): joining and
 * leaving keep the list and the count the stats report (clients_connected)
 * in step, and a client that leaves twice, or leaves a stream it never
 * joined, stops the program at the call (the forked child that tries it
 * dies of SIGABRT) instead of emptying the list of the clients still
 * there and wrapping the count round. No GHC; run plain and under
 * ASan/UBSan. */
#include "delivery/es_client.h"
#include "delivery/es_fanout.h"
#include "delivery/es_notice.h"
#include "delivery/es_pool.h"
#include "format/es_header.h"
#include "../unit.h"

#include <signal.h>

enum misuse { LEAVE_ONCE, LEAVE_TWICE, LEAVE_NEVER_JOINED, LEAVE_OTHER_STREAM };

static struct es_counters counters;

/* The clients `f` walks, as a count; -1 when a client shows up twice. */
static int walked(struct es_fanout *f, struct es_client *const *all, int n) {
    int seen[8] = {0}, total = 0;
    es_fanout_each(f, c, next) {
        for (int i = 0; i < n; i++)
            if (all[i] == c && seen[i]++ > 0)
                return -1;
        total++;
    }
    return total;
}

static void misuse_run(enum misuse m) {
    struct es_fanout f, other;
    es_fanout_init(&f, &counters, 1 << 20, 1 << 20);
    es_fanout_init(&other, &counters, 1 << 20, 1 << 20);
    struct es_client *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b),
                     *c = calloc(1, sizeof *c), *d = calloc(1, sizeof *d);
    es_fanout_join(&f, a);
    es_fanout_join(&f, b);
    es_fanout_join(&other, d);
    switch (m) {
    case LEAVE_ONCE:
        es_fanout_leave(&f, a);
        /* b is still served, and counted. */
        _exit(es_fanout_nclients(&f) == 1 && es_fanout_first(&f) == b ? 0 : 1);
    case LEAVE_TWICE:
        es_fanout_leave(&f, a);
        es_fanout_leave(&f, a);
        break;
    case LEAVE_NEVER_JOINED:
        es_fanout_leave(&f, c);
        break;
    case LEAVE_OTHER_STREAM:
        es_fanout_leave(&f, d);
        break;
    }
    /* Got through: what is left of the list says how wrong it went. */
    _exit(es_fanout_nclients(&f) == 1 ? 2 : 3);
}

static void misuse_child(int m) {
    misuse_run((enum misuse)m);
}

/* The signal that ended a child doing `m`; 0 when it exited well, -1 when
 * it exited reporting a wrong list. */
static int misuse(enum misuse m) {
    return unit_dies_of(misuse_child, (int)m);
}

/* Joining and leaving, from the middle and during a walk. */
UNIT_CASE(fanout_join_and_leave) {
    struct es_fanout f;
    es_fanout_init(&f, &counters, 1 << 20, 1 << 20);
    struct es_client *all[3];
    for (int i = 0; i < 3; i++) {
        all[i] = calloc(1, sizeof *all[i]);
        es_fanout_join(&f, all[i]);
    }
    ok(es_fanout_nclients(&f) == 3 && atomic_load(&counters.clients_connected) == 3,
       "three clients joined: three counted, in the stats too");
    ok(walked(&f, all, 3) == 3, "the walk meets each client once");
    ok(es_fanout_first(&f) == all[2], "the newest client comes first");
    es_fanout_leave(&f, all[1]);
    ok(es_fanout_nclients(&f) == 2 && atomic_load(&counters.clients_connected) == 2 &&
           walked(&f, all, 3) == 2,
       "one left from the middle: two counted and walked");
    es_fanout_each(&f, c, next) es_fanout_leave(&f, c);
    ok(es_fanout_nclients(&f) == 0 && atomic_load(&counters.clients_connected) == 0 &&
           es_fanout_first(&f) == NULL,
       "every client left during a walk: none counted, none walked");
    for (int i = 0; i < 3; i++)
        free(all[i]);
    es_fanout_destroy(&f);
}

/* Leaving twice, or a stream never joined, stops at the call. */
UNIT_CASE(fanout_misuse) {
    ok(misuse(LEAVE_ONCE) == 0, "a client leaving once leaves the others served");
#ifdef NDEBUG
    ok(1, "# SKIP asserts are compiled out");
#else
    ok(misuse(LEAVE_TWICE) == SIGABRT,
       "a client leaving twice stops at the second leave (the list of the others kept)");
    ok(misuse(LEAVE_NEVER_JOINED) == SIGABRT, "a client that never joined cannot leave");
    ok(misuse(LEAVE_OTHER_STREAM) == SIGABRT, "a client cannot leave another fan-out's stream");
#endif
}

/* Nothing follows the end marker: a notice the library makes after it (a
 * wait notice sent by a timer during the exit's linger) is let go, not
 * appended behind it, where a client would read bytes past the end. */
UNIT_CASE(fanout_nothing_after_the_end) {
    size_t len;
    unsigned char *log = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    struct es_header h;
    ok(es_header_parse(log, len, &h) == 0, "a recorded header");
    struct es_fanout f;
    es_fanout_init(&f, &counters, 1 << 20, 1 << 20);
    struct es_chunk *hdr = es_pool_chunk_new(log, h.len);
    hdr->flags |= ES_CHUNK_HEADER;
    es_fanout_ingest(&f, hdr);
    static const unsigned char end_marker[2] = {0xff, 0xff};
    struct es_chunk *end = es_pool_chunk_new(end_marker, sizeof end_marker);
    end->flags |= ES_CHUNK_END;
    es_fanout_ingest(&f, end);
    uint64_t at_end = es_store_end_offset(&f.store);
    ok(es_fanout_ended(&f) && at_end == 2, "the end marker came (%llu bytes after the header)",
       (unsigned long long)at_end);
    es_fanout_append(&f, es_notice_message(es_fanout_header(&f), 1, "after the end"));
    ok(es_store_end_offset(&f.store) == at_end,
       "a notice made after it is not appended (the stream ends at %llu, not %llu)",
       (unsigned long long)at_end, (unsigned long long)es_store_end_offset(&f.store));
    es_fanout_destroy(&f);
    free(log);
}
