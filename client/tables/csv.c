#include "csv.h"

#include <stdbool.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s[0..n), or 0 when s[0]
 * starts none (overlong forms, surrogates and code points past U+10FFFF
 * are not valid). */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return len;
}

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
        size_t k = utf8_len(p + i, n - i);
        if (k == 0) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
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

void es_csv_clean_utf8(char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len((unsigned char *)s + i, n - i);
        if (k == 0) {
            s[i] = '?';
            k = 1;
        }
        i += k;
    }
}
