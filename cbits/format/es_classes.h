/* SPDX-License-Identifier: BSD-3-Clause */
/* The RTS's classes of events (+RTS -l's letters) as this library names
 * them, for both sides of the wire: the bits (EVENTLOG_SOCKET_EVENTS_*),
 * their names and letters, a list of them read from words
 * ("scheduler,gc", "sg", "all") and written as words, and the event
 * classes notices (protocol.md 1.3) that say which are on, read back (the
 * library writes them with es_notice_text.h; the command reads them:
 * control, the model). Pure functions on buffers; any thread. */
#ifndef ES_CLASSES_H
#define ES_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ES_CLASSES_COUNT 6
/* Every class's bit (EVENTLOG_SOCKET_EVENTS_ALL). */
#define ES_CLASSES_ALL 0x3fu

/* The name of class bit `bit` ("scheduler", "gc", "nonmoving-gc",
 * "sparks-sampled", "sparks-full", "user"), its +RTS -l letter. */
const char *es_classes_name(unsigned bit);
char es_classes_letter(unsigned bit);

/* The classes that `words` names: names and letters separated by commas
 * ("scheduler,gc", "s,g", "sg", "all"). Returns 0 with `*mask` set, or -1
 * with the word that is no class (at most `size` - 1 bytes) in `bad`. */
int es_classes_parse(const char *words, unsigned *mask, char *bad, size_t size);

/* The classes of `mask` as words in the classes' order, joined by ", ";
 * "none" for none. Returns snprintf's count. */
int es_classes_words(char *buf, size_t size, unsigned mask);

/* A switch of the classes `switched` on (`on`) or off folded into the switches held
 * back so far (`*held_on`, `*held_off`, never sharing a bit), so that the
 * held pair acts as the switches would one after the other: "on A, off B,
 * on C" leaves A and C on and B off, "on A, off A" leaves A off. */
void es_classes_compose(uint8_t *held_on, uint8_t *held_off, bool on, uint8_t switched);

/* The words after the prefix that begin the notices: one that the classes
 * were switched (every client's stream), one that answers
 * EVENTLOG_SOCKET_CMD_EVENT_CLASSES (the asking connection's alone). */
#define ES_CLASSES_SWITCHED_WORDS "event classes switched on: "
#define ES_CLASSES_REPORT_WORDS   "event classes now on: "

/* What a notice says. */
struct es_classes_notice {
    bool switched;         /* a switch (else the report) */
    unsigned on;           /* the classes on after it */
    unsigned switched_on;  /* a switch: the classes it turned on */
    unsigned switched_off; /* and off */
    unsigned fixed;        /* the report: the classes that cannot be switched here */
};

/* Read a notice's text after the prefix (`len` bytes, not NUL-terminated):
 * true with `*out` set when it is one of the two, in full. */
bool es_classes_read(const char *text, size_t len, struct es_classes_notice *out);

#endif
