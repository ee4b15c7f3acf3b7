/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_notice_text.h"

#include "es_classes.h"

#include <stdio.h>
#include <string.h>

#define DROP_WORDS    "dropped "
#define WAIT_WORDS    "the program waited "
#define COST_WORDS    "streaming cost "
#define WINDOW_WORDS  "window of "
#define REFUSED_WORDS "window refused: "
#define FOLLOWS       "; the live stream follows"

int es_notice_text_drop(char *buf, size_t size, uint64_t chunks, uint64_t bytes) {
    return snprintf(buf, size, ES_NOTICE_PREFIX DROP_WORDS "%llu chunks (%.1f MiB)",
                    (unsigned long long)chunks, (double)bytes / (1 << 20));
}

int es_notice_text_wait(char *buf, size_t size, uint64_t wait_ns, uint64_t waits,
                        uint64_t period_ms) {
    return snprintf(buf, size,
                    ES_NOTICE_PREFIX WAIT_WORDS "%.1f ms (%llu times) for lossless clients in "
                                                "the last %.1f s",
                    (double)wait_ns / 1e6, (unsigned long long)waits, (double)period_ms / 1000);
}

int es_notice_text_cost(char *buf, size_t size, uint64_t writer_ns, uint64_t walker_ns,
                        uint64_t loop_ns, uint64_t period_ms, uint64_t bytes_sent) {
    uint64_t total = writer_ns + walker_ns + loop_ns;
    return snprintf(buf, size,
                    ES_NOTICE_PREFIX COST_WORDS "%.1f ms of CPU in the last %.1f s (RTS threads "
                                                "%.1f, walker %.1f, loop %.1f), %.1f MiB sent",
                    (double)total / 1e6, (double)period_ms / 1000, (double)writer_ns / 1e6,
                    (double)walker_ns / 1e6, (double)loop_ns / 1e6, (double)bytes_sent / (1 << 20));
}

int es_notice_text_window(char *buf, size_t size, uint64_t blocks, uint64_t bytes, uint64_t from_ns,
                          uint64_t to_ns) {
    return snprintf(buf, size,
                    ES_NOTICE_PREFIX WINDOW_WORDS "%llu blocks (%llu bytes) from %.3f s to %.3f s, "
                                                  "kept before this connection",
                    (unsigned long long)blocks, (unsigned long long)bytes, (double)from_ns / 1e9,
                    (double)to_ns / 1e9);
}

int es_notice_text_window_refused(char *buf, size_t size, const char *why) {
    return snprintf(buf, size, ES_NOTICE_PREFIX REFUSED_WORDS "%s" FOLLOWS, why);
}

int es_notice_text_classes_switched(char *buf, size_t size, unsigned was, unsigned now,
                                    const char *by) {
    char on[128], off[128], now_on[128], now_off[128];
    es_classes_words(on, sizeof on, now & ~was);
    es_classes_words(off, sizeof off, was & ~now);
    es_classes_words(now_on, sizeof now_on, now);
    es_classes_words(now_off, sizeof now_off, ES_CLASSES_ALL & ~now);
    return snprintf(buf, size,
                    ES_NOTICE_PREFIX ES_CLASSES_SWITCHED_WORDS
                    "%s; switched off: %s; now on: %s; now off: %s (asked by %s)",
                    on, off, now_on, now_off, by);
}

int es_notice_text_classes_report(char *buf, size_t size, unsigned on, unsigned fixed,
                                  const char *why) {
    char now_on[128], now_off[128], cannot[128];
    es_classes_words(now_on, sizeof now_on, on);
    es_classes_words(now_off, sizeof now_off, ES_CLASSES_ALL & ~on);
    es_classes_words(cannot, sizeof cannot, fixed);
    return snprintf(buf, size,
                    ES_NOTICE_PREFIX ES_CLASSES_REPORT_WORDS
                    "%s; now off: %s; cannot be switched here: %s%s%s%s",
                    now_on, now_off, cannot, fixed != 0 && why != NULL ? " (" : "",
                    fixed != 0 && why != NULL ? why : "", fixed != 0 && why != NULL ? ")" : "");
}

/* A text that starts with `words`: the rest (at most `size` - 1 bytes of
 * it) into `out`, less `tail` when it ends so; false otherwise. */
static bool rest_of(const char *text, size_t len, const char *words, const char *tail, char *out,
                    size_t size) {
    size_t k = strlen(words), t = strlen(tail);
    if (len < k || memcmp(text, words, k) != 0)
        return false;
    size_t n = len - k;
    if (n >= t && memcmp(text + len - t, tail, t) == 0)
        n -= t;
    if (n > size - 1)
        n = size - 1;
    memcpy(out, text + k, n);
    out[n] = '\0';
    return true;
}

int es_notice_text_cut(char *buf, size_t size, const char *why) {
    return snprintf(buf, size, ES_NOTICE_PREFIX ES_NOTICE_CUT_WORDS "%s", why);
}

