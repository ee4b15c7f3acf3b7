/* SPDX-License-Identifier: BSD-3-Clause */
/* Spans from START/STOP markers, matched per thread (spans.h). */
#include "spans.h"

#include "format/es_notice_text.h"
#include "format/es_payload.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* GHC's StopThread status for a thread that finished. */
#define THREAD_FINISHED 5
/* The key of an OS thread's C spans: its id with this bit (above the
 * Haskell threads' ids and the unknown threads' capability keys). */
#define C_KEY (UINT64_C(1) << 62)
static_assert(((uint64_t)ES_SPANS_MAX_CAPS + 2) << 32 < C_KEY, "keys of OS threads apart");

struct open_span {
    char label[ES_SPANS_LABEL_MAX + 1];
    uint64_t start;
    uint64_t serial; /* opentelemetry-haskell's span serial (otel) */
    int cap;
    bool failed; /* a FAIL came for it (an error tag, for otel) */
    bool otel;   /* begun by opentelemetry-haskell, ended by its serial */
};

/* A STOP whose START has not come (yet): GHC 9.0 hands over each
 * capability's buffer when it fills, so a thread that moved to another
 * capability between its START and its STOP may have its STOP's block
 * arrive first. */
struct pending_stop {
    char label[ES_SPANS_LABEL_MAX + 1];
    uint64_t time;
};

/* A thread with open spans or pending STOPs (key 0: a free slot). */
struct es_spans_open {
    uint64_t key;
    uint32_t n, cap;
    struct open_span *items;
    uint32_t npend, cappend;   /* at most ES_SPANS_MAX_OPEN, the oldest let go */
    struct pending_stop *pend; /* NULL until the first */
};

void es_spans_init(struct es_spans *sp, es_spans_done *done, void *ctx) {
    memset(sp, 0, sizeof *sp);
    sp->done = done;
    sp->ctx = ctx;
    sp->block_cap = -2;
}

void es_spans_destroy(struct es_spans *sp) {
    for (size_t i = 0; i < sp->slots; i++) {
        free(sp->threads[i].items);
        free(sp->threads[i].pend);
    }
    free(sp->threads);
    sp->threads = NULL;
    sp->slots = sp->used = 0;
}

enum es_spans_kind es_spans_parse(const uint8_t *text, size_t n, const uint8_t **label,
                                  size_t *len) {
    static const struct {
        const char *word;
        enum es_spans_kind kind;
    } words[] = {{"START ", ES_SPANS_START}, {"STOP ", ES_SPANS_STOP}, {"FAIL ", ES_SPANS_FAIL}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t skip = strlen(words[i].word);
        if (n <= skip || memcmp(text, words[i].word, skip) != 0)
            continue;
        *label = text + skip;
        *len = n - skip;
        /* A C string posted with its NUL: the label ends there. */
        const uint8_t *nul = memchr(*label, 0, *len);
        if (nul)
            *len = (size_t)(nul - *label);
        return *len > 0 ? words[i].kind : ES_SPANS_NONE;
    }
    return ES_SPANS_NONE;
}

/* ---- The threads' table: open addressing, linear probing, entries moved
 * back on removal (no tombstones). */

static size_t slot_of(const struct es_spans *sp, uint64_t key) {
    uint64_t h = key * 0x9e3779b97f4a7c15u;
    return (size_t)(h >> 20) & (sp->slots - 1);
}

static struct es_spans_open *find(const struct es_spans *sp, uint64_t key) {
    if (sp->slots == 0)
        return NULL;
    for (size_t i = slot_of(sp, key);; i = (i + 1) & (sp->slots - 1)) {
        if (sp->threads[i].key == key)
            return &sp->threads[i];
        if (sp->threads[i].key == 0)
            return NULL;
    }
}

static bool grow(struct es_spans *sp) {
    size_t slots = sp->slots ? sp->slots * 2 : 64;
    struct es_spans_open *t = calloc(slots, sizeof *t);
    if (t == NULL)
        return false;
    struct es_spans_open *old = sp->threads;
    size_t old_slots = sp->slots;
    sp->threads = t;
    sp->slots = slots;
    for (size_t i = 0; i < old_slots; i++) {
        if (old[i].key == 0)
            continue;
        size_t j = slot_of(sp, old[i].key);
        while (t[j].key != 0)
            j = (j + 1) & (slots - 1);
        t[j] = old[i];
    }
    free(old);
    return true;
}

/* The entry for `key`, made if new; NULL when the table is full or memory
 * ran out. */
