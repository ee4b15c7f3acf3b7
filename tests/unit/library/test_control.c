/* SPDX-License-Identifier: BSD-3-Clause */
/* The control-frame parser fed both framings whole, split at every byte,
 * interleaved and buried in junk, and checked against a literal reference
 * scan (control_ref.h) on megabytes of random data holding frames. */
#include "control_ref.h"
#include "format/es_commands.h"
#include "format/es_control.h"
#include "../unit.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <stdio.h>
#include <string.h>

/* Upstream frames as C strings: the magic, version 0, a length, a name. */
#define UMAGIC      "\xF0\x9E\x97\x8C"
#define UP(len, ns) UMAGIC "\x00" len ns
#define BUILTIN(id) UP("\x0f", "eventlog-socket") id

#define START_HEAP "\x01"
#define STOP_HEAP  "\x02"
#define CENSUS     "\x03"
#define START_CC   "\x04"
#define STOP_CC    "\x05"

/* Feed `len` bytes in pieces of `step` bytes (0: all at once). */
static struct control_got feed_n(const char *buf, size_t len, size_t step, uint64_t *unknown) {
    struct es_control_parser p;
    struct control_got g = {.n = 0};
    es_control_init(&p);
    if (step == 0)
        step = len ? len : 1;
    for (size_t i = 0; i < len; i += step)
        es_control_feed(&p, (const uint8_t *)buf + i, len - i < step ? len - i : step,
                        control_collect, &g);
    if (unknown != NULL)
        *unknown = p.unknown;
    return g;
}

static struct control_got feed(const char *buf, size_t len, size_t step) {
    return feed_n(buf, len, step, NULL);
}

static int same(struct control_got g, const char *want, size_t n) {
    return g.n == n && memcmp(g.cmds, want, n) == 0;
}

/* The input gives the commands `want` and `unknown` ignored frames however
 * it is cut: in one piece, in pieces of every size, and in two pieces at
 * every byte. Returns 0 or the first failing cut, described in `why`. */
static int every_cut(const char *buf, size_t len, const char *want, size_t n, uint64_t unknown,
                     char *why, size_t why_len) {
    for (size_t step = 0; step <= len; step++) {
        uint64_t u;
        struct control_got g = feed_n(buf, len, step, &u);
        if (!same(g, want, n) || u != unknown) {
            snprintf(why, why_len, "pieces of %zu: %zu commands, %llu unknown", step, g.n,
                     (unsigned long long)u);
            return -1;
        }
    }
    for (size_t cut = 1; cut < len; cut++) {
        struct es_control_parser p;
        struct control_got g = {.n = 0};
        es_control_init(&p);
        es_control_feed(&p, (const uint8_t *)buf, cut, control_collect, &g);
        es_control_feed(&p, (const uint8_t *)buf + cut, len - cut, control_collect, &g);
        if (!same(g, want, n) || p.unknown != unknown) {
            snprintf(why, why_len, "cut at byte %zu: %zu commands, %llu unknown", cut, g.n,
                     (unsigned long long)p.unknown);
            return -1;
        }
    }
    snprintf(why, why_len, "every cut");
    return 0;
}

#define CUTS(bytes, want, unknown, name)                                                           \
    do {                                                                                           \
        char why_[128];                                                                            \
        ok(every_cut(bytes, sizeof bytes - 1, want, sizeof want - 1, unknown, why_,                \
                     sizeof why_) == 0,                                                            \
           "%s (%s)", name, why_);                                                                 \
    } while (0)

/* The namespace the parser holds while it delivers an upstream command. */
struct seen_ns {
    struct es_control_parser *p;
    char ns[256];
    size_t n;
};

static void remember_ns(uint8_t cmd, void *ctx) {
    struct seen_ns *s = ctx;
    (void)cmd;
    memcpy(s->ns, s->p->ns, s->p->ns_len);
    s->ns[s->p->ns_len] = '\0';
    s->n++;
}

/* Random input: junk biased towards magic bytes, with whole and broken
 * frames of both framings in it. */
