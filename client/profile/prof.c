/* SPDX-License-Identifier: BSD-3-Clause */
/* The time profile in a stream (prof.h). */
#include "prof.h"

#include "format/es_event_types.h"
#include "format/es_payload.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void es_prof_init(struct es_prof *p) {
    memset(p, 0, sizeof *p);
    p->to = UINT64_MAX;
}

void es_prof_destroy(struct es_prof *p) {
    for (uint32_t i = 0; i < p->ncc; i++) {
        free(p->cc[i].label);
        free(p->cc[i].module);
        free(p->cc[i].srcloc);
    }
    free(p->cc);
    free(p->frames);
    free(p->stacks);
    free(p->buckets);
    free(p->tail);
    for (uint32_t i = 0; i < p->ncaps; i++)
        free(p->caps[i].runs);
    memset(p, 0, sizeof *p);
}

/* Grow `*v` (of `*cap` elements of `size` bytes) to hold `need`. */
static bool grow(void **v, size_t *cap, size_t need, size_t size) {
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *nv = realloc(*v, n * size);
    if (nv == NULL)
        return false;
    *v = nv;
    *cap = n;
    return true;
}

static char *dup_n(const uint8_t *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static void on_cost_centre(struct es_prof *p, const struct es_event *ev) {
    struct es_payload r = es_payload_of(ev);
    uint32_t id = es_payload_u32(&r);
    size_t ll, ml, sl;
    const uint8_t *label = es_payload_str(&r, &ll);
    const uint8_t *module = es_payload_str(&r, &ml);
    const uint8_t *srcloc = es_payload_str(&r, &sl);
    uint8_t caf = es_payload_u8(&r);
    if (!es_payload_ok(&r) || id >= ES_PROF_MAX_CC) {
        p->bad++;
        return;
    }
    if (id >= p->ncc) {
        size_t cap = p->ncc;
        if (!grow((void **)&p->cc, &cap, (size_t)id + 1, sizeof *p->cc)) {
            p->oom = true;
            return;
        }
        memset(p->cc + p->ncc, 0, (cap - p->ncc) * sizeof *p->cc);
        p->ncc = (uint32_t)cap;
    }
    struct es_prof_cc *c = &p->cc[id];
    free(c->label);
    free(c->module);
    free(c->srcloc);
    c->label = dup_n(label, ll);
    c->module = dup_n(module, ml);
    c->srcloc = dup_n(srcloc, sl);
    c->caf = caf != 0;
    c->defined = c->label && c->module && c->srcloc;
    if (!c->defined)
        p->oom = true;
}

static uint32_t hash_ids(const uint32_t *ids, uint32_t n) {
    uint32_t h = 2166136261u ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ ids[i]) * 16777619u;
    return h;
}

static bool same(const struct es_prof *p, const struct es_prof_stack *s, const uint32_t *ids,
                 uint32_t n) {
    return s->depth == n && memcmp(p->frames + s->first, ids, n * sizeof *ids) == 0;
}

/* Double the buckets (a power of two), placing every stack again. */
static bool rehash(struct es_prof *p) {
    uint32_t nb = p->nbuckets ? p->nbuckets * 2 : 256;
    uint32_t *b = calloc(nb, sizeof *b);
    if (b == NULL)
        return false;
    for (uint32_t i = 0; i < p->nstacks; i++) {
        struct es_prof_stack *s = &p->stacks[i];
        uint32_t h = hash_ids(p->frames + s->first, s->depth) & (nb - 1);
        s->next = b[h];
        b[h] = i + 1;
    }
    free(p->buckets);
    p->buckets = b;
    p->nbuckets = nb;
    return true;
}

/* The stack of `ids` (root first), added if new; UINT32_MAX when out of
 * memory. */
static uint32_t intern(struct es_prof *p, const uint32_t *ids, uint32_t n) {
    if (p->nstacks >= p->nbuckets / 2 && !rehash(p))
        return UINT32_MAX;
    uint32_t h = hash_ids(ids, n) & (p->nbuckets - 1);
    for (uint32_t i = p->buckets[h]; i != 0; i = p->stacks[i - 1].next)
        if (same(p, &p->stacks[i - 1], ids, n))
            return i - 1;
    size_t scap = p->stacks_cap;
    if (p->nstacks == UINT32_MAX - 1 ||
        !grow((void **)&p->stacks, &scap, (size_t)p->nstacks + 1, sizeof *p->stacks) ||
        !grow((void **)&p->frames, &p->frames_cap, p->nframes + n, sizeof *p->frames))
        return UINT32_MAX;
    p->stacks_cap = (uint32_t)scap;
    memcpy(p->frames + p->nframes, ids, n * sizeof *ids);
    p->stacks[p->nstacks] = (struct es_prof_stack){(uint32_t)p->nframes, n, 0, p->buckets[h]};
    p->nframes += n;
    p->buckets[h] = p->nstacks + 1;
    return p->nstacks++;
}

