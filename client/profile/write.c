/* SPDX-License-Identifier: BSD-3-Clause */
/* The time profile's three formats (write.h). */
#include "write.h"

#include "http/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef ES_VERSION
#define ES_VERSION "unknown"
#endif

static bool ends_with(const char *s, const char *end) {
    size_t n = strlen(s), m = strlen(end);
    return n >= m && strcmp(s + n - m, end) == 0;
}

enum es_profwrite_format es_profwrite_format_of(const char *path) {
    if (ends_with(path, ".folded"))
        return ES_PROFWRITE_FOLDED;
    if (ends_with(path, ".speedscope.json"))
        return ES_PROFWRITE_SPEEDSCOPE;
    if (ends_with(path, ".pb.gz"))
        return ES_PROFWRITE_PPROF;
    return ES_PROFWRITE_NONE;
}

/* The stack's frame `i`'s name (MAIN for the empty stack's only frame). */
static const char *frame_name(const struct es_prof *p, const uint32_t *ids, uint32_t depth,
                              uint32_t i, char *buf, size_t size) {
    if (depth == 0)
        return "MAIN";
    return es_prof_name(p, ids[i], buf, size);
}

/* --- folded stacks --- */

/* A frame's name as a folded line may hold it: ';' separates frames and a
 * line ends the stack, so those (and other control characters) become '_'. */
static void add_folded_name(struct es_httpbuf *b, const char *name) {
    for (const char *c = name; *c; c++) {
        char ch = (unsigned char)*c < 0x20 || *c == ';' || *c == 0x7f ? '_' : *c;
        es_httpbuf_add(b, &ch, 1);
    }
}

struct folded_line {
    char *text; /* the frames, without the count */
    uint64_t samples;
};

static int cmp_lines(const void *a, const void *b) {
    return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

static int write_folded(FILE *f, const struct es_prof *p) {
    struct folded_line *lines = calloc(p->nstacks ? p->nstacks : 1, sizeof *lines);
    if (lines == NULL)
        return ENOMEM;
    size_t n = 0;
    int err = 0;
    for (uint32_t s = 0; s < p->nstacks && err == 0; s++) {
        if (p->stacks[s].samples == 0)
            continue;
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, s, &depth);
        struct es_httpbuf b = {0};
        char name[1024];
        for (uint32_t i = 0; i < (depth ? depth : 1); i++) {
            if (i > 0)
                ES_HTTPBUF_ADD(&b, ";");
            add_folded_name(&b, frame_name(p, ids, depth, i, name, sizeof name));
        }
        if (b.oom || b.p == NULL) {
            es_httpbuf_free(&b);
            err = ENOMEM;
            break;
        }
        lines[n++] = (struct folded_line){b.p, p->stacks[s].samples};
    }
    /* Two stacks can read alike (two cost centres of one name): one line. */
    qsort(lines, n, sizeof *lines, cmp_lines);
    for (size_t i = 0; i < n && err == 0; i++) {
        uint64_t samples = lines[i].samples;
        while (i + 1 < n && strcmp(lines[i].text, lines[i + 1].text) == 0)
            samples += lines[++i].samples;
        if (fprintf(f, "%s %llu\n", lines[i].text, (unsigned long long)samples) < 0)
            err = errno ? errno : EIO;
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i].text);
    free(lines);
    return err;
}

/* --- frames shared by speedscope and pprof --- */

/* Each cost centre that a stack holds gets an index from 0, in the order
 * first met; MAIN (the empty stack) gets one too. */
struct frames {
    uint32_t *of;  /* cost-centre id -> index + 1 (0: not used); [main_slot]: MAIN's */
    uint32_t *ids; /* index -> cost-centre id (UINT32_MAX: MAIN) */
    uint32_t n, main_slot;
};

