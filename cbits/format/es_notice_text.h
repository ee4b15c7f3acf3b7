/* SPDX-License-Identifier: BSD-3-Clause */
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
/* The error notice the library posts when the RTS reports an error (an
 * uncaught exception, an exhausted heap) while the program runs: the
 * prefix, these words, then the RTS's message. */
#define ES_NOTICE_ERROR_WORDS "the RTS reported an error: "

/* "eventlog-socket: dropped N chunks (X MiB)". */
int es_notice_text_drop(char *buf, size_t size, uint64_t chunks, uint64_t bytes);
/* "eventlog-socket: the program waited X ms (N times) for lossless clients
 * in the last S s". */
int es_notice_text_wait(char *buf, size_t size, uint64_t wait_ns, uint64_t waits,
                        uint64_t period_ms);
/* "eventlog-socket: streaming cost X ms of CPU in the last S s (RTS
 * threads W, walker K, loop L), M MiB sent". */
int es_notice_text_cost(char *buf, size_t size, uint64_t writer_ns, uint64_t walker_ns,
                        uint64_t loop_ns, uint64_t period_ms, uint64_t bytes_sent);
/* The window notice (protocol.md 1.3), at the end of the definitions
 * block of a client that asked for the window: "eventlog-socket: window
 * of N blocks (B bytes) from T0 s to T1 s, kept before this connection".
 * B is exact: the window's blocks are the next B bytes of the stream after
 * the block holding the notice, T0 and T1 the earliest start and latest
 * end of their blocks (program time). It says nothing of what comes after
 * the window: the live stream, or nothing for a client that stops there
 * (`record --snapshot`, whose file holds the notice). Words after T1's
 * figure are not read (earlier builds added "; the live stream
 * follows"). */
int es_notice_text_window(char *buf, size_t size, uint64_t blocks, uint64_t bytes, uint64_t from_ns,
                          uint64_t to_ns);
/* "eventlog-socket: window refused: WHY; the live stream follows". */
/* WHY when the program keeps a window that holds nothing yet starts with
 * these words (then ": " and the reason), so that a client can tell it from
 * the other refusals: a window that will come, not one that never will. */
#define ES_NOTICE_EMPTY_WORDS "the window is empty"
/* That reason on GHC 9.0 (es_header_no_flush), whose RTS hands the events
 * over only in 2 MiB buffers and at exit. */
#define ES_NOTICE_EMPTY_GHC90                                                                      \
    "the program has events, but GHC 9.0's RTS hands them over only in 2 MiB buffers and at "      \
    "exit, and none has come yet"
int es_notice_text_window_refused(char *buf, size_t size, const char *why);
/* The event classes notices (es_classes.h reads them back): "eventlog-
 * socket: event classes switched on: L; switched off: L; now on: L; now
 * off: L (asked by BY)" from the classes on before and after a switch;
 * "eventlog-socket: event classes now on: L; now off: L; cannot be switched
 * here: L" then, when some cannot, " (WHY)". */
int es_notice_text_classes_switched(char *buf, size_t size, unsigned was, unsigned now,
                                    const char *by);
int es_notice_text_classes_report(char *buf, size_t size, unsigned on, unsigned fixed,
                                  const char *why);
/* "eventlog-socket: recording cut: WHY". */
int es_notice_text_cut(char *buf, size_t size, const char *why);
/* A span of C code (eventlog_socket_span_begin/_end, protocol.md 3):
 * "eventlog-socket: span in OS thread T: WORD label", WORD being START,
 * STOP or FAIL as in the program's own span messages; T is the calling OS
 * thread's id, which pairs them. The label is cut to fit `size`. */
#define ES_NOTICE_SPAN_WORDS "span in OS thread "
int es_notice_text_span(char *buf, size_t size, uint32_t os_thread, const char *word,
                        const char *label);
/* A span notice's OS thread and the words after it ("START label"), from
 * the message `text` (`len` bytes, the whole message with its prefix);
 * false for any other message. */
bool es_notice_text_span_read(const uint8_t *text, size_t len, uint32_t *os_thread,
                              const uint8_t **words, size_t *words_len);
/* The format functions return snprintf's count (the message is cut to
 * `size` - 1 bytes when longer). */

enum es_notice_kind {
    ES_NOTICE_NOT = 0, /* not a notice: the program's own message */
    ES_NOTICE_DROP,
    ES_NOTICE_WAIT,
    ES_NOTICE_COST,
    ES_NOTICE_CUT,
    ES_NOTICE_WINDOW,         /* the window follows */
    ES_NOTICE_WINDOW_REFUSED, /* a window was asked for and none follows */
    ES_NOTICE_ERROR,          /* the RTS reported an error (the program is failing) */
    ES_NOTICE_CLASSES,        /* event classes switched, or reported (es_classes.h) */
    ES_NOTICE_OTHER /* the prefix, but none of the above (a lossless notice, a malformed one) */
};

struct es_notice_read {
    enum es_notice_kind kind;
    uint64_t chunks;                   /* drop; window: its blocks */
    double mib;                        /* drop; cost: MiB sent */
    double ms;                         /* wait: waited; cost: CPU ms in all */
    uint64_t times;                    /* wait */
    double secs;                       /* cost: the period */
    double rts_ms, walker_ms, loop_ms; /* cost */
    uint64_t bytes;                    /* window: its bytes */
    double from_s, to_s;               /* window: the program time it covers */
    char why[256]; /* cut, window refused: why; error: the message (cut to fit) */
    /* event classes: a switch (else a report), the classes on after it,
     * those it switched on and off */
    bool classes_switched;
    unsigned classes_on, classes_switched_on, classes_switched_off;
};

/* What the message `text` (`len` bytes, not NUL-terminated) says. A notice
 * whose figures do not read (or are negative) is ES_NOTICE_OTHER. Only
 * `kind` is set for ES_NOTICE_NOT (the program's messages, the common
 * case, pay one comparison). */
void es_notice_text_parse(const uint8_t *text, size_t len, struct es_notice_read *out);

#endif
