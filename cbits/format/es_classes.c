/* SPDX-License-Identifier: BSD-3-Clause */
/* The RTS's classes of events, by name (es_classes.h). */
#include "es_classes.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static const struct {
    unsigned bit;
    const char *name;
    char letter;
} classes[ES_CLASSES_COUNT] = {
    {EVENTLOG_SOCKET_EVENTS_SCHEDULER, "scheduler", 's'},
    {EVENTLOG_SOCKET_EVENTS_GC, "gc", 'g'},
    {EVENTLOG_SOCKET_EVENTS_NONMOVING_GC, "nonmoving-gc", 'n'},
    {EVENTLOG_SOCKET_EVENTS_SPARKS_SAMPLED, "sparks-sampled", 'p'},
    {EVENTLOG_SOCKET_EVENTS_SPARKS_FULL, "sparks-full", 'f'},
    {EVENTLOG_SOCKET_EVENTS_USER, "user", 'u'},
};

_Static_assert(EVENTLOG_SOCKET_EVENTS_ALL == ES_CLASSES_ALL, "one set of classes");

static int index_of(unsigned bit) {
    for (int i = 0; i < ES_CLASSES_COUNT; i++)
        if (classes[i].bit == bit)
            return i;
    return -1;
}

const char *es_classes_name(unsigned bit) {
    int i = index_of(bit);
    return i >= 0 ? classes[i].name : "?";
}

char es_classes_letter(unsigned bit) {
    int i = index_of(bit);
    return i >= 0 ? classes[i].letter : '?';
}

/* The class a name names, or 0. */
static unsigned name_mask(const char *w, size_t n) {
    for (int i = 0; i < ES_CLASSES_COUNT; i++)
        if (strlen(classes[i].name) == n && memcmp(w, classes[i].name, n) == 0)
            return classes[i].bit;
    return 0;
}

/* The classes one word names (a name, "all", or letters), or 0. */
static unsigned word_mask(const char *w, size_t n) {
    if (n == 3 && memcmp(w, "all", 3) == 0)
        return ES_CLASSES_ALL;
    for (int i = 0; i < ES_CLASSES_COUNT; i++)
        if (strlen(classes[i].name) == n && memcmp(w, classes[i].name, n) == 0)
            return classes[i].bit;
    unsigned m = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned one = 0;
        for (int i = 0; i < ES_CLASSES_COUNT; i++)
            if (w[k] == classes[i].letter)
                one = classes[i].bit;
        if (w[k] == 'a')
            one = ES_CLASSES_ALL;
        if (one == 0)
            return 0;
        m |= one;
    }
    return m;
}

int es_classes_parse(const char *words, unsigned *mask, char *bad, size_t size) {
    unsigned m = 0;
    const char *p = words;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        unsigned w = n > 0 ? word_mask(p, n) : 0;
        if (w == 0) {
            snprintf(bad, size, "%.*s", (int)n, p);
            return -1;
        }
        m |= w;
        if (end == NULL)
            break;
        p = end + 1;
    }
    *mask = m;
    return 0;
}

int es_classes_words(char *buf, size_t size, unsigned mask) {
    assert(size > 0);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < ES_CLASSES_COUNT; i++) {
        if ((mask & classes[i].bit) == 0)
            continue;
        int k = snprintf(buf + at, size - at, "%s%s", at > 0 ? ", " : "", classes[i].name);
        if (k < 0 || (size_t)k >= size - at)
            return (int)(at + (size_t)(k > 0 ? k : 0));
        at += (size_t)k;
    }
    if (at == 0)
        return snprintf(buf, size, "none");
    return (int)at;
}

/* The list of words at `*p` up to `stop` (or the end of the text, `end`),
 * as a mask; `*p` moves past it and `stop`. False when a word is no class
 * or `stop` is not there. */
static bool list_at(const char **p, const char *end, const char *stop, unsigned *mask) {
    size_t k = strlen(stop);
    const char *q = *p;
    while (q < end && (size_t)(end - q) >= k && memcmp(q, stop, k) != 0)
        q++;
    if (k > 0 && ((size_t)(end - q) < k || memcmp(q, stop, k) != 0))
        return false;
    if (k == 0)
        q = end;
    *mask = 0;
    const char *w = *p;
    if (q - w == 4 && memcmp(w, "none", 4) == 0) {
        *p = q + k;
        return true;
    }
    if (w == q)
        return false; /* "none" when there is none */
    while (w < q) {
        const char *c = w;
        while (c < q && *c != ',')
            c++;
        unsigned m = name_mask(w, (size_t)(c - w));
        if (m == 0)
            return false; /* names only, as written above */
        *mask |= m;
        w = c < q ? c + 2 : q; /* ", " */
    }
    *p = q + k;
    return true;
}

bool es_classes_read(const char *text, size_t len, struct es_classes_notice *out) {
    const char *end = text + len;
    memset(out, 0, sizeof *out);
    size_t ks = sizeof ES_CLASSES_SWITCHED_WORDS - 1, kr = sizeof ES_CLASSES_REPORT_WORDS - 1;
    unsigned off;
    if (len > ks && memcmp(text, ES_CLASSES_SWITCHED_WORDS, ks) == 0) {
        const char *p = text + ks;
        out->switched = true;
        return list_at(&p, end, "; switched off: ", &out->switched_on) &&
               list_at(&p, end, "; now on: ", &out->switched_off) &&
               list_at(&p, end, "; now off: ", &out->on) && list_at(&p, end, " (asked by ", &off) &&
               (out->on & off) == 0 && (out->on | off) == ES_CLASSES_ALL;
    }
    if (len > kr && memcmp(text, ES_CLASSES_REPORT_WORDS, kr) == 0) {
        const char *p = text + kr;
        if (!list_at(&p, end, "; now off: ", &out->on) ||
            !list_at(&p, end, "; cannot be switched here: ", &off))
            return false;
        const char *paren = memchr(p, '(', (size_t)(end - p));
        const char *stop = paren != NULL && paren > p ? paren - 1 : end;
        return list_at(&p, stop, "", &out->fixed) && (out->on & off) == 0 &&
               (out->on | off) == ES_CLASSES_ALL;
    }
    return false;
}

void es_classes_compose(uint8_t *held_on, uint8_t *held_off, bool on, uint8_t switched) {
    uint8_t *add = on ? held_on : held_off, *drop = on ? held_off : held_on;
    *add |= switched;
    *drop &= (uint8_t)~switched;
    assert((*held_on & *held_off) == 0);
}
