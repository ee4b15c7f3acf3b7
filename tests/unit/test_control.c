/* The control-frame parser fed whole, split, overlapping and garbage input,
 * and checked against a naive reference scan on random data. */
#include "control_ref.h"
#include "es_control.h"
#include "tap.h"

#include <string.h>

/* Feed `len` bytes in pieces of `step` bytes (0: all at once). */
static struct control_got feed(const char *buf, size_t len, size_t step) {
    struct es_control_parser p;
    struct control_got g = {.n = 0};
    es_control_init(&p);
    if (step == 0)
        step = len ? len : 1;
    for (size_t i = 0; i < len; i += step)
        es_control_feed(&p, (const uint8_t *)buf + i, len - i < step ? len - i : step,
                        control_collect, &g);
    return g;
}

static int same(struct control_got g, const char *want, size_t n) {
    return g.n == n && memcmp(g.cmds, want, n) == 0;
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
    struct control_got g = {.n = 0};
    es_control_init(&p);
    es_control_feed(&p, (const uint8_t *)"GCTL\x09", 5, control_collect, &g);
    ok(p.unknown == 1 && g.n == 0, "unknown commands are counted");

    /* Megabytes of random garbage with frames in it, fed in random pieces,
     * must yield exactly the frames a naive scan finds. */
    size_t big = 8u << 20;
    uint8_t *junk = malloc(big);
    uint8_t *want = malloc(big / 5 + 1);
    srand(12345);
    for (size_t i = 0; i < big;) {
        /* Whole frames now and then (commands 0-4: some unknown), in
         * bytes that are often pieces of the magic. */
        if (rand() % 64 == 0 && big - i >= 5) {
            memcpy(junk + i, "GCTL", 4);
            junk[i + 4] = (uint8_t)(rand() % 5);
            i += 5;
        } else {
            junk[i++] = (uint8_t)(rand() % 8 == 0 ? "GCTL"[rand() % 4] : rand());
        }
    }
    uint64_t unknown = 0;
    size_t nwant = control_reference(junk, big, want, &unknown);
    struct control_got *all = calloc(1, sizeof *all);
    es_control_init(&p);
    size_t delivered = 0;
    for (size_t i = 0; i < big;) {
        size_t step = 1 + (size_t)rand() % 4096;
        if (step > big - i)
            step = big - i;
        all->n = 0;
        delivered += es_control_feed(&p, junk + i, step, control_collect, all);
        i += step;
    }
    ok(delivered == nwant && p.unknown == unknown,
       "8 MiB of garbage in random pieces: %zu commands and %llu unknown, reference %zu and %llu",
       delivered, (unsigned long long)p.unknown, nwant, (unsigned long long)unknown);
    free(all);
    free(want);
    free(junk);
    return tap_done();
}
