/* SPDX-License-Identifier: BSD-3-Clause */
/* The intrusive queue (cbits/base/es_queue.h): order of insertion at
 * either end and after a node, removal anywhere (during a walk too),
 * membership and counts as an element moves between queues, and every
 * misuse the header asserts against stopping the program at the call (the
 * forked child that tries one dies of SIGABRT) rather than corrupting a
 * list. No GHC; run plain and under ASan/UBSan. */
#include "base/es_queue.h"
#include "../unit.h"

#include <signal.h>

struct item {
    int v;
    struct es_queue_node node;
};

#define ITEM(n) ES_QUEUE_DATA(n, struct item, node)

/* The values of `q`, first to last, as "1,2,3"; or what is wrong when the
 * walk backwards (es_queue_last, es_queue_prev) or the count disagree with
 * the walk forwards. */
static const char *values(struct es_queue *q) {
    static char out[256];
    int fwd[64], nf = 0;
    size_t len = 0;
    out[0] = '\0';
    ES_QUEUE_FOREACH(n, q) {
        if (nf == 64)
            return "(too long)";
        fwd[nf++] = ITEM(n)->v;
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%d", len ? "," : "", ITEM(n)->v);
    }
    int nb = 0;
    for (struct es_queue_node *n = es_queue_last(q); n != NULL; n = es_queue_prev(q, n))
        if (nb >= nf || fwd[nf - 1 - nb++] != ITEM(n)->v)
            return "(the walk backwards differs)";
    if (nb != nf || es_queue_len(q) != (size_t)nf)
        return "(the count differs from the walks)";
    return out;
}

static struct es_queue static_q = ES_QUEUE_INIT(static_q);

UNIT_CASE(queue_order) {
    ok(es_queue_empty(&static_q) && es_queue_valid(&static_q),
       "a queue in static storage, ES_QUEUE_INIT: empty and whole");
    struct es_queue q;
    es_queue_init(&q);
    ok(es_queue_empty(&q) && es_queue_len(&q) == 0 && es_queue_valid(&q), "a new queue is empty");
    ok(es_queue_first(&q) == NULL && es_queue_last(&q) == NULL && es_queue_pop_head(&q) == NULL,
       "an empty queue has no first, no last, nothing to pop");
    struct item it[6] = {{1, {0}}, {2, {0}}, {3, {0}}, {4, {0}}, {5, {0}}, {6, {0}}};
    es_queue_insert_tail(&q, &it[1].node);
    es_queue_insert_tail(&q, &it[2].node);
    es_queue_insert_head(&q, &it[0].node);
    ok(strcmp(values(&q), "1,2,3") == 0, "tail, tail, head: 1,2,3 (%s)", values(&q));
    es_queue_insert_after(&q, &it[2].node, &it[3].node);
    es_queue_insert_after(&q, &it[0].node, &it[4].node);
    ok(strcmp(values(&q), "1,5,2,3,4") == 0, "after the last and after the first: 1,5,2,3,4 (%s)",
       values(&q));
    ok(es_queue_len(&q) == 5 && es_queue_valid(&q), "five elements, all links whole");
    es_queue_remove(&q, &it[4].node);
    es_queue_remove(&q, &it[0].node);
    es_queue_remove(&q, &it[3].node);
    ok(strcmp(values(&q), "2,3") == 0 && es_queue_len(&q) == 2,
       "the middle, the first and the last removed: 2,3 (%s)", values(&q));
    ok(!es_queue_linked(&it[0].node) && it[0].node.next == NULL && it[0].node.prev == NULL,
       "a removed node is in no queue and points nowhere");
    es_queue_insert_head(&q, &it[0].node);
    ok(strcmp(values(&q), "1,2,3") == 0, "a removed node goes back in: 1,2,3 (%s)", values(&q));
    struct es_queue_node *p = es_queue_pop_head(&q);
    ok(p == &it[0].node && !es_queue_linked(p) && strcmp(values(&q), "2,3") == 0,
       "pop_head takes the first out");
}

/* Removing while walking: the safe walk reaches every node once. */
UNIT_CASE(queue_removal_during_walk) {
    struct es_queue q;
    es_queue_init(&q);
    struct item it[10];
    for (int i = 0; i < 10; i++) {
        it[i] = (struct item){.v = i};
        es_queue_insert_tail(&q, &it[i].node);
    }
    int visited = 0;
    ES_QUEUE_FOREACH_SAFE(n, &q) {
        visited++;
        if (ITEM(n)->v % 2 == 0)
            es_queue_remove(&q, n);
    }
    ok(visited == 10 && strcmp(values(&q), "1,3,5,7,9") == 0,
       "every node visited once, the even ones removed on the way: %s", values(&q));
    ES_QUEUE_FOREACH_SAFE(n, &q) {
        es_queue_remove(&q, n);
    }
    ok(es_queue_empty(&q) && es_queue_valid(&q), "all removed: empty, links whole");
}

