/* SPDX-License-Identifier: BSD-3-Clause */
/* Census labels as the command keeps and writes them (model.h, "Census
 * labels"): one rule for the Prometheus exposition, the .hp file, the CSV,
 * the page and `top`, so that two labels a program told apart stay apart
 * in every one of them. A label is kept as the program sent it when it is
 * plain (es_model_label_plain); any other is made plain and given a
 * suffix, '~' and the 16 hex digits of a hash of every byte the program
 * sent (FNV-1a, 64 bits, unseeded: the same label has the same suffix in
 * every scrape and every run). No plain label ends as a suffix does, so a
 * renamed label is never a plain one, and two renamed labels differ
 * unless their hashes do not. Pure; any thread. */
#include "impl.h"

#include "format/es_utf8.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

/* The length of the character at s[0..n) (1 to 4) when it is valid UTF-8
 * and no control character (C0, DEL, C1: what a terminal, a log reader
 * or a format's line reader may act on); 0 otherwise. */
static size_t shown_len(const uint8_t *s, size_t n) {
    if (s[0] < 0x20 || s[0] == 0x7f)
        return 0;
    size_t k = es_utf8_len(s, n);
    if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0)
        return 0; /* U+0080 to U+009F */
    return k;
}

/* Whether the `n` bytes at `s` end as a suffix does. */
static bool ends_as_suffix(const char *s, size_t n) {
    if (n < ES_MODEL_LABEL_SUFFIX_LEN || s[n - ES_MODEL_LABEL_SUFFIX_LEN] != '~')
        return false;
    for (size_t i = n - ES_MODEL_LABEL_SUFFIX_LEN + 1; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

bool es_model_label_plain(const char *s, size_t n) {
    if (n > ES_MODEL_LABEL_MAX || memchr(s, '\0', n) != NULL || ends_as_suffix(s, n))
        return false;
    if (n == sizeof ES_MODEL_OTHER_LABEL - 1 && memcmp(s, ES_MODEL_OTHER_LABEL, n) == 0)
        return false;
    const uint8_t *p = (const uint8_t *)s;
    for (size_t i = 0; i < n;) {
        size_t k = shown_len(p + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

/* Append the suffix of hash `h` to the text of length `len` in `out`,
 * which has room for it. */
static size_t put_suffix(char *out, size_t len, uint64_t h) {
    snprintf(out + len, ES_MODEL_LABEL_SUFFIX_LEN + 1, "~%016llx", (unsigned long long)h);
    return len + ES_MODEL_LABEL_SUFFIX_LEN;
}

size_t es_model_label_clean(char *out, const uint8_t *raw, size_t n) {
    const uint8_t *nul = memchr(raw, 0, n);
    if (nul != NULL)
        n = (size_t)(nul - raw);
    if (es_model_label_plain((const char *)raw, n)) {
        memcpy(out, raw, n);
        out[n] = '\0';
        return n;
    }
    /* Made plain, as many whole characters as leave room for the suffix. */
    const size_t room = ES_MODEL_LABEL_MAX - ES_MODEL_LABEL_SUFFIX_LEN;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        /* A bad byte is one U+FFFD, a control character (1 or 2 bytes) one. */
        size_t whole = es_utf8_len(raw + i, n - i), step = whole ? whole : 1;
        bool shown = shown_len(raw + i, n - i) != 0;
        const uint8_t *from = shown ? raw + i : (const uint8_t *)ES_UTF8_REPLACEMENT;
        size_t put = shown ? step : ES_UTF8_REPLACEMENT_LEN;
        if (k + put > room)
            break;
        memcpy(out + k, from, put);
        k += put;
        i += step;
    }
    k = put_suffix(out, k, fnv1a(raw, n));
    assert(k <= ES_MODEL_LABEL_MAX && !es_model_label_plain(out, k));
    return k;
}

size_t es_model_label_rename(char *out, size_t size, const char *shown, const char *of) {
    assert(size > ES_MODEL_LABEL_SUFFIX_LEN);
    if (out != shown)
        snprintf(out, size, "%s", shown);
    size_t len = es_utf8_cut(out, size - 1 - ES_MODEL_LABEL_SUFFIX_LEN);
    return put_suffix(out, len, fnv1a((const uint8_t *)of, strlen(of)));
}