/* Versions 14 and 19 of clang-format lay a braced macro body out apart. */
/* clang-format off */
#define PIECE(bytes) {bytes, sizeof bytes - 1}
/* clang-format on */
static void random_input(uint8_t *buf, size_t size) {
    static const struct {
        const char *bytes;
        size_t len;
    } pieces[] = {
        PIECE("GCTL"),
        PIECE(UMAGIC),
        PIECE(UMAGIC "\x00"),
        PIECE(UMAGIC "\x01"),
        PIECE(UMAGIC "\x00\x00"),
        PIECE(UP("\x0f", "eventlog-sock")),
        PIECE(UP("\xff", "")),
        PIECE(UP("\x03", "abc")),
        PIECE(UP("\x08", "eventlog")),
        PIECE(UP("\x04", "GCTL")),
    };
    for (size_t i = 0; i < size;) {
        int r = rand() % 64;
        if (r == 0 && size - i >= 5) {
            memcpy(buf + i, "GCTL", 4);
            buf[i + 4] = (uint8_t)(rand() % 8);
            i += 5;
        } else if (r == 1 && size - i >= 22) {
            memcpy(buf + i, BUILTIN(""), 21);
            buf[i + 21] = (uint8_t)(rand() % 8);
            i += 22;
        } else if (r == 2) {
            size_t k = (size_t)rand() % (sizeof pieces / sizeof pieces[0]);
            size_t len = pieces[k].len < size - i ? pieces[k].len : size - i;
            memcpy(buf + i, pieces[k].bytes, len);
            i += len;
        } else {
            int k = rand() % 16;
            if (k < 2)
                buf[i++] = (uint8_t)(k == 0 ? "GCTL" : UMAGIC)[rand() % 4];
            else
                buf[i++] = (uint8_t)rand();
        }
    }
}

/* GCTL alone, as before. */
UNIT_CASE(control_gctl_frames) {
    ok(same(feed("GCTL\x01", 5, 0), "\x01", 1), "one whole frame");
    ok(same(feed("GCTL\x01GCTL\x02GCTL\x03", 15, 0), "\x01\x02\x03", 3), "three frames at once");
    ok(same(feed("GCTL\x01GCTL\x02GCTL\x03", 15, 1), "\x01\x02\x03", 3), "byte by byte");
    ok(same(feed("GCTL\x01GCTL\x02GCTL\x03", 15, 3), "\x01\x02\x03", 3), "split across reads");
    ok(same(feed("GCTGCTL\x03", 8, 0), "\x03", 1), "partial magic then a frame");
    ok(same(feed("GCTGCTL\x03", 8, 1), "\x03", 1), "partial magic then a frame, byte by byte");
    ok(same(feed("GGGCTL\x02", 7, 0), "\x02", 1), "repeated G then a frame");
    ok(same(feed("hello GCTL\x01 world", 17, 2), "\x01", 1), "frame inside garbage");
    ok(same(feed("GCTL\x0cGCTL\x02", 10, 0), "\x02", 1), "unknown command ignored");
    ok(same(feed("GCTL\x0b\x01GCTL\x02", 11, 0), "\x81\x02", 2) &&
           same(feed("GCTL\x0b\x01GCTL\x02", 11, 1), "\x81\x02", 2),
       "GCTL 0x0b and a class: a switch off (0x81)");
    ok(same(feed("GCTL\x0aGCTL\x02", 10, 0), "", 0),
       "the byte after a switch is its argument, even a G (no class: unknown)");
    ok(same(feed("GCTL\x08", 5, 0), "\x08", 1) && same(feed("GCTL\x08", 5, 1), "\x08", 1),
       "GCTL 0x08 asks for the window");
    ok(same(feed("GCTL\x07", 5, 0), "\x07", 1) && same(feed("GCTL\x07", 5, 1), "\x07", 1),
       "GCTL 0x07 asks for cost notices");
    /* The frame a client builds (es_control_frame) is the frame this parser reads. */
    for (uint8_t cmd = 1; cmd <= 8; cmd++) {
        uint8_t frame[ES_CONTROL_MAGIC_LEN + 1];
        es_control_frame(frame, cmd);
        ok(same(feed((const char *)frame, sizeof frame, 1), (const char *)&cmd, 1),
           "es_control_frame(0x%02x) reads back", cmd);
    }
    ok(same(feed("GCTL\x00GCTL\x03", 10, 0), "\x03", 1), "zero command byte ignored");
    ok(same(feed("GCTLGCTL\x01", 9, 0), "", 0), "the byte after a magic is the command, even a G");
    ok(same(feed("GCTL", 4, 0), "", 0), "magic alone gives nothing");
    CUTS("GCTL\x04GCTL\x05", START_CC STOP_CC, 0, "GCTL cost-centre commands 0x04 and 0x05");
}

UNIT_CASE(control_unknown_counted) {
    struct es_control_parser p;
    struct control_got g = {.n = 0};
    es_control_init(&p);
    es_control_feed(&p, (const uint8_t *)"GCTL\x0c", 5, control_collect, &g);
    ok(p.unknown == 1 && g.n == 0, "unknown commands are counted");
}

