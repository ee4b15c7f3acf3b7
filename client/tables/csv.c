/* SPDX-License-Identifier: BSD-3-Clause */
#include "csv.h"

#include "format/es_utf8.h"

#include <stdbool.h>
#include <string.h>

void es_csv_text(FILE *f, const char *s, size_t n) {
    const char *nul = memchr(s, '\0', n);
    if (nul)
        n = (size_t)(nul - s);
    bool quote = false;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (quote)
        fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = es_utf8_len(p + i, n - i);
        if (k == 0) {
            fputs(ES_UTF8_REPLACEMENT, f);
            i++;
            continue;
        }
        if (k == 1 && p[i] == '"')
            fputc('"', f);
        fwrite(p + i, 1, k, f);
        i += k;
    }
    if (quote)
        fputc('"', f);
}

void es_csv_str(FILE *f, const char *s) {
    es_csv_text(f, s, strlen(s));
}

void es_csv_time(FILE *f, uint64_t ns) {
    fprintf(f, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
            (unsigned long long)(ns % 1000000000u));
}
