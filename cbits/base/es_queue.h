/* SPDX-License-Identifier: BSD-3-Clause */
/* The one list of the library and the command: an intrusive, circular,
 * doubly linked queue. A struct that goes into a queue embeds a
 * struct es_queue_node; the queue is a struct es_queue whose head is a node
 * of its own, linked to the first and the last element (so that inserting
 * and removing never test for an end). Nothing is allocated: an element is
 * as long-lived as its owner makes it, and ES_QUEUE_DATA gives the struct
 * back from its node.
 *
 * Every change is checked against the queue's invariants (assert, so it
 * costs nothing under NDEBUG): a node is in at most one queue at a time,
 * and each node knows which (`in`), so that inserting a node that is
 * already in a queue, or removing one from a queue it is not in, or twice,
 * stops at the call instead of corrupting both lists; the neighbours of a
 * node point back at it; the count never underflows. These checks are
 * O(1). es_queue_valid walks a whole queue (O(n)) for tests and for
 * asserts where a walk is cheap.
 *
 *   struct item { int v; struct es_queue_node node; };
 *   struct es_queue q;
 *   es_queue_init(&q);
 *   struct item *it = calloc(1, sizeof *it);   (zeroed: in no queue)
 *   es_queue_insert_tail(&q, &it->node);
 *   ES_QUEUE_FOREACH_SAFE(n, &q) {
 *       struct item *x = ES_QUEUE_DATA(n, struct item, node);
 *       es_queue_remove(&q, n);
 *       free(x);
 *   }
 *
 * A zeroed node is in no queue; a queue must be es_queue_init'ed before
 * use, and not moved in memory (its head is pointed at) while it holds
 * elements. There is no lock: a queue belongs to one thread, or is used
 * under its owner's lock, as the state it lives in. Header-only. */
#ifndef ES_QUEUE_H
#define ES_QUEUE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct es_queue;

struct es_queue_node {
    struct es_queue_node *next, *prev;
    const struct es_queue *in; /* the queue it is in, NULL for none */
};

struct es_queue {
    struct es_queue_node head; /* head.next: the first element, head.prev: the last */
    size_t n;                  /* elements */
};

/* The struct of type `type` whose member `field` is the node `node`. */
#define ES_QUEUE_DATA(node, type, field) ((type *)es_queue_base((node), offsetof(type, field)))

/* ES_QUEUE_DATA's arithmetic: the address `offset` bytes before `node`. */
static inline void *es_queue_base(struct es_queue_node *node, size_t offset) {
    return (char *)node - offset;
}

/* Each node of `q`, first to last, as `struct es_queue_node *var`; the
 * loop's body must not remove `var` (the _SAFE form may: it reads the next
 * node first). Neither may remove any other node of `q`. */
#define ES_QUEUE_FOREACH(var, q)                                                                   \
    for (struct es_queue_node *var = (q)->head.next; var != &(q)->head; var = var->next)