static bool frames_make(struct frames *fr, const struct es_prof *p) {
    fr->main_slot = 0; /* above every id in a stack */
    for (size_t i = 0; i < p->nframes; i++)
        if (p->frames[i] >= fr->main_slot)
            fr->main_slot = p->frames[i] + 1;
    fr->of = calloc((size_t)fr->main_slot + 1, sizeof *fr->of);
    fr->ids = malloc(((size_t)fr->main_slot + 1) * sizeof *fr->ids);
    fr->n = 0;
    if (fr->of == NULL || fr->ids == NULL)
        return false;
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, s, &depth);
        for (uint32_t i = 0; i < (depth ? depth : 1); i++) {
            uint32_t slot = depth == 0 ? fr->main_slot : ids[i];
            if (fr->of[slot] == 0) {
                fr->ids[fr->n] = depth == 0 ? UINT32_MAX : ids[i];
                fr->of[slot] = ++fr->n;
            }
        }
    }
    return true;
}

static void frames_free(struct frames *fr) {
    free(fr->of);
    free(fr->ids);
}

/* The frame index of stack frame `i`. */
static uint32_t frame_index(const struct frames *fr, const uint32_t *ids, uint32_t depth,
                            uint32_t i) {
    return fr->of[depth == 0 ? fr->main_slot : ids[i]] - 1;
}

static const char *index_name(const struct es_prof *p, const struct frames *fr, uint32_t k,
                              char *buf, size_t size) {
    return fr->ids[k] == UINT32_MAX ? "MAIN" : es_prof_name(p, fr->ids[k], buf, size);
}

/* --- speedscope --- */

static void speedscope_frames(struct es_httpbuf *b, const struct es_prof *p,
                              const struct frames *fr) {
    ES_HTTPBUF_ADD(b, "\"shared\":{\"frames\":[");
    for (uint32_t k = 0; k < fr->n; k++) {
        char name[1024], file[1024];
        int64_t line = 0;
        const char *path =
            fr->ids[k] == UINT32_MAX ? NULL : es_prof_file(p, fr->ids[k], file, sizeof file, &line);
        ES_HTTPBUF_ADD(b, "{\"name\":");
        es_httpbuf_json_str(b, index_name(p, fr, k, name, sizeof name));
        if (path) {
            ES_HTTPBUF_ADD(b, ",\"file\":");
            es_httpbuf_json_str(b, path);
            if (line > 0)
                es_httpbuf_printf(b, ",\"line\":%lld", (long long)line);
        }
        ES_HTTPBUF_ADD(b, "}");
        if (k + 1 < fr->n)
            ES_HTTPBUF_ADD(b, ",");
    }
    ES_HTTPBUF_ADD(b, "]}");
}

/* One capability's runs as a sampled profile: each run one sample, its
 * weight the run's ticks in seconds (in ticks when the interval is
 * unknown). */
static void speedscope_cap(struct es_httpbuf *b, const struct es_prof *p, const struct frames *fr,
                           uint32_t capno) {
    const struct es_prof_cap *c = &p->caps[capno];
    double tick = p->tick_ns ? (double)p->tick_ns / 1e9 : 1;
    double start = p->tick_ns ? (double)c->runs[0].time / 1e9 - tick : 0, total = 0;
    for (size_t i = 0; i < c->n; i++)
        total += c->runs[i].ticks * tick;
    es_httpbuf_printf(b,
                      "{\"type\":\"sampled\",\"name\":\"capability %u\",\"unit\":\"%s\","
                      "\"startValue\":%.9g,\"endValue\":%.9g,\"samples\":[",
                      (unsigned)capno, p->tick_ns ? "seconds" : "none", start, start + total);
    for (size_t i = 0; i < c->n; i++) {
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, c->runs[i].stack, &depth);
        ES_HTTPBUF_ADD(b, "[");
        for (uint32_t k = 0; k < (depth ? depth : 1); k++)
            es_httpbuf_printf(b, k ? ",%u" : "%u", (unsigned)frame_index(fr, ids, depth, k));
        ES_HTTPBUF_ADD(b, "]");
        if (i + 1 < c->n)
            ES_HTTPBUF_ADD(b, ",");
    }
    ES_HTTPBUF_ADD(b, "],\"weights\":[");
    for (size_t i = 0; i < c->n; i++)
        es_httpbuf_printf(b, i ? ",%.9g" : "%.9g", c->runs[i].ticks * tick);
    ES_HTTPBUF_ADD(b, "]}");
}