/* The words after `words` in `text` (the prefix already matched), as a
 * NUL-terminated copy in `buf`; NULL when the text goes on otherwise or
 * is too long for `buf` (no notice is). */
static const char *after(const char *text, size_t len, const char *words, char *buf, size_t size) {
    size_t k = strlen(words);
    if (len < k || len - k >= size || memcmp(text, words, k) != 0)
        return NULL;
    memcpy(buf, text + k, len - k);
    buf[len - k] = '\0';
    return buf;
}

static enum es_notice_kind figures(const char *text, size_t len, struct es_notice_read *o) {
    char w[240];
    const char *s;
    if ((s = after(text, len, DROP_WORDS, w, sizeof w)) != NULL) {
        unsigned long long chunks;
        if (sscanf(s, "%llu chunks (%lf MiB)", &chunks, &o->mib) != 2 || !(o->mib >= 0))
            return ES_NOTICE_OTHER;
        o->chunks = chunks;
        return ES_NOTICE_DROP;
    }
    if ((s = after(text, len, WAIT_WORDS, w, sizeof w)) != NULL) {
        unsigned long long times;
        if (sscanf(s, "%lf ms (%llu times)", &o->ms, &times) != 2 || !(o->ms >= 0))
            return ES_NOTICE_OTHER;
        o->times = times;
        return ES_NOTICE_WAIT;
    }
    if ((s = after(text, len, COST_WORDS, w, sizeof w)) != NULL) {
        if (sscanf(s,
                   "%lf ms of CPU in the last %lf s (RTS threads %lf, walker %lf, loop %lf), "
                   "%lf MiB sent",
                   &o->ms, &o->secs, &o->rts_ms, &o->walker_ms, &o->loop_ms, &o->mib) != 6 ||
            !(o->ms >= 0) || !(o->secs > 0) || !(o->mib >= 0))
            return ES_NOTICE_OTHER;
        return ES_NOTICE_COST;
    }
    if ((s = after(text, len, WINDOW_WORDS, w, sizeof w)) != NULL) {
        unsigned long long blocks, bytes;
        if (sscanf(s, "%llu blocks (%llu bytes) from %lf s to %lf s", &blocks, &bytes, &o->from_s,
                   &o->to_s) != 4 ||
            !(o->from_s >= 0) || !(o->to_s >= o->from_s))
            return ES_NOTICE_OTHER;
        o->chunks = blocks;
        o->bytes = bytes;
        return ES_NOTICE_WINDOW;
    }
    if (rest_of(text, len, REFUSED_WORDS, FOLLOWS, o->why, sizeof o->why))
        return ES_NOTICE_WINDOW_REFUSED;
    struct es_classes_notice c;
    if (es_classes_read(text, len, &c)) {
        o->classes_switched = c.switched;
        o->classes_on = c.on;
        o->classes_switched_on = c.switched_on;
        o->classes_switched_off = c.switched_off;
        return ES_NOTICE_CLASSES;
    }
    if (rest_of(text, len, ES_NOTICE_ERROR_WORDS, "", o->why, sizeof o->why))
        return ES_NOTICE_ERROR;
    if (rest_of(text, len, ES_NOTICE_CUT_WORDS, "", o->why, sizeof o->why))
        return ES_NOTICE_CUT;
    return ES_NOTICE_OTHER;
}

int es_notice_text_span(char *buf, size_t size, uint32_t os_thread, const char *word,
                        const char *label) {
    return snprintf(buf, size, ES_NOTICE_PREFIX ES_NOTICE_SPAN_WORDS "%lu: %s %s",
                    (unsigned long)os_thread, word, label);
}

bool es_notice_text_span_read(const uint8_t *text, size_t len, uint32_t *os_thread,
                              const uint8_t **words, size_t *words_len) {
    static const char head[] = ES_NOTICE_PREFIX ES_NOTICE_SPAN_WORDS;
    size_t k = sizeof head - 1;
    if (len <= k || memcmp(text, head, k) != 0)
        return false;
    uint64_t id = 0;
    size_t digits = 0;
    for (; k < len && text[k] >= '0' && text[k] <= '9' && digits < 10; k++, digits++)
        id = id * 10 + (uint64_t)(text[k] - '0');
    if (digits == 0 || id == 0 || id > UINT32_MAX || len - k < 2 || text[k] != ':' ||
        text[k + 1] != ' ')
        return false;
    *os_thread = (uint32_t)id;
    *words = text + k + 2;
    *words_len = len - k - 2;
    return true;
}

void es_notice_text_parse(const uint8_t *text, size_t len, struct es_notice_read *out) {
    size_t k = sizeof ES_NOTICE_PREFIX - 1;
    if (len < k || memcmp(text, ES_NOTICE_PREFIX, k) != 0) {
        /* The program's message: one comparison, and only the kind set
         * (the figures are read by kind). */
        out->kind = ES_NOTICE_NOT;
        return;
    }
    memset(out, 0, sizeof *out);
    out->kind = figures((const char *)text + k, len - k, out);
}