#define ES_QUEUE_FOREACH_SAFE(var, q)                                                              \
    for (struct es_queue_node *var = (q)->head.next, *var##_next_ = var->next; var != &(q)->head;  \
         var = var##_next_, var##_next_ = var->next)

/* An empty queue as a static initialiser: `static struct es_queue q =
 * ES_QUEUE_INIT(q);` (for a queue in static storage, ready before any
 * code runs). */
/* clang-format 14 and 19+ lay a braced macro body out differently. */
/* clang-format off */
#define ES_QUEUE_INIT(q) {.head = {.next = &(q).head, .prev = &(q).head, .in = &(q)}, .n = 0}
/* clang-format on */

static inline void es_queue_init(struct es_queue *q) {
    q->head.next = q->head.prev = &q->head;
    q->head.in = q;
    q->n = 0;
}

static inline size_t es_queue_len(const struct es_queue *q) {
    return q->n;
}

static inline bool es_queue_empty(const struct es_queue *q) {
    assert((q->n == 0) == (q->head.next == &q->head));
    return q->n == 0;
}

/* Whether `e` is in some queue. */
static inline bool es_queue_linked(const struct es_queue_node *e) {
    return e->in != NULL;
}

/* Whether `e` is in `q` (O(1): the node says which queue it is in). */
static inline bool es_queue_contains(const struct es_queue *q, const struct es_queue_node *e) {
    return e->in == q;
}

/* The first, last, next and previous node of `q`, or NULL past its ends.
 * `e` must be in `q`. */
static inline struct es_queue_node *es_queue_first(struct es_queue *q) {
    return q->head.next != &q->head ? q->head.next : NULL;
}
static inline struct es_queue_node *es_queue_last(struct es_queue *q) {
    return q->head.prev != &q->head ? q->head.prev : NULL;
}
static inline struct es_queue_node *es_queue_next(struct es_queue *q, struct es_queue_node *e) {
    assert(e->in == q);
    return e->next != &q->head ? e->next : NULL;
}
static inline struct es_queue_node *es_queue_prev(struct es_queue *q, struct es_queue_node *e) {
    assert(e->in == q);
    return e->prev != &q->head ? e->prev : NULL;
}

/* Link `e`, which is in no queue, between `prev` and `prev->next` of `q`. */
static inline void es_queue_link_(struct es_queue *q, struct es_queue_node *prev,
                                  struct es_queue_node *e) {
    assert(q->head.in == q); /* initialised, and not moved since */
    assert(e->in == NULL && e->next == NULL && e->prev == NULL);
    assert(prev->in == q && prev->next->prev == prev);
    assert(q->n < SIZE_MAX);
    e->prev = prev;
    e->next = prev->next;
    prev->next->prev = e;
    prev->next = e;
    e->in = q;
    q->n++;
}

/* Insert `e` (in no queue) first, last, or just after `pos` (in `q`). */
static inline void es_queue_insert_head(struct es_queue *q, struct es_queue_node *e) {
    es_queue_link_(q, &q->head, e);
}
static inline void es_queue_insert_tail(struct es_queue *q, struct es_queue_node *e) {
    es_queue_link_(q, q->head.prev, e);
}
static inline void es_queue_insert_after(struct es_queue *q, struct es_queue_node *pos,
                                         struct es_queue_node *e) {
    assert(pos->in == q);
    es_queue_link_(q, pos, e);
}

/* Take `e`, which must be in `q`, out of it: it is in no queue after. */
static inline void es_queue_remove(struct es_queue *q, struct es_queue_node *e) {
    assert(e != &q->head);
    assert(e->in == q);
    assert(e->next->prev == e && e->prev->next == e);
    assert(q->n > 0);
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = NULL;
    e->in = NULL;
    q->n--;
}

/* The first node taken out of `q`, or NULL when it is empty. */
static inline struct es_queue_node *es_queue_pop_head(struct es_queue *q) {
    struct es_queue_node *e = es_queue_first(q);
    if (e != NULL)
        es_queue_remove(q, e);
    return e;
}

/* Move every element of `from` to the end of `to`, in order; `from` is
 * empty after. O(n): each node is told its new queue. For a batch handed
 * from one owner to another in one step (under the giver's lock). */
static inline void es_queue_move(struct es_queue *to, struct es_queue *from) {
    assert(to != from && to->head.in == to && from->head.in == from);
    if (from->n == 0)
        return;
    assert(to->n <= SIZE_MAX - from->n);
    for (struct es_queue_node *e = from->head.next; e != &from->head; e = e->next) {
        assert(e->in == from);
        e->in = to;
    }
    struct es_queue_node *first = from->head.next, *last = from->head.prev;
    first->prev = to->head.prev;
    to->head.prev->next = first;
    last->next = &to->head;
    to->head.prev = last;
    to->n += from->n;
    es_queue_init(from);
}

/* Every invariant of `q`, walked (O(n)): each node's neighbours point back
 * at it, each node says it is in `q`, the walk both ways meets `n` nodes. */
static inline bool es_queue_valid(const struct es_queue *q) {
    if (q->head.in != q || q->head.next == NULL || q->head.prev == NULL)
        return false;
    size_t fwd = 0, back = 0;
    for (const struct es_queue_node *e = q->head.next; e != &q->head; e = e->next) {
        if (e == NULL || e->in != q || e->next == NULL || e->next->prev != e || fwd++ > q->n)
            return false;
    }
    for (const struct es_queue_node *e = q->head.prev; e != &q->head; e = e->prev) {
        if (e == NULL || e->in != q || e->prev == NULL || e->prev->next != e || back++ > q->n)
            return false;
    }
    return fwd == q->n && back == q->n;
}

#endif