/* Capability `c`'s ticks not spent idle (in the RTS's IDLE alone). */
static uint64_t busy_ticks(const struct es_prof *p, uint32_t c) {
    uint64_t n = 0;
    char name[64];
    for (size_t i = 0; i < p->caps[c].n; i++) {
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, p->caps[c].runs[i].stack, &depth);
        bool idle = depth == 1 && es_prof_builtin(p, ids[0]) &&
                    strcmp(es_prof_name(p, ids[0], name, sizeof name), "IDLE") == 0;
        n += idle ? 0 : p->caps[c].runs[i].ticks;
    }
    return n;
}

static int write_speedscope(FILE *f, const struct es_prof *p, const char *name) {
    struct frames fr;
    if (!frames_make(&fr, p)) {
        frames_free(&fr);
        return ENOMEM;
    }
    struct es_httpbuf b = {0};
    ES_HTTPBUF_ADD(&b, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",");
    speedscope_frames(&b, p, &fr);
    ES_HTTPBUF_ADD(&b, ",\"profiles\":[");
    uint32_t shown = 0, busiest = 0;
    uint64_t most = 0;
    for (uint32_t c = 0; c < p->ncaps; c++) {
        if (p->caps[c].n == 0)
            continue;
        if (shown > 0)
            ES_HTTPBUF_ADD(&b, ",");
        uint64_t work = busy_ticks(p, c);
        if (work > most) {
            most = work;
            busiest = shown;
        }
        shown++;
        speedscope_cap(&b, p, &fr, c);
    }
    ES_HTTPBUF_ADD(&b, "],\"name\":");
    char title[600];
    snprintf(title, sizeof title, "%s%stime profile", name, name[0] ? ": " : "");
    es_httpbuf_json_str(&b, title);
    /* speedscope opens on the capability that did the most. */
    es_httpbuf_printf(&b, ",\"activeProfileIndex\":%u", (unsigned)busiest);
    ES_HTTPBUF_ADD(&b, ",\"exporter\":\"eventlog-socket " ES_VERSION "\"}\n");
    frames_free(&fr);
    int err = b.oom ? ENOMEM : 0;
    if (err == 0 && fwrite(b.p, 1, b.len, f) != b.len)
        err = errno ? errno : EIO;
    es_httpbuf_free(&b);
    return err;
}

/* --- pprof: profile.proto, written by hand (a handful of fields) --- */

static void pb_varint(struct es_httpbuf *b, uint64_t v) {
    uint8_t out[10];
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    es_httpbuf_add(b, (const char *)out, n);
}

/* Field `field` as a varint (wire type 0). */
static void pb_uint(struct es_httpbuf *b, unsigned field, uint64_t v) {
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

/* Field `field` as `n` bytes (wire type 2: strings, messages, packed). */
static void pb_bytes(struct es_httpbuf *b, unsigned field, const void *data, size_t n) {
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    es_httpbuf_add(b, data, n);
}

static void pb_msg(struct es_httpbuf *b, unsigned field, struct es_httpbuf *sub) {
    pb_bytes(b, field, sub->p ? sub->p : "", sub->len);
    if (sub->oom)
        b->oom = true;
    sub->len = 0;
    sub->oom = false;
}

/* The string table: index 0 is "" (the format's rule). */
struct strings {
    struct es_httpbuf out; /* the table's entries, field 6 each */
    uint64_t n;
};

static uint64_t str_add(struct strings *t, const char *s) {
    pb_bytes(&t->out, 6, s, strlen(s));
    return t->n++;
}

/* A ValueType (type, unit) as field `field`. */
static void pb_value_type(struct es_httpbuf *b, struct es_httpbuf *tmp, unsigned field,
                          uint64_t type, uint64_t unit) {
    pb_uint(tmp, 1, type);
    pb_uint(tmp, 2, unit);
    pb_msg(b, field, tmp);
}

/* Function and Location `k + 1` for frame `k`: one line, no address. */
static void pb_frames(struct es_httpbuf *b, struct es_httpbuf *tmp, struct strings *t,
                      const struct es_prof *p, const struct frames *fr) {
    struct es_httpbuf line = {0};
    for (uint32_t k = 0; k < fr->n; k++) {
        char name[1024], file[1024];
        int64_t ln = 0;
        const char *path =
            fr->ids[k] == UINT32_MAX ? NULL : es_prof_file(p, fr->ids[k], file, sizeof file, &ln);
        pb_uint(tmp, 1, k + 1);
        pb_uint(tmp, 2, str_add(t, index_name(p, fr, k, name, sizeof name)));
        const struct es_prof_cc *c =
            fr->ids[k] < p->ncc && p->cc[fr->ids[k]].defined ? &p->cc[fr->ids[k]] : NULL;
        if (c)
            pb_uint(tmp, 3, str_add(t, c->label));
        if (path)
            pb_uint(tmp, 4, str_add(t, path));
        if (ln > 0)
            pb_uint(tmp, 5, (uint64_t)ln);
        pb_msg(b, 5, tmp);
        pb_uint(&line, 1, k + 1);
        if (ln > 0)
            pb_uint(&line, 2, (uint64_t)ln);
        pb_uint(tmp, 1, k + 1);
        pb_msg(tmp, 4, &line);
        pb_msg(b, 4, tmp);
    }
    es_httpbuf_free(&line);
}

/* A Sample per distinct stack: its locations leaf first, then its values. */
static void pb_samples(struct es_httpbuf *b, struct es_httpbuf *tmp, const struct es_prof *p,
                       const struct frames *fr) {
    struct es_httpbuf packed = {0};
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint64_t samples = p->stacks[s].samples;
        if (samples == 0)
            continue;
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, s, &depth);
        for (uint32_t k = depth ? depth : 1; k-- > 0;)
            pb_varint(&packed, frame_index(fr, ids, depth, k) + 1);
        pb_msg(tmp, 1, &packed);
        pb_varint(&packed, samples);
        if (p->tick_ns)
            pb_varint(&packed, samples * p->tick_ns);
        pb_msg(tmp, 2, &packed);
        pb_msg(b, 2, tmp);
    }
    es_httpbuf_free(&packed);
}