/* The upstream framing: every built-in command, and the mapping. */
UNIT_CASE(control_upstream_commands) {
    CUTS(BUILTIN("\x01") BUILTIN("\x02") BUILTIN("\x03") BUILTIN("\x04") BUILTIN("\x05"),
         START_CC STOP_CC START_HEAP STOP_HEAP CENSUS, 0,
         "upstream ids 1-5 are start/stop cost-centre, start/stop heap, census");
    ok(es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 5) ==
               EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 1) ==
               EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 6) ==
               EVENTLOG_SOCKET_CMD_LOSSLESS &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 7) ==
               EVENTLOG_SOCKET_CMD_COST_NOTICES &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 8) ==
               EVENTLOG_SOCKET_CMD_WINDOW &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 9) ==
               EVENTLOG_SOCKET_CMD_EVENT_CLASSES &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 0x43) == 0x43 &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 0x80) == 0 &&
           es_control_upstream_command((const uint8_t *)"eventlog-socket", 15, 10) == 0 &&
           es_control_upstream_command((const uint8_t *)"eventlog", 8, 5) == 0,
       "the upstream mapping, and nothing outside it");
    CUTS(BUILTIN("\x07") "GCTL\x07", "\x07\x07", 0,
         "cost notices (7) in both framings, cut anywhere");
}

/* Both framings interleaved, with junk between them. */
UNIT_CASE(control_interleaved) {
    CUTS("GCTL\x03" BUILTIN("\x05") "xyGCTL\x01" BUILTIN("\x04") "\x8c\x97GCTL\x02",
         CENSUS CENSUS START_HEAP STOP_HEAP STOP_HEAP, 0, "interleaved framings and junk");
    CUTS("GCT" BUILTIN("\x05"), CENSUS, 0, "a partial GCTL magic then an upstream frame");
    CUTS("\xF0\x9E\x97GCTL\x03", CENSUS, 0, "a partial upstream magic then a GCTL frame");
    CUTS("\xF0\x9E" BUILTIN("\x03"), START_HEAP, 0, "a partial upstream magic then its frame");
    CUTS(UP("\x0f", "event") "GCTL\x03", CENSUS, 0,
         "an upstream frame cut in its namespace by a GCTL frame");
    CUTS(UP("\x0f", "eventlog") BUILTIN("\x05"), CENSUS, 0,
         "an upstream frame cut in its namespace by another upstream frame");
    CUTS(UMAGIC "\x00"
                "GCTL\x02",
         STOP_HEAP, 0, "a GCTL magic starting at the length byte");
    CUTS(UP("\x04", "GCTL") "\x03", CENSUS, 0,
         "a GCTL magic filling the namespace wins over the frame");
    CUTS(UP("\x02", "xG") "CTL\x01", "", 1,
         "a magic completed by the id byte does not count: the id is taken");
    CUTS(BUILTIN("G") "CTL\x01", "G", 0,
         "the byte after the namespace is the id, even a G (a switch on: 0x40 | 7)");
}

/* Wrong versions and lengths. */
UNIT_CASE(control_wrong_versions_and_lengths) {
    CUTS(UMAGIC "\x01\x0f"
                "eventlog-socket\x05"
                "GCTL\x03",
         CENSUS, 0, "a wrong version byte: the frame is skipped, the next one is found");
    CUTS(UMAGIC "GCTL\x01", START_HEAP, 0, "a version byte that begins a GCTL magic");
    CUTS(UMAGIC UMAGIC "\x00\x0f"
                       "eventlog-socket\x02",
         STOP_CC, 0, "a version byte that begins an upstream magic");
    CUTS(UMAGIC "\x00\x00" BUILTIN("\x05"), CENSUS, 0, "a zero length is skipped");
    CUTS(UMAGIC "\x00\xff"
                "eventlog-socket\x05"
                "GCTL\x03",
         CENSUS, 0, "a length running past the data: the next GCTL frame is found");
    CUTS(UMAGIC "\x00\xff"
                "eventlog-socket\x05" BUILTIN("\x03"),
         START_HEAP, 0, "a length running past the data: the next upstream frame is found");
    CUTS(UMAGIC "\x00\x0e"
                "eventlog-socket\x05",
         "", 1, "a length one short: unknown namespace, the last byte taken as id");
}