static void add_run(struct es_prof *p, uint32_t capno, uint32_t stack, uint64_t t) {
    if (capno >= ES_PROF_MAX_CAPS)
        capno = ES_PROF_MAX_CAPS - 1;
    if (capno >= p->ncaps)
        p->ncaps = capno + 1;
    if (!p->keep_runs)
        return;
    struct es_prof_cap *c = &p->caps[capno];
    if (c->n > 0 && c->runs[c->n - 1].stack == stack && c->runs[c->n - 1].ticks < UINT32_MAX &&
        p->runs_dropped == 0) {
        c->runs[c->n - 1].ticks++;
        return;
    }
    if (p->nruns >= ES_PROF_MAX_RUNS) {
        p->runs_dropped++;
        return;
    }
    if (!grow((void **)&c->runs, &c->cap, c->n + 1, sizeof *c->runs)) {
        p->oom = true;
        return;
    }
    c->runs[c->n++] = (struct es_prof_run){t, stack, 1};
    p->nruns++;
}

static void tail_sample(struct es_prof *p, uint64_t t, uint32_t cap, uint32_t stack);

bool es_prof_read_sample(const struct es_event *ev, uint32_t *cap, uint32_t *ids, uint32_t *depth) {
    struct es_payload r = es_payload_of(ev);
    *cap = es_payload_u32(&r);
    (void)es_payload_u64(&r); /* the tick count */
    uint32_t n = es_payload_u8(&r);
    const uint8_t *at = es_payload_bytes(&r, (size_t)n * 4);
    if (!es_payload_ok(&r))
        return false;
    for (uint32_t i = 0; i < n; i++) { /* innermost first: reversed */
        const uint8_t *b = at + 4 * (n - 1 - i);
        ids[i] = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        if (ids[i] >= ES_PROF_MAX_CC)
            return false;
    }
    *depth = n;
    return true;
}

static void on_sample(struct es_prof *p, const struct es_event *ev) {
    uint32_t capno, depth, ids[256];
    if (!es_prof_read_sample(ev, &capno, ids, &depth)) {
        p->bad++;
        return;
    }
    if (ev->time < p->from || ev->time >= p->to) {
        p->outside++;
        return;
    }
    uint32_t s = intern(p, ids, depth);
    if (s == UINT32_MAX) {
        p->oom = true;
        return;
    }
    if (p->tail_ns) {
        tail_sample(p, ev->time, capno, s);
        return;
    }
    p->stacks[s].samples++;
    if (p->samples == 0 || ev->time < p->first)
        p->first = ev->time;
    if (ev->time > p->last)
        p->last = ev->time;
    p->samples++;
    add_run(p, capno, s, ev->time);
}

void es_prof_event(struct es_prof *p, const struct es_event *ev) {
    switch (ev->type) {
    case ES_EVENT_HEAP_PROF_COST_CENTRE:
        on_cost_centre(p, ev);
        break;
    case ES_EVENT_PROF_SAMPLE_COST_CENTRE:
        on_sample(p, ev);
        break;
    case ES_EVENT_PROF_BEGIN: {
        struct es_payload r = es_payload_of(ev);
        uint64_t tick = es_payload_u64(&r);
        if (es_payload_ok(&r) && tick > 0) {
            p->tick_ns = tick;
            p->began = true;
        } else {
            p->bad++;
        }
        break;
    }
    case ES_EVENT_WALL_CLOCK_TIME: {
        struct es_payload r = es_payload_of(ev);
        (void)es_payload_u32(&r); /* the capset */
        uint64_t sec = es_payload_u64(&r);
        uint32_t nsec = es_payload_u32(&r);
        if (es_payload_ok(&r) && sec < UINT64_MAX / 1000000000u) {
            p->have_wall = true;
            p->wall_ns = sec * 1000000000u + nsec;
            p->wall_at = ev->time;
        }
        break;
    }
    default:
        break;
    }
}