static void pb_profile(struct es_httpbuf *b, const struct es_prof *p, const struct frames *fr) {
    struct strings t = {{0}, 0};
    struct es_httpbuf tmp = {0};
    str_add(&t, "");
    uint64_t samples = str_add(&t, "samples"), count = str_add(&t, "count");
    pb_value_type(b, &tmp, 1, samples, count);
    uint64_t cpu = 0, ns = 0;
    if (p->tick_ns) {
        cpu = str_add(&t, "cpu");
        ns = str_add(&t, "nanoseconds");
        pb_value_type(b, &tmp, 1, cpu, ns);
    }
    pb_samples(b, &tmp, p, fr);
    pb_frames(b, &tmp, &t, p, fr);
    es_httpbuf_add(b, t.out.p ? t.out.p : "", t.out.len);
    if (t.out.oom)
        b->oom = true;
    if (p->have_wall && p->samples) {
        int64_t at = (int64_t)p->wall_ns + ((int64_t)p->first - (int64_t)p->wall_at);
        if (at > 0)
            pb_uint(b, 9, (uint64_t)at);
    }
    if (p->samples)
        pb_uint(b, 10, p->last - p->first + p->tick_ns);
    if (p->tick_ns) {
        pb_value_type(b, &tmp, 11, cpu, ns);
        pb_uint(b, 12, p->tick_ns);
    }
    es_httpbuf_free(&tmp);
    es_httpbuf_free(&t.out);
}

/* `n` bytes at `data` to `f`, gzipped. */
static int gzip_to(FILE *f, const void *data, size_t n) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return ENOMEM;
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)n;              /* a profile is far below 4 GiB: checked by the caller */
    static unsigned char out[1 << 16]; /* profile's one thread */
    int err = 0, r;
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        r = deflate(&z, Z_FINISH);
        size_t have = sizeof out - z.avail_out;
        if (r == Z_STREAM_ERROR)
            err = EIO;
        else if (have && fwrite(out, 1, have, f) != have)
            err = errno ? errno : EIO;
    } while (err == 0 && r != Z_STREAM_END);
    deflateEnd(&z);
    return err;
}

static int write_pprof(FILE *f, const struct es_prof *p) {
    struct frames fr;
    if (!frames_make(&fr, p)) {
        frames_free(&fr);
        return ENOMEM;
    }
    struct es_httpbuf b = {0};
    pb_profile(&b, p, &fr);
    frames_free(&fr);
    int err = b.oom ? ENOMEM : b.len > UINT32_MAX ? EFBIG : 0;
    if (err == 0)
        err = gzip_to(f, b.p ? b.p : "", b.len);
    es_httpbuf_free(&b);
    return err;
}