/* Unknown namespaces and ids are whole frames: ignored and counted. */
UNIT_CASE(control_unknown_namespaces) {
    CUTS(UP("\x03", "foo") "\x01"
                           "GCTL\x02",
         STOP_HEAP, 1, "an unknown namespace is ignored");
    CUTS(UP("\x08", "eventlog") "\x05", "", 1, "a prefix of the namespace is not the namespace");
    CUTS(UP("\x10", "eventlog-socketX") "\x05", "", 1, "nor is a longer name");
    CUTS(UP("\x0f", "EVENTLOG-SOCKET") "\x05", "", 1, "names are compared byte for byte");
    CUTS(BUILTIN("\x00") BUILTIN("\x0a") BUILTIN("\xff") BUILTIN("\x05"), CENSUS, 3,
         "unknown ids in the built-in namespace are ignored");
}

/* The longest namespace, then a frame. */
UNIT_CASE(control_longest_namespace) {
    char longest[6 + 255 + 1 + 22];
    memcpy(longest, UMAGIC "\x00\xff", 6);
    memset(longest + 6, 'n', 255);
    longest[261] = 0x05;
    memcpy(longest + 262, BUILTIN("\x05"), 22);
    uint64_t u;
    ok(same(feed_n(longest, sizeof longest, 1, &u), CENSUS, 1) && u == 1,
       "a 255-byte namespace is read whole and ignored");
}

/* While the callback runs, the namespace is available. */
UNIT_CASE(control_namespace_in_callback) {
    struct es_control_parser p;
    struct seen_ns seen = {.p = &p, .n = 0};
    es_control_init(&p);
    es_control_feed(&p, (const uint8_t *)BUILTIN("\x05"), 22, remember_ns, &seen);
    ok(seen.n == 1 && strcmp(seen.ns, "eventlog-socket") == 0,
       "the namespace is in the parser during the callback");
}

/* Megabytes of random junk with frames of both framings in it, fed in
 * random pieces, must yield exactly what the reference finds. */
UNIT_CASE(control_random_junk) {
    struct es_control_parser p;
    size_t big = 8u << 20;
    uint8_t *junk = malloc(big);
    uint8_t *want = malloc(big / 5 + 1);
    srand(12345);
    random_input(junk, big);
    uint64_t unknown = 0;
    size_t nwant = control_reference(junk, big, want, &unknown);
    struct control_got *all = calloc(1, sizeof *all);
    es_control_init(&p);
    size_t delivered = 0, agree = 1, pos = 0;
    for (size_t i = 0; i < big;) {
        size_t step = 1 + (size_t)rand() % 4096;
        if (step > big - i)
            step = big - i;
        all->n = 0;
        delivered += es_control_feed(&p, junk + i, step, control_collect, all);
        for (size_t k = 0; k < all->n && k < sizeof all->cmds; k++)
            agree &= pos < nwant && all->cmds[k] == want[pos++];
        i += step;
    }
    size_t kinds[7] = {0};
    for (size_t k = 0; k < nwant; k++)
        kinds[want[k] < 7 ? want[k] : 0]++;
    ok(delivered == nwant && agree && p.unknown == unknown && kinds[1] && kinds[2] && kinds[3] &&
           kinds[4] && kinds[5] && kinds[6],
       "8 MiB of junk in random pieces: %zu commands (%zu %zu %zu %zu %zu %zu of 1-6) and %llu "
       "unknown, reference %zu and %llu",
       delivered, kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], kinds[6],
       (unsigned long long)p.unknown, nwant, (unsigned long long)unknown);
    free(all);
    free(want);
    free(junk);
}

/* The commands' table (format/es_commands.h) is what the parser reads:
 * each row's byte after "GCTL", and its upstream id in the built-in
 * namespace, give that row's command, cut anywhere; the byte after the
 * last row and upstream ids outside the rows give nothing; a row's kind
 * of limit agrees with where it acts. */
