/* SPDX-License-Identifier: BSD-3-Clause */
#include "buf.h"

#include "format/es_utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void es_httpbuf_free(struct es_httpbuf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

static bool reserve(struct es_httpbuf *b, size_t more) {
    if (b->oom)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    size_t ncap = b->cap ? b->cap : 4096;
    while (ncap < b->len + more + 1)
        ncap *= 2;
    char *np = realloc(b->p, ncap);
    if (np == NULL) {
        b->oom = true;
        return false;
    }
    b->p = np;
    b->cap = ncap;
    return true;
}

void es_httpbuf_add(struct es_httpbuf *b, const char *s, size_t n) {
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void es_httpbuf_printf(struct es_httpbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void es_httpbuf_json_str(struct es_httpbuf *b, const char *s) {
    ES_HTTPBUF_ADD(b, "\"");
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        /* '<', '>' and '&' escaped too: the text may end up in a <script>. */
        if (p[i] < 0x20 || p[i] == '"' || p[i] == '\\' || p[i] == '<' || p[i] == '>' ||
            p[i] == '&' || p[i] == 0x7f) {
            es_httpbuf_printf(b, "\\u%04x", p[i]);
        } else if (p[i] < 0x80) {
            es_httpbuf_add(b, s + i, 1);
        } else {
            /* Valid UTF-8 whatever the text (cbits/format/es_utf8.h's rule). */
            size_t k = es_utf8_len(p + i, n - i);
            if (k == 0)
                ES_HTTPBUF_ADD(b, "\\ufffd");
            else
                es_httpbuf_add(b, s + i, k);
            i += k ? k - 1 : 0;
        }
    }
    ES_HTTPBUF_ADD(b, "\"");
}
