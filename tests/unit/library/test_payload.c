/* SPDX-License-Identifier: BSD-3-Clause */
/* The one payload reader (cbits/format/es_payload.h) and the one table of
 * event names and STOP_THREAD statuses (cbits/format/es_event_names.h):
 * fields read big-endian; a payload cut at every length read up to its
 * end and no further, the reader saying so and staying bad; strings with
 * and without their NUL; hostile payloads of random bytes read with
 * random fields; block markers whole and short; the names and statuses
 * `table` and the views write. Every payload is a heap block of exactly
 * its length, so that ASan reports a read past it. No GHC. */
#include "format/es_event_names.h"
#include "format/es_payload.h"
#include "../unit.h"

#include <stdlib.h>
#include <string.h>

/* `n` bytes of `src` in a heap block of exactly that size (1 when empty,
 * so that the pointer is valid). */
static uint8_t *exact(const void *src, size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    if (p == NULL) {
        printf("Bail out! out of memory\n");
        exit(1);
    }
    if (n)
        memcpy(p, src, n);
    return p;
}

UNIT_CASE(payload_fixed_widths) {
    static const uint8_t bytes[] = {0x81, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02,
                                    0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xaa, 0xbb, 0xcc};
    uint8_t *p = exact(bytes, sizeof bytes);
    struct es_payload r = es_payload_init(p, sizeof bytes);
    uint8_t a = es_payload_u8(&r);
    uint16_t b = es_payload_u16(&r);
    uint32_t c = es_payload_u32(&r);
    uint64_t d = es_payload_u64(&r);
    ok(a == 0x81 && b == 0x1234 && c == 0xdeadbeef && d == 0x0102030405060708ull,
       "u8 u16 u32 u64 big-endian: %#x %#x %#x %#llx", a, b, c, (unsigned long long)d);
    ok(es_payload_ok(&r) && es_payload_left(&r) == 3, "three bytes left, all read whole");
    uint64_t odd = es_payload_uint(&r, 3);
    ok(odd == 0xaabbcc && es_payload_left(&r) == 0 && es_payload_ok(&r),
       "a 3-byte field: %#llx, nothing left", (unsigned long long)odd);
    ok(es_payload_u8(&r) == 0 && !es_payload_ok(&r), "one more byte: 0, and bad");
    free(p);

    p = exact(bytes, 8);
    r = es_payload_init(p, 8);
    const uint8_t *at = es_payload_bytes(&r, 5);
    ok(at == p && es_payload_left(&r) == 3, "5 bytes in place");
    ok(es_payload_bytes(&r, 4) == NULL && !es_payload_ok(&r) && es_payload_left(&r) == 0,
       "4 more of 3: NULL, bad, nothing left");
    free(p);
}

/* A record of every width (u8, u16, u32, u64: 15 bytes) cut at every
 * length: the fields that fit read right, the rest 0, and the reader bad
 * exactly when it was cut. A cut field does not make a later smaller one
 * readable: once bad, every read is bad. */
UNIT_CASE(payload_cut_everywhere) {
    static const uint8_t whole[15] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                      0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    int wrong = 0;
    for (size_t n = 0; n <= sizeof whole; n++) {
        uint8_t *p = exact(whole, n);
        struct es_payload r = es_payload_init(p, n);
        uint8_t a = es_payload_u8(&r);
        uint16_t b = es_payload_u16(&r);
        uint32_t c = es_payload_u32(&r);
        uint64_t d = es_payload_u64(&r);
        bool want_ok = n == sizeof whole;
        if (a != (n >= 1 ? 0x11 : 0) || b != (n >= 3 ? 0x2233 : 0) ||
            c != (n >= 7 ? 0x44556677u : 0) || d != (n >= 15 ? 0x8899aabbccddeeffull : 0) ||
            es_payload_ok(&r) != want_ok) {
            printf("# cut at %zu: %#x %#x %#x %#llx ok %d\n", n, a, b, c, (unsigned long long)d,
                   es_payload_ok(&r));
            wrong++;
        }
        /* Once bad: a byte, though one may be there, is not read. */
        if (!want_ok && (es_payload_u8(&r) != 0 || es_payload_ok(&r) || es_payload_left(&r)))
            wrong++;
        free(p);
    }
    ok(wrong == 0, "a payload cut at each of 0..15 bytes: whole fields read, then bad for good");

    /* 3 bytes: a u32 fails; the u16 that would fit after it is not read. */
    uint8_t *p = exact(whole, 3);
    struct es_payload r = es_payload_init(p, 3);
    es_payload_u32(&r);
    ok(es_payload_u16(&r) == 0 && !es_payload_ok(&r),
       "no read after a bad one, even one that fits");
    free(p);
}