/* An element moves between queues: each says whether it holds it. */
UNIT_CASE(queue_membership) {
    struct es_queue a, b;
    es_queue_init(&a);
    es_queue_init(&b);
    struct item x = {.v = 7}, y = {.v = 8};
    ok(!es_queue_linked(&x.node) && !es_queue_contains(&a, &x.node),
       "a zeroed node is in no queue");
    es_queue_insert_tail(&a, &x.node);
    es_queue_insert_tail(&b, &y.node);
    ok(es_queue_contains(&a, &x.node) && !es_queue_contains(&b, &x.node) &&
           es_queue_contains(&b, &y.node) && !es_queue_contains(&a, &y.node),
       "each queue holds its own element only");
    es_queue_remove(&a, &x.node);
    es_queue_insert_head(&b, &x.node);
    ok(!es_queue_contains(&a, &x.node) && es_queue_contains(&b, &x.node) && es_queue_len(&a) == 0 &&
           es_queue_len(&b) == 2,
       "moved from a to b: counts 0 and 2");
    ok(strcmp(values(&b), "7,8") == 0 && es_queue_valid(&a) && es_queue_valid(&b),
       "b is 7,8 and both are whole");
}

/* A batch handed over at once: appended in order, every element now
 * says it is in the new queue, the old one empty and reusable. */
UNIT_CASE(queue_move) {
    struct es_queue a, b;
    es_queue_init(&a);
    es_queue_init(&b);
    struct item it[5] = {{1, {0}}, {2, {0}}, {3, {0}}, {4, {0}}, {5, {0}}};
    es_queue_move(&b, &a);
    ok(es_queue_empty(&a) && es_queue_empty(&b) && es_queue_valid(&a) && es_queue_valid(&b),
       "moving an empty queue changes nothing");
    es_queue_insert_tail(&b, &it[0].node);
    for (int i = 1; i < 4; i++)
        es_queue_insert_tail(&a, &it[i].node);
    es_queue_move(&b, &a);
    ok(strcmp(values(&b), "1,2,3,4") == 0 && es_queue_len(&b) == 4,
       "three moved after one: 1,2,3,4 (%s)", values(&b));
    ok(es_queue_empty(&a) && es_queue_valid(&a) && es_queue_valid(&b),
       "the source is empty, both are whole");
    bool all_in_b = true;
    for (int i = 0; i < 4; i++)
        all_in_b = all_in_b && es_queue_contains(&b, &it[i].node);
    ok(all_in_b, "every moved element says it is in the new queue");
    es_queue_insert_tail(&a, &it[4].node);
    es_queue_remove(&b, &it[2].node);
    ok(strcmp(values(&a), "5") == 0 && strcmp(values(&b), "1,2,4") == 0,
       "the emptied queue takes new elements; a moved one is removed from its new queue");
}

/* What es_queue_valid notices: a neighbour that does not point back, a
 * node that says it is elsewhere, a count that is off. */
UNIT_CASE(queue_validity) {
    struct es_queue q, other;
    es_queue_init(&q);
    es_queue_init(&other);
    struct item it[3] = {{1, {0}}, {2, {0}}, {3, {0}}};
    for (int i = 0; i < 3; i++)
        es_queue_insert_tail(&q, &it[i].node);
    ok(es_queue_valid(&q), "three linked: valid");
    struct es_queue_node *saved = it[1].node.prev;
    it[1].node.prev = &it[1].node;
    ok(!es_queue_valid(&q), "a node whose prev does not point back: invalid");
    it[1].node.prev = saved;
    it[2].node.in = &other;
    ok(!es_queue_valid(&q), "a node that says it is in another queue: invalid");
    it[2].node.in = &q;
    q.n = 4;
    ok(!es_queue_valid(&q), "a count one too high: invalid");
    q.n = 2;
    ok(!es_queue_valid(&q), "a count one too low: invalid");
    q.n = 3;
    ok(es_queue_valid(&q), "restored: valid again");
    struct es_queue moved = q; /* a head copied elsewhere: its elements point at the old one */
    ok(!es_queue_valid(&moved), "a queue moved in memory: invalid");
    struct es_queue zero = {0};
    ok(!es_queue_valid(&zero), "a queue never initialised: invalid");
}

/* The misuses the header asserts against, each in a child: 0 when it
 * finished, the signal that ended it otherwise. */
enum misuse {
    REMOVE_TWICE,
    REMOVE_FROM_OTHER,
    INSERT_TWICE,
    INSERT_IN_SECOND,
    REMOVE_NEVER_INSERTED,
    REMOVE_BROKEN_LINK,
    AFTER_FOREIGN_NODE,
    NEXT_FOREIGN_NODE,
    INSERT_UNINITIALISED,
    REMOVE_HEAD,
    REMOVE_AFTER_MOVE,
    REMOVE_ONCE, /* no misuse: the child finishes */
};

