/* SPDX-License-Identifier: BSD-3-Clause */
/* A growing text buffer: what the web view's JSON (webjson, websparks),
 * the page (web), reports and the metrics' text are written into. Appends
 * never fail loudly: `oom` once one failed (the text is then incomplete and
 * must not be used). Always NUL-terminated after the first append. A buffer
 * belongs to the thread that writes it (the loop thread of serve and
 * metrics, report's only thread). */
#ifndef ES_HTTPBUF_H
#define ES_HTTPBUF_H

#include <stdbool.h>
#include <stddef.h>

struct es_httpbuf {
    char *p;
    size_t len, cap;
    bool oom;
};

void es_httpbuf_free(struct es_httpbuf *b);
void es_httpbuf_add(struct es_httpbuf *b, const char *s, size_t n);
void es_httpbuf_printf(struct es_httpbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append a string literal (only a literal compiles: sizeof of anything
 * else, say a ?: of two literals, would be a pointer's size). */
#define ES_HTTPBUF_ADD(b, lit) es_httpbuf_add((b), "" lit, sizeof("" lit) - 1)
/* A JSON string literal of `s` (quotes included); '<', '>' and '&' as \u
 * escapes too, so that the JSON can sit inside an HTML <script> element. */
void es_httpbuf_json_str(struct es_httpbuf *b, const char *s);

#endif
