/* The text of the notices (protocol.md 1.3) in one place for both sides
 * of the wire: the library writes it (es_notice.c, es_lossless.c) and the
 * command reads it (client/model/notes.c, and `record` writes the cut
 * notice), so the two cannot drift apart. Pure functions on buffers; any
 * thread. */
#ifndef ES_NOTICE_TEXT_H
#define ES_NOTICE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What every notice's message starts with. */
#define ES_NOTICE_PREFIX "eventlog-socket: "
/* The cut notice `record` ends a cut recording with, and the library a
 * stream it ends before the program's end marker (es_cut.h): the prefix,
 * these words, then why. */
#define ES_NOTICE_CUT_WORDS "recording cut: "

/* "eventlog-socket: dropped N chunks (X MiB)". */
int es_notice_format_drop(char *buf, size_t size, uint64_t chunks, uint64_t bytes);
/* "eventlog-socket: the program waited X ms (N times) for lossless clients
 * in the last S s". */
int es_notice_format_wait(char *buf, size_t size, uint64_t wait_ns, uint64_t waits,
                          uint64_t period_ms);
/* "eventlog-socket: streaming cost X ms of CPU in the last S s (RTS
 * threads W, walker K, loop L), M MiB sent". */
int es_notice_format_cost(char *buf, size_t size, uint64_t writer_ns, uint64_t walker_ns,
                          uint64_t loop_ns, uint64_t period_ms, uint64_t bytes_sent);
/* "eventlog-socket: recording cut: WHY". */
int es_notice_format_cut(char *buf, size_t size, const char *why);
/* The format functions return snprintf's count (the message is cut to
 * `size` - 1 bytes when longer). */

enum es_notice_kind {
    ES_NOTICE_NOT = 0, /* not a notice: the program's own message */
    ES_NOTICE_DROP,
    ES_NOTICE_WAIT,
    ES_NOTICE_COST,
    ES_NOTICE_CUT,
    ES_NOTICE_OTHER /* the prefix, but none of the above (a lossless notice, a malformed one) */
};

struct es_notice_read {
    enum es_notice_kind kind;
    uint64_t chunks;                   /* drop */
    double mib;                        /* drop; cost: MiB sent */
    double ms;                         /* wait: waited; cost: CPU ms in all */
    uint64_t times;                    /* wait */
    double secs;                       /* cost: the period */
    double rts_ms, walker_ms, loop_ms; /* cost */
    char why[256];                     /* cut: why (cut to fit) */
};

/* What the message `text` (`len` bytes, not NUL-terminated) says. A notice
 * whose figures do not read (or are negative) is ES_NOTICE_OTHER. Only
 * `kind` is set for ES_NOTICE_NOT (the program's messages, the common
 * case, pay one comparison). */
void es_notice_parse(const uint8_t *text, size_t len, struct es_notice_read *out);

#endif