static bool str_is(const uint8_t *s, size_t n, const char *want) {
    return n == strlen(want) && memcmp(s, want, n) == 0;
}

UNIT_CASE(payload_strings) {
    /* PROGRAM_ARGS-like: every string ended by its NUL. */
    static const char args[] = "prog\0-N2\0\0x"; /* "prog", "-N2", "", then "x" with no NUL */
    uint8_t *p = exact(args, sizeof args - 1);
    struct es_payload r = es_payload_init(p, sizeof args - 1);
    size_t n1, n2, n3, n4, n5;
    const uint8_t *s1 = es_payload_str(&r, &n1), *s2 = es_payload_str(&r, &n2),
                  *s3 = es_payload_str(&r, &n3), *s4 = es_payload_str(&r, &n4);
    ok(str_is(s1, n1, "prog") && str_is(s2, n2, "-N2") && n3 == 0 && s3 == p + 9 &&
           str_is(s4, n4, "x"),
       "NUL-terminated strings, an empty one, and a last one the payload ends");
    ok(es_payload_left(&r) == 0 && es_payload_ok(&r), "all read, none bad");
    es_payload_str(&r, &n5);
    ok(n5 == 0 && es_payload_ok(&r), "a string past the end is empty (GHC writes empty strings)");
    free(p);

    /* The rest, and a look at it first. */
    static const char label[] = "\x00\x00\x00\x07worker 1";
    p = exact(label, sizeof label - 1);
    r = es_payload_init(p, sizeof label - 1);
    uint32_t id = es_payload_u32(&r);
    size_t np, nr, nafter;
    const uint8_t *peek = es_payload_peek(&r, &np);
    const uint8_t *rest = es_payload_rest(&r, &nr);
    es_payload_rest(&r, &nafter);
    ok(id == 7 && peek == rest && np == 8 && str_is(rest, nr, "worker 1") && nafter == 0,
       "THREAD_LABEL-like: the id, then the label to the end (a look does not consume)");
    free(p);

    /* Once bad, strings and the rest are empty. */
    p = exact("ab", 2);
    r = es_payload_init(p, 2);
    es_payload_u32(&r);
    size_t ns, nrest;
    es_payload_str(&r, &ns);
    es_payload_rest(&r, &nrest);
    ok(ns == 0 && nrest == 0 && !es_payload_ok(&r), "after a bad read: empty strings");
    free(p);
}

/* Text copied as the command keeps it: valid UTF-8, cut between
 * characters, NUL-terminated. */
UNIT_CASE(payload_texts) {
    static const char in[] = "caf\xc3\xa9\xff\0next";
    uint8_t *p = exact(in, sizeof in - 1);
    struct es_payload r = es_payload_init(p, sizeof in - 1);
    char out[32], small[5], rest[32];
    size_t n = es_payload_text(&r, out, sizeof out);
    ok(n == strlen(out) && strcmp(out, "caf\xc3\xa9" ES_UTF8_REPLACEMENT) == 0,
       "a byte that starts no character becomes U+FFFD");
    es_payload_text(&r, rest, sizeof rest);
    ok(strcmp(rest, "next") == 0 && es_payload_ok(&r), "the next string after the NUL");
    free(p);

    p = exact(in, sizeof in - 1);
    r = es_payload_init(p, sizeof in - 1);
    es_payload_text(&r, small, sizeof small);
    ok(strcmp(small, "caf") == 0, "cut to fit before a character that does not: \"%s\"", small);
    es_payload_text(&r, rest, sizeof rest);
    ok(strcmp(rest, "next") == 0, "a cut copy still consumes its whole string");
    free(p);
}

