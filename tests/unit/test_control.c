/* The control-frame parser fed whole, split, overlapping and garbage input,
 * and checked against a naive reference scan on random data. */
#include "es_control.h"
#include "tap.h"

#include <string.h>

struct got {
    uint8_t cmds[4096];
    size_t n;
};

static void collect(uint8_t cmd, void *ctx) {
    struct got *g = ctx;
    if (g->n < sizeof g->cmds)
        g->cmds[g->n] = cmd;
    g->n++;
}

/* Feed `len` bytes in pieces of `step` bytes (0: all at once). */
static struct got feed(const char *buf, size_t len, size_t step) {
    struct es_control_parser p;
    struct got g = {.n = 0};
    es_control_init(&p);
    if (step == 0)
        step = len ? len : 1;
    for (size_t i = 0; i < len; i += step)
        es_control_feed(&p, (const uint8_t *)buf + i, len - i < step ? len - i : step, collect, &g);
    return g;
}

static int same(struct got g, const char *want, size_t n) {
    return g.n == n && memcmp(g.cmds, want, n) == 0;
}

/* Reference semantics: the magic anywhere, then the next byte is the
 * command; scanning continues after the command byte. */
static size_t reference(const uint8_t *buf, size_t len, uint8_t *out) {
    size_t n = 0, i = 0;
    while (i + 4 < len) {
        if (memcmp(buf + i, "GCTL", 4) == 0) {
            uint8_t c = buf[i + 4];
            if (c >= 1 && c <= 3)
                out[n++] = c;
            i += 5;
        } else {
            i++;
        }
    }
    return n;
}

int main(void) {
    ok(same(feed("GCTL\x01", 5, 0), "\x01", 1), "one whole frame");
    ok(same(feed("GCTL\x01GCTL\x02GCTL\x03", 15, 0), "\x01\x02\x03", 3), "three frames at once");
    ok(same(feed("GCTL\x01GCTL\x02GCTL\x03", 15, 1), "\x01\x02\x03", 3), "byte by byte");
    ok(same(feed("GCTL\x01GCTL\x02GCTL\x03", 15, 3), "\x01\x02\x03", 3), "split across reads");
    ok(same(feed("GCTGCTL\x03", 8, 0), "\x03", 1), "partial magic then a frame");
    ok(same(feed("GCTGCTL\x03", 8, 1), "\x03", 1), "partial magic then a frame, byte by byte");
    ok(same(feed("GGGCTL\x02", 7, 0), "\x02", 1), "repeated G then a frame");
    ok(same(feed("hello GCTL\x01 world", 17, 2), "\x01", 1), "frame inside garbage");
    ok(same(feed("GCTL\x07GCTL\x02", 10, 0), "\x02", 1), "unknown command ignored");
    ok(same(feed("GCTL\x00GCTL\x03", 10, 0), "\x03", 1), "zero command byte ignored");
    ok(same(feed("GCTLGCTL\x01", 9, 0), "", 0), "the byte after a magic is the command, even a G");
    ok(same(feed("GCTL", 4, 0), "", 0), "magic alone gives nothing");

    struct es_control_parser p;
    struct got g = {.n = 0};
    es_control_init(&p);
    es_control_feed(&p, (const uint8_t *)"GCTL\x09", 5, collect, &g);
    ok(p.unknown == 1 && g.n == 0, "unknown commands are counted");

    /* Megabytes of random garbage, fed in random pieces, must yield exactly
     * the frames a naive scan finds (normally none or a few). */
    size_t big = 8u << 20;
    uint8_t *junk = malloc(big);
    uint8_t *want = malloc(big / 5 + 1);
    srand(12345);
    for (size_t i = 0; i < big; i++)
        junk[i] = (uint8_t)(rand() % 8 == 0 ? "GCTL"[rand() % 4] : rand());
    size_t nwant = reference(junk, big, want);
    struct got *all = calloc(1, sizeof *all);
    es_control_init(&p);
    size_t delivered = 0;
    for (size_t i = 0; i < big;) {
        size_t step = 1 + (size_t)rand() % 4096;
        if (step > big - i)
            step = big - i;
        all->n = 0;
        delivered += es_control_feed(&p, junk + i, step, collect, all);
        i += step;
    }
    ok(delivered == nwant, "8 MiB of garbage in random pieces: %zu commands, reference %zu",
       delivered, nwant);
    free(all);
    free(want);
    free(junk);
    return tap_done();
}
