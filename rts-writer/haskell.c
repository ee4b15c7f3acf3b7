/* SPDX-License-Identifier: BSD-3-Clause */
/* The calls of the Haskell module (GHC.Eventlog.Socket) that can be
 * refused, each with the text of its refusal: the line the library logs to
 * say why (the variable or field, the value, what is taken), copied into
 * `why` for the exception, and written out to stderr before the call
 * returns, so that it comes before the exception's own line, whole. On the
 * thread that starts the library; the C API's callers get the same lines
 * on stderr and a code.
 *
 * And the line a handler's exception is told in (es_haskell_log), on the
 * library's threads that run Haskell handlers: through the library's own
 * log, so it comes out whole beside the library's lines (GHC's unbuffered
 * stderr writes a String a character at a time), and a stalled stderr
 * never holds up the thread that runs the hooks. */
#include "es_rts.h"

#include "base/es_config.h"
#include "base/es_log.h"

#include <stddef.h>
#include <string.h>

/* How long a refusal waits for its line to reach stderr. */
#define REFUSAL_DRAIN_MS 1000

int es_haskell_config_from_env(struct es_config *cfg, char *why, size_t size);
int es_haskell_set_options(const struct eventlog_socket_options *opts, char *why, size_t size);
int es_haskell_start_unix(const char *path, int wait, char *why, size_t size);
int es_haskell_start_tcp(const char *host, const char *port, int wait, char *why, size_t size);
int es_haskell_switch_event_classes(unsigned on, unsigned off, char *why, size_t size);
void es_haskell_log(const char *line);

static int told(int r) {
    es_log_capture(NULL, 0);
    if (r < 0)
        es_log_drain(REFUSAL_DRAIN_MS);
    return r;
}

int es_haskell_config_from_env(struct es_config *cfg, char *why, size_t size) {
    es_log_capture(why, size);
    return told(es_config_from_env(cfg));
}

int es_haskell_set_options(const struct eventlog_socket_options *opts, char *why, size_t size) {
    es_log_capture(why, size);
    return told(eventlog_socket_set_options(opts));
}

int es_haskell_start_unix(const char *path, int wait, char *why, size_t size) {
    es_log_capture(why, size);
    return told(eventlog_socket_start_unix(path, wait != 0));
}

int es_haskell_start_tcp(const char *host, const char *port, int wait, char *why, size_t size) {
    es_log_capture(why, size);
    return told(eventlog_socket_start_tcp(host, port, wait != 0));
}

int es_haskell_switch_event_classes(unsigned on, unsigned off, char *why, size_t size) {
    es_log_capture(why, size);
    return told(eventlog_socket_switch_event_classes(on, off));
}

/* The longest piece logged as one line: well inside es_log's line. */
#define LOG_PIECE 400

/* `text` as lines of the log: one per line of it, a long one in pieces cut
 * between UTF-8 characters, so an exception's message arrives whole. */
void es_haskell_log(const char *text) {
    const char *p = text;
    do {
        size_t n = strcspn(p, "\n");
        if (n > LOG_PIECE) {
            n = LOG_PIECE;
            while (n > 1 && ((unsigned char)p[n] & 0xC0) == 0x80)
                n--; /* not inside a character */
        }
        es_log("%.*s", (int)n, p);
        p += n;
        if (*p == '\n')
            p++;
    } while (*p != '\0');
}