/* Random payloads read with random fields: never past the end (ASan), the
 * bytes left only shrink, nothing is left once bad, and a bad reader
 * stays bad. Deterministic (a fixed seed). */
UNIT_CASE(payload_hostile) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int wrong = 0;
    for (int round = 0; round < 20000; round++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = x % 40;
        uint8_t buf[40];
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)(x >> (i % 8 * 8)) & (i % 3 ? 0xff : 0x0f); /* some NULs */
        uint8_t *p = exact(buf, n);
        struct es_payload r = es_payload_init(p, n);
        bool was_bad = false;
        for (int op = 0; op < 8; op++) {
            size_t before = es_payload_left(&r), len;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            switch (x % 7) {
            case 0:
                es_payload_u8(&r);
                break;
            case 1:
                es_payload_u16(&r);
                break;
            case 2:
                es_payload_u32(&r);
                break;
            case 3:
                es_payload_u64(&r);
                break;
            case 4:
                es_payload_str(&r, &len);
                break;
            case 5: {
                char out[8];
                es_payload_text(&r, out, sizeof out);
                wrong += strlen(out) >= sizeof out;
                break;
            }
            default:
                es_payload_skip(&r, x >> 8 & 15);
                break;
            }
            size_t after = es_payload_left(&r);
            wrong += after > before;
            wrong += !es_payload_ok(&r) && after != 0;
            wrong += es_payload_ok(&r) && r.p + after != p + n;
            wrong += was_bad && es_payload_ok(&r);
            was_bad = !es_payload_ok(&r);
        }
        free(p);
    }
    ok(wrong == 0, "20000 random payloads, random fields: bounded, shrinking, bad for good (%d)",
       wrong);
}

UNIT_CASE(payload_block_markers) {
    static const uint8_t marker[14] = {0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x30, 0x39, 0, 3};
    int wrong = 0;
    for (size_t n = 0; n <= sizeof marker; n++) {
        uint8_t *p = exact(marker, n);
        struct es_event ev = {.type = ES_EVENT_BLOCK_MARKER, .payload = p, .payload_len = n};
        struct es_block_fields b;
        bool whole = es_payload_block(&ev, &b);
        if (n == sizeof marker)
            wrong += !whole || b.size != 4096 || b.end_time != 12345 || b.cap != 3;
        else
            wrong += whole || b.size != 0 || b.end_time != 0 || b.cap != ES_GLOBAL_CAP;
        free(p);
    }
    ok(wrong == 0, "a block marker: size, end time, capability; cut short, the global buffer's");
}

UNIT_CASE(payload_names) {
    ok(strcmp(es_event_names_of(ES_EVENT_GC_START, ES_FAMILY_GC), "start") == 0 &&
           strcmp(es_event_names_of(ES_EVENT_GC_STATS_GHC, ES_FAMILY_GC), "stats") == 0 &&
           strcmp(es_event_names_of(ES_EVENT_REQUEST_SEQ_GC, ES_FAMILY_GC), "request_seq") == 0,
       "GC events by their names in `table gc`");
    ok(strcmp(es_event_names_of(ES_EVENT_CREATE_THREAD, ES_FAMILY_THREAD), "create") == 0 &&
           strcmp(es_event_names_of(ES_EVENT_SPARK_CREATE, ES_FAMILY_SPARK), "create") == 0 &&
           strcmp(es_event_names_of(ES_EVENT_CREATE_SPARK_THREAD, ES_FAMILY_THREAD),
                  "create_spark_thread") == 0 &&
           strcmp(es_event_names_of(ES_EVENT_SPARK_STEAL, ES_FAMILY_SPARK), "steal") == 0,
       "a name within its family: a thread's and a spark's create");
    ok(es_event_names_of(ES_EVENT_GC_START, ES_FAMILY_THREAD) == NULL &&
           es_event_names_of(ES_EVENT_CREATE_THREAD, ES_FAMILY_SPARK) == NULL &&
           es_event_names_of(ES_EVENT_USER_MARKER, ES_FAMILY_GC) == NULL &&
           es_event_names_of(ES_EVENT_HEAP_PROF_BEGIN, ES_FAMILY_GC) == NULL &&
           es_event_names_of(0xffff, ES_FAMILY_THREAD) == NULL &&
           es_event_names_of(ES_EVENT_CREATE_THREAD, ES_FAMILY_NONE) == NULL,
       "none for another family's event, an unnamed one or an id past the table");
    unsigned per[4] = {0};
    for (unsigned t = 0; t < 1024; t++)
        for (int f = ES_FAMILY_GC; f <= ES_FAMILY_THREAD; f++)
            per[f] += es_event_names_of(t, (enum es_event_family)f) != NULL;
    ok(per[ES_FAMILY_GC] == 9 && per[ES_FAMILY_SPARK] == 8 && per[ES_FAMILY_THREAD] == 8,
       "9 GC events, 8 spark events, 8 thread events named (%u %u %u)", per[ES_FAMILY_GC],
       per[ES_FAMILY_SPARK], per[ES_FAMILY_THREAD]);
}