/* --- the tree of the page's flame graph --- */

/* A node of the stacks' tree: a cost centre under its parent, with the
 * samples of every stack through it. */
struct tree_node {
    uint32_t id, child, sibling; /* child, sibling: node index + 1 (0: none) */
    uint64_t value;
};

struct tree {
    struct tree_node *n;
    size_t len, cap;
    bool oom;
};

/* The child of node `at` for cost centre `id`, made if new; SIZE_MAX when
 * memory ran out. */
static size_t tree_child(struct tree *t, size_t at, uint32_t id) {
    uint32_t *link = &t->n[at].child;
    while (*link != 0) {
        if (t->n[*link - 1].id == id)
            return *link - 1;
        link = &t->n[*link - 1].sibling;
    }
    if (t->len == t->cap) {
        size_t cap = t->cap * 2;
        struct tree_node *nn = cap > UINT32_MAX ? NULL : realloc(t->n, cap * sizeof *nn);
        if (nn == NULL) {
            t->oom = true;
            return SIZE_MAX;
        }
        t->n = nn;
        t->cap = cap;
        link = NULL; /* moved with the array: found again below */
    }
    t->n[t->len] = (struct tree_node){id, 0, 0, 0};
    if (link == NULL) {
        link = &t->n[at].child;
        while (*link != 0)
            link = &t->n[*link - 1].sibling;
    }
    *link = (uint32_t)++t->len;
    return t->len - 1;
}

static void tree_json(struct es_httpbuf *b, const struct es_prof *p, const struct tree *t,
                      size_t at, uint64_t least) {
    const struct tree_node *n = &t->n[at];
    char buf[600];
    ES_HTTPBUF_ADD(b, "{\"name\":");
    es_httpbuf_json_str(b, at == 0 ? "MAIN" : es_prof_name(p, n->id, buf, sizeof buf));
    es_httpbuf_printf(b, ",\"value\":%llu", (unsigned long long)n->value);
    bool first = true;
    for (uint32_t c = n->child; c != 0; c = t->n[c - 1].sibling) {
        if (t->n[c - 1].value < least)
            continue;
        if (first)
            ES_HTTPBUF_ADD(b, ",\"children\":[");
        else
            ES_HTTPBUF_ADD(b, ",");
        first = false;
        tree_json(b, p, t, c - 1, least);
    }
    if (!first)
        ES_HTTPBUF_ADD(b, "]");
    ES_HTTPBUF_ADD(b, "}");
}

int es_profwrite_tree(struct es_httpbuf *b, const struct es_prof *p, uint64_t least) {
    struct tree t = {.n = malloc(1024 * sizeof *t.n), .cap = 1024};
    if (t.n == NULL)
        return ENOMEM;
    t.n[0] = (struct tree_node){UINT32_MAX, 0, 0, 0};
    t.len = 1;
    for (uint32_t s = 0; s < p->nstacks && !t.oom; s++) {
        uint64_t v = p->stacks[s].samples;
        if (v == 0)
            continue;
        uint32_t depth;
        const uint32_t *ids = es_prof_frames(p, s, &depth);
        size_t at = 0;
        t.n[0].value += v;
        for (uint32_t i = 0; i < depth && at != SIZE_MAX; i++) {
            at = tree_child(&t, at, ids[i]);
            if (at != SIZE_MAX)
                t.n[at].value += v;
        }
    }
    if (!t.oom)
        tree_json(b, p, &t, 0, least ? least : 1);
    free(t.n);
    return t.oom || b->oom ? ENOMEM : 0;
}

int es_profwrite(FILE *f, enum es_profwrite_format fmt, const struct es_prof *p, const char *name) {
    switch (fmt) {
    case ES_PROFWRITE_FOLDED:
        return write_folded(f, p);
    case ES_PROFWRITE_SPEEDSCOPE:
        return write_speedscope(f, p, name);
    case ES_PROFWRITE_PPROF:
        return write_pprof(f, p);
    case ES_PROFWRITE_NONE:
        break;
    }
    return EINVAL;
}
