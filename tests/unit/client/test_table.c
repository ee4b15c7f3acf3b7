/* SPDX-License-Identifier: BSD-3-Clause */
/* The rows of `eventlog-socket table` (client/tables/rows.c) and its CSV
 * fields (client/tables/csv.c): RFC 4180 quoting, text made valid UTF-8, exact
 * times; every kind's event read against its payload's length (a payload
 * cut anywhere is skipped and counted, never over-read: run under ASan
 * too); and a collection's stats row carrying its pause whichever of its
 * stats and its end comes first in the stream. */
#include "tables/csv.h"
#include "format/es_event_types.h"
#include "tables/rows.h"
#include "../unit.h"

#include <stdint.h>

static char *buf;
static size_t len;

static FILE *mem(void) {
    free(buf);
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        exit(1);
    return f;
}

static const char *text_field(const char *s, size_t n) {
    FILE *f = mem();
    es_csv_text(f, s, n);
    fclose(f);
    return buf;
}

static void field(const char *in, size_t n, const char *want, const char *what) {
    const char *got = text_field(in, n);
    if (!ok(strcmp(got, want) == 0, "%s", what))
        printf("#   got [%s], want [%s]\n", got, want);
}

UNIT_CASE(client_table_csv_fields) {
    field("plain", 5, "plain", "plain text as it is");
    field("a,b", 3, "\"a,b\"", "a comma quoted");
    field("say \"hi\"", 8, "\"say \"\"hi\"\"\"", "quotes doubled inside quotes");
    field("two\nlines", 9, "\"two\nlines\"", "a line break quoted");
    field("cr\r", 3, "\"cr\r\"", "a carriage return quoted");
    field("gr\xc3\xb6\xc3\x9f"
          "e \xe2\x9c\x93",
          11,
          "gr\xc3\xb6\xc3\x9f"
          "e \xe2\x9c\x93",
          "valid UTF-8 kept");
    field("a\xff"
          "b",
          3,
          "a\xef\xbf\xbd"
          "b",
          "a stray byte becomes U+FFFD");
    field("\xc0\x80", 2, "\xef\xbf\xbd\xef\xbf\xbd", "an overlong NUL is two bad bytes");
    field("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "a surrogate is not UTF-8");
    field("\xe2\x9c", 2, "\xef\xbf\xbd\xef\xbf\xbd", "a sequence cut short");
    field("ab\0cd", 5, "ab", "a NUL ends the text");
    FILE *f = mem();
    es_csv_time(f, 0);
    fputc(' ', f);
    es_csv_time(f, 1234567891ull);
    fputc(' ', f);
    es_csv_time(f, 86400000000000ull + 5);
    fclose(f);
    ok(strcmp(buf, "0.000000000 1.234567891 86400.000000005") == 0, "times exact: %s", buf);
}

UNIT_CASE(client_table_kinds) {
    ok(es_rows_kind("gc") == ES_ROWS_GC && es_rows_kind("threads") == ES_ROWS_THREADS &&
           es_rows_kind("census") == ES_ROWS_CENSUS,
       "kinds by name");
    ok(es_rows_kind("bogus") == -1 && es_rows_kind("") == -1 && es_rows_kind("GC") == -1,
       "unknown kinds refused");
    /* A row per event starts with its time; a span's row is the span's
     * (its label first, its start and duration after). */
    for (int k = 0; k < ES_ROWS_KINDS; k++)
        ok(strncmp(es_rows_columns(k), k == ES_ROWS_SPANS ? "label," : "time_s,",
                   k == ES_ROWS_SPANS ? 6 : 7) == 0 &&
               *es_rows_hint(k),
           "%s: columns start with time_s (spans: label), a hint", es_rows_kind_name(k));
}

/* Every event type a kind reads, with its payload's full length. */
static const struct {
    enum es_rows_kind kind;
    uint16_t type;
    size_t full;
} typed[] = {
    {ES_ROWS_GC, ES_EVENT_GC_STATS_GHC, 58},
    {ES_ROWS_HEAP, ES_EVENT_HEAP_SIZE, 12},
    {ES_ROWS_HEAP, ES_EVENT_HEAP_LIVE, 12},
    {ES_ROWS_HEAP, ES_EVENT_BLOCKS_SIZE, 12},
    {ES_ROWS_HEAP, ES_EVENT_HEAP_ALLOCATED, 12},
    {ES_ROWS_SPARKS, ES_EVENT_SPARK_COUNTERS, 56},
    {ES_ROWS_SPARKS, 39, 2},
    {ES_ROWS_THREADS, ES_EVENT_STOP_THREAD, 10},
    {ES_ROWS_THREADS, ES_EVENT_CREATE_THREAD, 4},
    {ES_ROWS_THREADS, ES_EVENT_MIGRATE_THREAD, 6},
    {ES_ROWS_THREADS, ES_EVENT_THREAD_LABEL, 4},
};

static size_t lines(const char *s) {
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Each payload cut short is skipped and counted; whole ones give a row of
 * as many fields as the header has. Payloads are exact-size heap blocks,
 * so ASan catches a read past them. */
UNIT_CASE(client_table_cut_payloads) {
    for (size_t i = 0; i < sizeof typed / sizeof *typed; i++) {
        FILE *f = mem();
        struct es_rows t;
        if (es_rows_init(&t, typed[i].kind, f) != 0)
            exit(1);
        /* GC_STATS_GHC of older RTSs lacks its last field (8 bytes). */
        size_t need = typed[i].type == ES_EVENT_GC_STATS_GHC ? 50 : typed[i].full;
        for (size_t n = 0; n <= typed[i].full; n++) {
            uint8_t *p = malloc(n ? n : 1);
            memset(p, 0x41, n);
            struct es_event ev = {.type = typed[i].type,
                                  .time = 1000 + n,
                                  .payload = p,
                                  .payload_len = n,
                                  .len = 10 + n};
            es_rows_event(&t, &ev, 3);
            free(p);
        }
        es_rows_finish(&t);
        fclose(f);
        size_t whole = typed[i].full - need + 1;
        ok(t.garbled == need && t.rows == whole && lines(buf) == whole + 1,
           "%s type %u: %zu cut payloads skipped, %zu rows (garbled %llu rows %llu)",
           es_rows_kind_name(typed[i].kind), typed[i].type, need, whole,
           (unsigned long long)t.garbled, (unsigned long long)t.rows);
        es_rows_destroy(&t);
    }
}

static void gc_event(struct es_rows *t, uint16_t type, uint64_t time, int cap) {
    uint8_t p[58] = {0};
    p[5] = 1; /* generation 1 */
    struct es_event ev = {.type = type,
                          .time = time,
                          .payload = p,
                          .payload_len = type == ES_EVENT_GC_STATS_GHC ? 58 : 0};
    es_rows_event(t, &ev, cap);
}

/* The stats row's duration_s (its fifth field) in the CSV's lines. */
UNIT_CASE(client_table_pauses) {
    FILE *f = mem();
    struct es_rows t;
    if (es_rows_init(&t, ES_ROWS_GC, f) != 0)
        exit(1);
    /* GHC 9.0: stats, then the end with an earlier time. */
    gc_event(&t, ES_EVENT_GC_START, 1000, 0);
    gc_event(&t, ES_EVENT_GC_STATS_GHC, 1500, 0);
    gc_event(&t, ES_EVENT_GC_END, 1400, 0);
    /* The other order; and another capability's own GC in between. */
    gc_event(&t, ES_EVENT_GC_START, 2000, 0);
    gc_event(&t, ES_EVENT_GC_START, 2010, 1);
    gc_event(&t, ES_EVENT_GC_END, 2020, 1);
    gc_event(&t, ES_EVENT_GC_END, 2250, 0);
    gc_event(&t, ES_EVENT_GC_STATS_GHC, 2300, 0);
    /* A stats row whose collection never ends (a cut stream). */
    gc_event(&t, ES_EVENT_GC_START, 3000, 0);
    gc_event(&t, ES_EVENT_GC_STATS_GHC, 3100, 0);
    es_rows_finish(&t);
    fclose(f);
    ok(strstr(buf, "\n0.000001500,0,stats,1,0.000000400,") != NULL,
       "stats before its end: the pause of its collection");
    ok(strstr(buf, "\n0.000001400,0,end,,0.000000400,") != NULL, "the end row's own interval");
    ok(strstr(buf, "\n0.000002300,0,stats,1,0.000000250,") != NULL,
       "stats after its end: the pause of its collection, not the other capability's");
    ok(strstr(buf, "\n0.000002020,1,end,,0.000000010,") != NULL, "capability 1's own GC");
    ok(strstr(buf, "\n0.000003100,0,stats,1,,") != NULL, "a collection without an end: empty");
    const char *a = strstr(buf, "0.000001500,0,stats"), *b = strstr(buf, "0.000001400,0,end");
    ok(a && b && a < b, "rows in the stream's order");
    ok(t.rows == 10, "a row per event (%llu)", (unsigned long long)t.rows);
    es_rows_destroy(&t);
}

/* Every STOP_THREAD status as `table threads` spells it (docs/command.md's
 * "Tables for dataframes"; the integration test compares them with ghc-events' words),
 * and a number GHC does not define as itself. */
UNIT_CASE(client_table_stop_statuses) {
    static const char *const codes[] = {
        "status_0",
        "heap_overflow",
        "stack_overflow",
        "yielding",
        "blocked",
        "finished",
        "foreign_call",
        "blocked_on_mvar",
        "blocked_on_black_hole",
        "blocked_on_read",
        "blocked_on_write",
        "blocked_on_delay",
        "blocked_on_stm",
        "blocked_on_do_proc",
        "status_14",
        "status_15",
        "blocked_on_ccall",
        "blocked_on_ccall_interruptible",
        "blocked_on_msg_throw_to",
        "migrating",
        "blocked_on_mvar_read",
        "blocked_on_io_completion",
        "status_22",
    };
    int wrong = 0;
    for (unsigned s = 0; s < sizeof codes / sizeof *codes; s++) {
        FILE *f = mem();
        struct es_rows t;
        if (es_rows_init(&t, ES_ROWS_THREADS, f) != 0)
            exit(1);
        uint8_t p[10] = {0, 0, 0, 42, (uint8_t)(s >> 8), (uint8_t)s, 0, 0, 0, 0};
        struct es_event ev = {
            .type = ES_EVENT_STOP_THREAD, .time = 1000, .payload = p, .payload_len = 10};
        es_rows_event(&t, &ev, 0);
        es_rows_finish(&t);
        fclose(f);
        char want[96];
        snprintf(want, sizeof want, "\n0.000001000,0,42,stop,%s,,,\n", codes[s]);
        if (strstr(buf, want) == NULL) {
            printf("# status %u: %s", s, strchr(buf, '\n') + 1);
            wrong++;
        }
        es_rows_destroy(&t);
    }
    ok(wrong == 0, "each stop status as docs/command.md lists it, an unknown one as status_N");
}