UNIT_CASE(control_commands_table) {
    size_t n = es_commands_count();
    ok(n >= 8, "%zu commands (upstream's five and ours)", n);
    bool upstream_seen[256] = {false};
    char why[128];
    size_t plain = 0;
    uint8_t past_gctl = 0;
    for (size_t i = 0; i < n; i++) {
        const struct es_commands_row *r = es_commands_row(i);
        /* A row with an argument: its byte with the argument's lowest bit,
         * and with all of them. */
        uint8_t low = (uint8_t)(r->arg_mask & -r->arg_mask);
        uint8_t code = (uint8_t)(r->code | low), id = (uint8_t)(r->upstream_id | low);
        plain += r->arg_mask == 0;
        if (r->gctl > past_gctl)
            past_gctl = r->gctl;
        /* "GCTL", the row's byte, then its argument when it takes one. */
        const char gctl[] = {'G', 'C', 'T', 'L', (char)r->gctl, (char)low};
        char up[] = BUILTIN("?"), want[] = {(char)code};
        up[sizeof up - 2] = (char)id;
        ok(every_cut(gctl, sizeof gctl - (r->arg_mask == 0), want, 1, 0, why, sizeof why) == 0,
           "%s: GCTL 0x%02x (%s)", r->name, r->gctl, why);
        ok(every_cut(up, sizeof up - 1, want, 1, 0, why, sizeof why) == 0,
           "%s: upstream id %u (%s)", r->name, r->upstream_id, why);
        ok(es_commands_find(code) == r && es_commands_upstream(id) == r && !upstream_seen[id],
           "%s: found by its byte and by its upstream id, which no other row has", r->name);
        upstream_seen[id] = true;
        if (r->arg_mask != 0) {
            uint8_t all = (uint8_t)(r->code | r->arg_mask);
            const char none[] = {'G', 'C', 'T', 'L', (char)r->gctl, 0};
            const char outside[] = {'G', 'C', 'T', 'L', (char)r->gctl, (char)~r->arg_mask};
            ok(every_cut(none, sizeof none, "", 0, 1, why, sizeof why) == 0 &&
                   every_cut(outside, sizeof outside, "", 0, 1, why, sizeof why) == 0,
               "%s: GCTL 0x%02x with no class, or with a bit that is none: unknown (%s)", r->name,
               r->gctl, why);
            ok(es_commands_find(all) == r && es_commands_find(r->code) == NULL &&
                   es_control_upstream_command((const uint8_t *)ES_CONTROL_UPSTREAM_NAMESPACE,
                                               sizeof ES_CONTROL_UPSTREAM_NAMESPACE - 1,
                                               (uint8_t)(r->upstream_id | r->arg_mask)) == all,
               "%s: every argument's byte (0x%02x to 0x%02x), none without one", r->name, code,
               all);
        }
        ok((r->scope == ES_COMMANDS_PROGRAM) == (r->gate != ES_COMMANDS_GATE_NONE) &&
               (int)r->gate < ES_COMMANDS_GATES,
           "%s: %s, %s", r->name,
           r->scope == ES_COMMANDS_PROGRAM ? "acts on the program" : "on its connection",
           r->gate == ES_COMMANDS_GATE_NONE ? "never rate limited" : "rate limited");
    }
    const char past[] = {'G', 'C', 'T', 'L', (char)(past_gctl + 1)};
    char up_past[] = BUILTIN("?");
    up_past[sizeof up_past - 2] = (char)(plain + 1);
    ok(every_cut(past, sizeof past, "", 0, 1, why, sizeof why) == 0 &&
           every_cut(up_past, sizeof up_past - 1, "", 0, 1, why, sizeof why) == 0,
       "GCTL 0x%02x and upstream id %zu: no command, counted as unknown (%s)", past_gctl + 1,
       plain + 1, why);
    ok(es_commands_find(0) == NULL && es_commands_upstream(0) == NULL,
       "no row for 0 in either framing");
}

/* protocol.md's table of commands (section 2) lists each row: its byte,
 * its upstream id and what it acts on, and no other. */
UNIT_CASE(control_commands_in_protocol) {
    FILE *f = fopen("protocol.md", "r");
    ok(f != NULL, "protocol.md opens (the unit tests run in the repository)");
    if (f == NULL)
        return;
    char line[2048];
    size_t listed = 0;
    bool found[256] = {false};
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned code, id;
        int at = 0;
        /* "| `0x40`+classes | 64+classes | ..." for a row with an argument. */
        if (sscanf(line, "| `0x%2x`%*[^|]| %u%*[^|]| %n", &code, &id, &at) != 2 || at == 0)
            continue;
        listed++;
        const struct es_commands_row *r = NULL;
        for (size_t i = 0; i < es_commands_count(); i++)
            if (es_commands_row(i)->gctl == code)
                r = es_commands_row(i);
        const char *acts = r == NULL                         ? "?"
                           : r->scope == ES_COMMANDS_PROGRAM ? "the program"
                                                             : "this connection";
        ok(r != NULL && r->upstream_id == id && strncmp(line + at, acts, strlen(acts)) == 0,
           "protocol.md: 0x%02x, upstream id %u, acts on %s", code, id, acts);
        if (r != NULL)
            found[code] = true;
    }
    fclose(f);
    size_t rows_found = 0;
    for (size_t i = 0; i < es_commands_count(); i++)
        rows_found += found[es_commands_row(i)->gctl];
    ok(listed == es_commands_count() && rows_found == listed,
       "protocol.md lists the %zu commands, each once (%zu lines)", es_commands_count(), listed);
}