/* --- the tail: the samples of the last tail_ns, kept one by one --- */

static struct es_prof_tail_sample *tail_at(const struct es_prof *p, size_t i) {
    return &p->tail[(p->tail_head + i) % p->tail_cap];
}

/* Add a sample at the tail's end (growing it, in order). False when memory
 * ran out. */
static bool tail_push(struct es_prof *p, uint64_t t, uint32_t cap, uint32_t stack) {
    if (p->tail_n == p->tail_cap) {
        size_t n = p->tail_cap ? p->tail_cap * 2 : 4096;
        struct es_prof_tail_sample *nt = malloc(n * sizeof *nt);
        if (nt == NULL)
            return false;
        for (size_t i = 0; i < p->tail_n; i++)
            nt[i] = *tail_at(p, i);
        free(p->tail);
        p->tail = nt;
        p->tail_cap = n;
        p->tail_head = 0;
    }
    *tail_at(p, p->tail_n++) = (struct es_prof_tail_sample){t, cap, stack};
    return true;
}

/* A sample into the tail; those older than tail_ns before it leave it,
 * and the counts with them. */
static void tail_sample(struct es_prof *p, uint64_t t, uint32_t cap, uint32_t stack) {
    if (!tail_push(p, t, cap, stack)) {
        p->oom = true;
        return;
    }
    p->stacks[stack].samples++;
    p->samples++;
    if (t > p->last)
        p->last = t;
    while (p->tail_n > 0 && tail_at(p, 0)->t + p->tail_ns < p->last) {
        p->stacks[tail_at(p, 0)->stack].samples--;
        p->samples--;
        p->outside++;
        p->tail_head = (p->tail_head + 1) % p->tail_cap;
        p->tail_n--;
    }
}

void es_prof_tail_end(struct es_prof *p) {
    p->first = p->tail_n ? tail_at(p, 0)->t : 0;
    for (size_t i = 0; i < p->tail_n; i++) {
        const struct es_prof_tail_sample *x = tail_at(p, i);
        if (x->t < p->first)
            p->first = x->t;
        add_run(p, x->cap, x->stack, x->t);
    }
    free(p->tail);
    p->tail = NULL;
    p->tail_n = p->tail_cap = p->tail_head = 0;
}

static const struct es_prof_cc *find_cc(const struct es_prof *p, uint32_t id) {
    return id < p->ncc && p->cc[id].defined ? &p->cc[id] : NULL;
}

bool es_prof_builtin(const struct es_prof *p, uint32_t id) {
    const struct es_prof_cc *c = find_cc(p, id);
    return c != NULL && strcmp(c->srcloc, "<built-in>") == 0;
}

const char *es_prof_name(const struct es_prof *p, uint32_t id, char *buf, size_t size) {
    const struct es_prof_cc *c = find_cc(p, id);
    if (c == NULL)
        snprintf(buf, size, "cost centre %u", (unsigned)id);
    else if (es_prof_builtin(p, id))
        snprintf(buf, size, "%s", c->label);
    else
        snprintf(buf, size, "%s.%s", c->module, c->label);
    return buf;
}

const char *es_prof_file(const struct es_prof *p, uint32_t id, char *buf, size_t size,
                         int64_t *line) {
    const struct es_prof_cc *c = find_cc(p, id);
    *line = 0;
    if (c == NULL || c->srcloc[0] == '<' || size == 0)
        return NULL;
    const char *colon = strchr(c->srcloc, ':');
    size_t n = colon ? (size_t)(colon - c->srcloc) : strlen(c->srcloc);
    if (n == 0)
        return NULL;
    if (n >= size)
        n = size - 1;
    memcpy(buf, c->srcloc, n);
    buf[n] = '\0';
    if (colon) {
        const char *d = colon[1] == '(' ? colon + 2 : colon + 1;
        int64_t v = 0;
        for (; *d >= '0' && *d <= '9' && v < 100000000; d++)
            v = v * 10 + (*d - '0');
        *line = v;
    }
    return buf;
}

const uint32_t *es_prof_frames(const struct es_prof *p, uint32_t s, uint32_t *depth) {
    assert(s < p->nstacks);
    *depth = p->stacks[s].depth;
    return p->frames + p->stacks[s].first;
}
