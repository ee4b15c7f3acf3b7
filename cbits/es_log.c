#include "es_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void es_log(const char *fmt, ...) {
    /* Format the whole line first and emit it with one write(2), so lines
     * from this library and from the RTS never interleave mid-line. */
    char line[512];
    int n = snprintf(line, sizeof line, "eventlog-socket: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, len);
    (void)ignored;
}