static struct es_spans_open *enter(struct es_spans *sp, uint64_t key) {
    struct es_spans_open *o = find(sp, key);
    if (o != NULL)
        return o;
    if (sp->used >= ES_SPANS_MAX_THREADS)
        return NULL;
    if ((sp->used + 1) * 2 > sp->slots && !grow(sp)) {
        sp->oom = true;
        return NULL;
    }
    size_t i = slot_of(sp, key);
    while (sp->threads[i].key != 0)
        i = (i + 1) & (sp->slots - 1);
    sp->threads[i] = (struct es_spans_open){.key = key};
    sp->used++;
    return &sp->threads[i];
}

/* Remove entry `o` (its spans freed), moving back the entries after it
 * that its slot had pushed along. */
static void leave(struct es_spans *sp, struct es_spans_open *o) {
    size_t i = (size_t)(o - sp->threads), mask = sp->slots - 1;
    free(o->items);
    free(o->pend);
    sp->pending -= o->npend;
    sp->threads[i] = (struct es_spans_open){0};
    sp->used--;
    for (size_t j = (i + 1) & mask; sp->threads[j].key != 0; j = (j + 1) & mask) {
        size_t home = slot_of(sp, sp->threads[j].key);
        /* Entry j may move to the hole at i if its home is not within (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        sp->threads[i] = sp->threads[j];
        sp->threads[j] = (struct es_spans_open){0};
        i = j;
    }
}

/* ---- The events. */

/* The key of the thread an event on `cap` belongs to (the high half tells
 * an unknown thread's capability). */
static uint64_t key_of(const struct es_spans *sp, int cap, uint32_t *thread) {
    *thread = cap >= 0 && cap < ES_SPANS_MAX_CAPS ? sp->running[cap] : 0;
    return *thread ? *thread : (uint64_t)(cap + 2) << 32;
}

static void begin(struct es_spans *sp, uint64_t key, const uint8_t *label, size_t len, uint64_t t,
                  int cap) {
    struct es_spans_open *o = enter(sp, key);
    if (o == NULL || o->n >= ES_SPANS_MAX_OPEN) {
        sp->dropped++;
        return;
    }
    if (o->n == o->cap) {
        uint32_t n = o->cap ? o->cap * 2 : 2;
        struct open_span *items = realloc(o->items, n * sizeof *items);
        if (items == NULL) {
            sp->oom = true;
            sp->dropped++;
            return;
        }
        o->items = items;
        o->cap = n;
    }
    struct open_span *s = &o->items[o->n++];
    len = len < ES_SPANS_LABEL_MAX ? len : ES_SPANS_LABEL_MAX;
    memcpy(s->label, label, len);
    s->label[len] = '\0';
    s->start = t;
    s->cap = cap;
    s->failed = s->otel = false;
    s->serial = 0;
}

/* The innermost open START span of `label` in `o` (1-based; 0 for none). */
static uint32_t innermost(const struct es_spans_open *o, const uint8_t *label, size_t len) {
    len = len < ES_SPANS_LABEL_MAX ? len : ES_SPANS_LABEL_MAX;
    uint32_t k = o ? o->n : 0;
    while (k > 0 && (o->items[k - 1].otel || !(strlen(o->items[k - 1].label) == len &&
                                               memcmp(o->items[k - 1].label, label, len) == 0)))
        k--;
    return k;
}

/* FAIL: the innermost open span of the label in its thread failed; its
 * STOP ends it. A FAIL with no such span is counted as a STOP would be. */
static void fail(struct es_spans *sp, uint64_t key, const uint8_t *label, size_t len) {
    struct es_spans_open *o = find(sp, key);
    uint32_t k = innermost(o, label, len);
    if (k == 0)
        sp->unmatched++;
    else
        o->items[k - 1].failed = true;
}

/* The open span k (1-based) of thread entry `o` ends at `t`. */
static void finish(struct es_spans *sp, struct es_spans_open *o, uint32_t k, uint64_t t) {
    struct open_span *s = &o->items[k - 1];
    uint32_t thread = o->key <= UINT32_MAX ? (uint32_t)o->key : 0;
    uint32_t os_thread = (o->key & C_KEY) != 0 ? (uint32_t)o->key : 0;
    struct es_span done = {.label = s->label,
                           .parent = k >= 2 ? o->items[k - 2].label : "",
                           .thread = thread,
                           .os_thread = os_thread,
                           .cap = s->cap,
                           .start = s->start,
                           .end = t >= s->start ? t : s->start,
                           .depth = k - 1,
                           .failed = s->failed};
    sp->spans++;
    if (sp->done)
        sp->done(&done, sp->ctx);
    /* Out of the stack; those opened after it stay open, their parent
     * now the one below. */
    memmove(s, s + 1, (o->n - k) * sizeof *s);
    if (--o->n == 0 && o->npend == 0)
        leave(sp, o);
}

/* Keep a STOP of thread `key` that found no START, for a START of an
 * earlier time still to come (pending_stop). */
static void remember(struct es_spans *sp, uint64_t key, const uint8_t *label, size_t len,
                     uint64_t t) {
    if (key > UINT32_MAX || sp->pending >= ES_SPANS_MAX_PENDING)
        return;
    struct es_spans_open *o = enter(sp, key);
    if (o == NULL)
        return;
    if (o->npend == o->cappend && o->cappend < ES_SPANS_MAX_OPEN) {
        uint32_t n = o->cappend ? o->cappend * 2 : 2;
        struct pending_stop *p = realloc(o->pend, n * sizeof *p);
        if (p == NULL) {
            sp->oom = true;
            if (o->n == 0 && o->npend == 0)
                leave(sp, o);
            return;
        }
        o->pend = p;
        o->cappend = n;
    }
    if (o->npend == ES_SPANS_MAX_OPEN) {
        memmove(o->pend, o->pend + 1, --o->npend * sizeof *o->pend);
        sp->pending--;
    }
    sp->pending++;
    struct pending_stop *p = &o->pend[o->npend++];
    len = len < ES_SPANS_LABEL_MAX ? len : ES_SPANS_LABEL_MAX;
    memcpy(p->label, label, len);
    p->label[len] = '\0';
    p->time = t;
}

/* Pair thread `o`'s pending STOPs, earliest first, each with the
 * innermost START of its label open before it: at a block's end, once
 * the STARTs and STOPs of that block's time have all been read. */
static void settle_thread(struct es_spans *sp, struct es_spans_open *o) {
    for (uint32_t i = 0; i < o->npend;) {
        uint32_t best = i;
        for (uint32_t j = i + 1; j < o->npend; j++)
            if (o->pend[j].time < o->pend[best].time)
                best = j;
        struct pending_stop p = o->pend[best];
        uint32_t k = o->n;
        while (k > 0 && (o->items[k - 1].otel || o->items[k - 1].start > p.time ||
                         strcmp(o->items[k - 1].label, p.label) != 0))
            k--;
        if (k == 0) {
            /* Still none: the earliest stays, and so do the later. */
            if (best != i) {
                o->pend[best] = o->pend[i];
                o->pend[i] = p;
            }
            i++;
            continue;
        }
        memmove(&o->pend[best], &o->pend[best + 1], (o->npend - best - 1) * sizeof *o->pend);
        o->npend--;
        sp->pending--;
        sp->unmatched--; /* counted when it came */
        bool last = o->n == 1 && o->npend == 0;
        finish(sp, o, k, p.time);
        if (last)
            return; /* `o` is gone */
    }
}

void es_spans_settle(struct es_spans *sp) {
    if (sp->ndirty > ES_SPANS_DIRTY) {
        for (size_t i = 0; sp->pending > 0 && i < sp->slots; i++)
            if (sp->threads[i].npend > 0 && sp->threads[i].n > 0)
                settle_thread(sp, &sp->threads[i]);
    } else {
        for (unsigned d = 0; d < sp->ndirty; d++) {
            struct es_spans_open *o = find(sp, sp->dirty[d]);
            if (o != NULL && o->npend > 0 && o->n > 0)
                settle_thread(sp, o);
        }
    }
    sp->ndirty = 0;
}

static void end(struct es_spans *sp, uint64_t key, const uint8_t *label, size_t len, uint64_t t) {
    struct es_spans_open *o = find(sp, key);
    uint32_t k = innermost(o, label, len);
    if (k == 0) {
        sp->unmatched++;
        remember(sp, key, label, len, t);
    } else {
        finish(sp, o, k, t);
    }
}

/* ---- opentelemetry-haskell's spans: a serial per span, begun and ended
 * by it (on any thread), an "error" tag "true" for a failure. Binary user
 * messages (its default since 0.5) or "ot2" text (GHC 8.6 builds). */

enum otel_op { OTEL_NONE, OTEL_BEGIN, OTEL_END, OTEL_ERROR };

struct otel {
    enum otel_op op;
    uint64_t serial;
    const uint8_t *name;
    size_t len;
};

static uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* "OT" 3 TYPE, then the serial (u64, little-endian) and the rest. */
static struct otel otel_binary(const uint8_t *p, size_t n) {
    struct otel o = {OTEL_NONE, 0, NULL, 0};
    if (n < 12 || memcmp(p, "OT\3", 3) != 0)
        return o;
    o.serial = le64(p + 4);
    if (p[3] == 1) {
        o = (struct otel){OTEL_BEGIN, o.serial, p + 12, n - 12};
    } else if (p[3] == 2) {
        o.op = OTEL_END;
    } else if (p[3] == 3 && n >= 20) { /* a tag: key and value lengths, key, value */
        uint64_t k = le32(p + 12), v = le32(p + 16);
        if (k == 5 && v == 4 && n >= 29 && memcmp(p + 20, "error", 5) == 0 &&
            memcmp(p + 25, "true", 4) == 0)
            o.op = OTEL_ERROR;
    }
    return o;
}

/* The decimal serial at *p (advanced past it and one space). */
static bool serial_at(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    const uint8_t *q = *p;
    *v = 0;
    while (q < end && *q >= '0' && *q <= '9' && q - *p < 20)
        *v = *v * 10 + (uint64_t)(*q++ - '0');
    if (q == *p || (q < end && *q != ' '))
        return false;
    *p = q < end ? q + 1 : q;
    return true;
}

static bool word(const uint8_t **p, const uint8_t *end, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(end - *p) < n || memcmp(*p, w, n) != 0)
        return false;
    *p += n;
    return true;
}

/* "ot2 begin span SERIAL NAME", "ot2 end span SERIAL", "ot2 set tag
 * SERIAL error true". */
static struct otel otel_text(const uint8_t *p, size_t n) {
    struct otel o = {OTEL_NONE, 0, NULL, 0};
    const uint8_t *lim = p + n;
    if (!word(&p, lim, "ot2 "))
        return o;
    if (word(&p, lim, "begin span ") && serial_at(&p, lim, &o.serial) && p < lim)
        return (struct otel){OTEL_BEGIN, o.serial, p, (size_t)(lim - p)};
    if (word(&p, lim, "end span ") && serial_at(&p, lim, &o.serial) && p == lim)
        o.op = OTEL_END;
    else if (word(&p, lim, "set tag ") && serial_at(&p, lim, &o.serial) &&
             word(&p, lim, "error true") && p == lim)
        o.op = OTEL_ERROR;
    return o;
}

/* The open span with `serial`: in the thread of `key` first, else in any
 * (a span may end on another thread). */
static struct es_spans_open *by_serial(const struct es_spans *sp, uint64_t key, uint64_t serial,
                                       uint32_t *k) {
    struct es_spans_open *o = find(sp, key);
    for (uint32_t i = o ? o->n : 0; i > 0; i--)
        if (o->items[i - 1].otel && o->items[i - 1].serial == serial) {
            *k = i;
            return o;
        }
    for (size_t j = 0; sp->used > 0 && j < sp->slots; j++) {
        o = &sp->threads[j];
        for (uint32_t i = o->n; i > 0; i--)
            if (o->items[i - 1].otel && o->items[i - 1].serial == serial) {
                *k = i;
                return o;
            }
    }
    return NULL;
}

static void otel_event(struct es_spans *sp, const struct otel *x, uint64_t t, int cap) {
    uint32_t thread, k = 0;
    uint64_t key = key_of(sp, cap, &thread);
    if (x->op == OTEL_BEGIN) {
        const uint8_t *nul = memchr(x->name, 0, x->len);
        size_t len = nul ? (size_t)(nul - x->name) : x->len;
        if (len == 0)
            return;
        uint64_t before = sp->dropped;
        begin(sp, key, x->name, len, t, cap);
        struct es_spans_open *o = sp->dropped == before ? find(sp, key) : NULL;
        if (o != NULL) {
            o->items[o->n - 1].otel = true;
            o->items[o->n - 1].serial = x->serial;
        }
        return;
    }
    struct es_spans_open *o = by_serial(sp, key, x->serial, &k);
    if (o == NULL)
        sp->unmatched++;
    else if (x->op == OTEL_ERROR)
        o->items[k - 1].failed = true;
    else
        finish(sp, o, k, t);
}

static void user_text(struct es_spans *sp, const struct es_event *ev, int cap) {
    const uint8_t *label;
    size_t len;
    enum es_spans_kind kind = es_spans_parse(ev->payload, ev->payload_len, &label, &len);
    if (kind == ES_SPANS_NONE)
        return;
    uint32_t thread;
    uint64_t key = key_of(sp, cap, &thread);
    if (kind == ES_SPANS_START) {
        begin(sp, key, label, len, ev->time, cap);
        /* A thread with STOPs waiting is looked at when the block ends. */
        const struct es_spans_open *o = sp->pending > 0 ? find(sp, key) : NULL;
        bool listed =
            sp->ndirty > 0 && sp->ndirty <= ES_SPANS_DIRTY && sp->dirty[sp->ndirty - 1] == key;
        if (o != NULL && o->npend > 0 && !listed && sp->ndirty <= ES_SPANS_DIRTY) {
            if (sp->ndirty < ES_SPANS_DIRTY)
                sp->dirty[sp->ndirty] = key;
            sp->ndirty++; /* ES_SPANS_DIRTY + 1: too many, all are looked at */
        }
    } else if (kind == ES_SPANS_FAIL)
        fail(sp, key, label, len);
    else
        end(sp, key, label, len, ev->time);
}

/* A span notice of C code (es_notice_text_span): matched in its OS
 * thread, never pending (one thread's notices come in the order posted). */
static void c_span(struct es_spans *sp, const uint8_t *words, size_t n, uint32_t os_thread,
                   uint64_t t) {
    const uint8_t *label;
    size_t len;
    enum es_spans_kind kind = es_spans_parse(words, n, &label, &len);
    uint64_t key = C_KEY | os_thread;
    if (kind == ES_SPANS_START)
        begin(sp, key, label, len, t, -1);
    else if (kind == ES_SPANS_FAIL)
        fail(sp, key, label, len);
    else if (kind == ES_SPANS_STOP)
        end(sp, key, label, len, t);
}

static void thread_event(struct es_spans *sp, const struct es_event *ev, int cap) {
    struct es_payload r = es_payload_of(ev);
    uint32_t id = es_payload_u32(&r);
    uint16_t status = ev->type == ES_EVENT_STOP_THREAD ? es_payload_u16(&r) : 0;
    if (!es_payload_ok(&r)) {
        sp->garbled++;
        return;
    }
    bool on_cap = cap >= 0 && cap < ES_SPANS_MAX_CAPS;
    if (ev->type == ES_EVENT_RUN_THREAD) {
        if (on_cap)
            sp->running[cap] = id;
        return;
    }
    if (on_cap && sp->running[cap] == id)
        sp->running[cap] = 0;
    if (status == THREAD_FINISHED && id != 0) {
        /* Its START spans end with it; opentelemetry-haskell's may still
         * end, by their serial, on another thread. */
        struct es_spans_open *o = find(sp, id);
        uint32_t kept = 0;
        for (uint32_t i = 0; o != NULL && i < o->n; i++)
            if (o->items[i].otel)
                o->items[kept++] = o->items[i];
            else
                sp->abandoned++;
        if (o != NULL && (o->n = kept) == 0 && o->npend == 0)
            leave(sp, o);
    }
}

uint64_t es_spans_oldest_open(const struct es_spans *sp, const char *label, size_t len) {
    uint64_t oldest = UINT64_MAX;
    for (size_t i = 0; sp->used > 0 && i < sp->slots; i++)
        for (uint32_t k = 0; k < sp->threads[i].n; k++) {
            const struct open_span *s = &sp->threads[i].items[k];
            if (s->start < oldest && strlen(s->label) == len && memcmp(s->label, label, len) == 0)
                oldest = s->start;
        }
    return oldest;
}

void es_spans_event(struct es_spans *sp, const struct es_event *ev, int cap) {
    /* Another capability's events: the block before has ended. */
    if (cap != sp->block_cap) {
        if (sp->ndirty > 0)
            es_spans_settle(sp);
        sp->block_cap = cap;
    }
    switch (ev->type) {
    case ES_EVENT_USER_MSG: {
        const uint8_t *words;
        size_t n;
        uint32_t os_thread;
        if (es_notice_text_span_read(ev->payload, ev->payload_len, &os_thread, &words, &n)) {
            c_span(sp, words, n, os_thread, ev->time);
            break;
        }
        if (ev->payload_len > 4 && memcmp(ev->payload, "ot2 ", 4) == 0) {
            struct otel x = otel_text(ev->payload, ev->payload_len);
            if (x.op != OTEL_NONE)
                otel_event(sp, &x, ev->time, cap);
            break;
        }
        user_text(sp, ev, cap);
        break;
    }
    case ES_EVENT_USER_MARKER:
        user_text(sp, ev, cap);
        break;
    case ES_EVENT_USER_BINARY_MSG: {
        struct otel x = otel_binary(ev->payload, ev->payload_len);
        if (x.op != OTEL_NONE)
            otel_event(sp, &x, ev->time, cap);
        break;
    }
    case ES_EVENT_RUN_THREAD:
    case ES_EVENT_STOP_THREAD:
        thread_event(sp, ev, cap);
        break;
    default:
        break;
    }
}