/* The statuses: `table`'s code and the views' words side by side, and
 * what each leaves the thread doing. docs/command.md lists the codes. */
UNIT_CASE(payload_statuses) {
    static const struct {
        unsigned status;
        const char *code, *words;
        enum es_stop_kind kind;
    } want[] = {
        {1, "heap_overflow", "heap overflow", ES_STOP_RUNNABLE},
        {2, "stack_overflow", "stack overflow", ES_STOP_RUNNABLE},
        {3, "yielding", "yielding", ES_STOP_RUNNABLE},
        {4, "blocked", "blocked", ES_STOP_BLOCKED},
        {5, "finished", "finished", ES_STOP_FINISHED},
        {6, "foreign_call", "in foreign call", ES_STOP_FOREIGN},
        {7, "blocked_on_mvar", "blocked on MVar", ES_STOP_BLOCKED},
        {8, "blocked_on_black_hole", "blocked on black hole", ES_STOP_BLOCKED},
        {12, "blocked_on_stm", "blocked on STM", ES_STOP_BLOCKED},
        {19, "migrating", "migrating", ES_STOP_BLOCKED},
        {20, "blocked_on_mvar_read", "blocked on MVar (read)", ES_STOP_BLOCKED},
        {21, "blocked_on_io_completion", "blocked on I/O completion", ES_STOP_BLOCKED},
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const struct es_stop_status *s = es_event_names_stop_status(want[i].status);
        if (s == NULL || strcmp(s->code, want[i].code) != 0 ||
            strcmp(s->words, want[i].words) != 0 ||
            es_event_names_stop_kind(want[i].status) != want[i].kind) {
            printf("# status %u: %s / %s\n", want[i].status, s ? s->code : "(none)",
                   s ? s->words : "(none)");
            wrong++;
        }
    }
    ok(wrong == 0, "statuses: code, words and what each leaves the thread doing");
    ok(es_event_names_stop_status(0) == NULL && es_event_names_stop_status(14) == NULL &&
           es_event_names_stop_status(15) == NULL && es_event_names_stop_status(22) == NULL &&
           es_event_names_stop_status(65535) == NULL,
       "no entry for numbers GHC does not post (0, 14, 15, past 21)");
    ok(es_event_names_stop_kind(0) == ES_STOP_RUNNABLE &&
           es_event_names_stop_kind(14) == ES_STOP_BLOCKED &&
           es_event_names_stop_kind(22) == ES_STOP_BLOCKED &&
           es_event_names_stop_kind(65535) == ES_STOP_BLOCKED,
       "unknown numbers above 6 leave it blocked, on what unknown");
    unsigned defined = 0, unique = 1, lower = 1;
    for (unsigned s = 0; s < 256; s++) {
        const struct es_stop_status *a = es_event_names_stop_status(s);
        if (a == NULL)
            continue;
        defined++;
        lower &= strspn(a->code, "abcdefghijklmnopqrstuvwxyz_") == strlen(a->code) && *a->words;
        for (unsigned t = 0; t < s; t++)
            unique &= es_event_names_stop_status(t) == NULL ||
                      strcmp(es_event_names_stop_status(t)->code, a->code) != 0;
    }
    ok(defined == 19 && unique && lower,
       "19 statuses, each code distinct, lower case and '_' only, with words (%u)", defined);
}