static void misuse_run(enum misuse m) {
    struct es_queue a, b;
    es_queue_init(&a);
    es_queue_init(&b);
    struct item x = {.v = 1}, y = {.v = 2};
    es_queue_insert_tail(&a, &x.node);
    switch (m) {
    case REMOVE_TWICE:
        es_queue_remove(&a, &x.node);
        es_queue_remove(&a, &x.node);
        break;
    case REMOVE_FROM_OTHER:
        es_queue_insert_tail(&b, &y.node);
        es_queue_remove(&b, &x.node);
        break;
    case INSERT_TWICE:
        es_queue_insert_tail(&a, &x.node);
        break;
    case INSERT_IN_SECOND:
        es_queue_insert_head(&b, &x.node);
        break;
    case REMOVE_NEVER_INSERTED:
        es_queue_remove(&a, &y.node);
        break;
    case REMOVE_BROKEN_LINK:
        es_queue_insert_tail(&a, &y.node);
        x.node.next = &x.node; /* y's prev no longer matches */
        es_queue_remove(&a, &x.node);
        break;
    case AFTER_FOREIGN_NODE:
        es_queue_insert_tail(&b, &y.node);
        {
            struct item z = {.v = 3};
            es_queue_insert_after(&a, &y.node, &z.node);
        }
        break;
    case NEXT_FOREIGN_NODE:
        es_queue_insert_tail(&b, &y.node);
        (void)es_queue_next(&a, &y.node);
        break;
    case INSERT_UNINITIALISED: {
        struct es_queue z = {0};
        es_queue_insert_tail(&z, &y.node);
        break;
    }
    case REMOVE_HEAD:
        es_queue_remove(&a, &a.head);
        break;
    case REMOVE_AFTER_MOVE:
        es_queue_move(&b, &a);
        es_queue_remove(&a, &x.node);
        break;
    case REMOVE_ONCE:
        es_queue_remove(&a, &x.node);
        break;
    }
}

static void misuse_child(int m) {
    misuse_run((enum misuse)m);
}

static int misuse(enum misuse m) {
    return unit_dies_of(misuse_child, (int)m);
}

UNIT_CASE(queue_asserts) {
#ifdef NDEBUG
    ok(1, "# SKIP built with NDEBUG: no asserts to test");
#else
    ok(misuse(REMOVE_ONCE) == 0, "removing a node once is fine");
    ok(misuse(REMOVE_TWICE) == SIGABRT, "removing a node twice stops at the second removal");
    ok(misuse(REMOVE_FROM_OTHER) == SIGABRT, "removing a node from a queue it is not in stops");
    ok(misuse(INSERT_TWICE) == SIGABRT, "inserting a node already in the queue stops");
    ok(misuse(INSERT_IN_SECOND) == SIGABRT, "inserting a node that is in another queue stops");
    ok(misuse(REMOVE_NEVER_INSERTED) == SIGABRT, "removing a node never inserted stops");
    ok(misuse(REMOVE_BROKEN_LINK) == SIGABRT,
       "removing a node whose neighbour does not point back stops");
    ok(misuse(AFTER_FOREIGN_NODE) == SIGABRT, "inserting after another queue's node stops");
    ok(misuse(NEXT_FOREIGN_NODE) == SIGABRT, "asking for the next of another queue's node stops");
    ok(misuse(INSERT_UNINITIALISED) == SIGABRT, "inserting into a queue never initialised stops");
    ok(misuse(REMOVE_HEAD) == SIGABRT, "removing the head stops");
    ok(misuse(REMOVE_AFTER_MOVE) == SIGABRT,
       "removing a moved node from the queue it was moved out of stops");
#endif
}

/* Many elements, in and out in a scrambled order, against a plain array
 * of who is in. */
UNIT_CASE(queue_many) {
    enum { N = 1000 };
    static struct item it[N];
    static bool in[N];
    struct es_queue q;
    es_queue_init(&q);
    size_t count = 0;
    unsigned r = 12345;
    bool agree = true;
    for (int step = 0; step < 20000; step++) {
        r = r * 1103515245u + 12345u;
        int i = (int)((r >> 8) % N);
        if (in[i]) {
            es_queue_remove(&q, &it[i].node);
            count--;
        } else {
            it[i].v = i;
            if (r & 1)
                es_queue_insert_head(&q, &it[i].node);
            else
                es_queue_insert_tail(&q, &it[i].node);
            count++;
        }
        in[i] = !in[i];
        if (es_queue_contains(&q, &it[i].node) != in[i] || es_queue_len(&q) != count)
            agree = false;
    }
    ok(agree, "20000 scrambled inserts and removals: membership and count always agree");
    ok(es_queue_valid(&q), "and the queue of %zu is whole", count);
    size_t walked = 0;
    ES_QUEUE_FOREACH(n, &q) {
        walked += in[ITEM(n)->v];
    }
    ok(walked == count, "its walk meets exactly the %zu elements in it", count);
}
