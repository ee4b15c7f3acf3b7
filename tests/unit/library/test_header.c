/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
/* The header parser against real headers recorded from GHC (fixtures), and
 * against damaged ones. Argument: the fixture directory. */
#include "format/es_header.h"
#include "../unit.h"

#include <errno.h>
#include <string.h>

static void check_fixture(const char *path) {
    char expect[512];
    unit_expect_path(path, expect, sizeof expect);
    size_t len;
    unsigned char *buf = unit_read_file(path, &len);
    struct es_header *h = malloc(sizeof *h);

    ok(es_header_detect(buf, len), "%s: detected as a header", path);
    ok(es_header_parse(buf, len, h) == 0, "%s: parses", path);
    ok(h->skip == 0, "%s: nothing to skip", path);
    ok((long)h->ntypes == unit_expect(expect, "types"),
       "%s: %u event types, as many as ghc-events reads", path, h->ntypes);
    ok(memcmp(buf + h->len - 4, "datb", 4) == 0, "%s: header ends with datb", path);
    ok(es_be16(buf + h->len) == ES_EVENT_BLOCK_MARKER, "%s: a block marker follows the header",
       path);
    ok(h->size[ES_EVENT_BLOCK_MARKER] == 14, "%s: block marker payload is 14 bytes", path);
    ok(h->size[19] == ES_SIZE_VARIABLE && h->size[29] == ES_SIZE_VARIABLE,
       "%s: user message and RTS identifier are variable-size", path);
    ok(h->size[500] == ES_SIZE_UNDECLARED, "%s: an unused id stays undeclared", path);

    /* GHC 9.0 restarts put a stale block marker before the header. */
    unsigned char *stale = malloc(len + ES_BLOCK_MARKER_LEN);
    memset(stale, 0, ES_BLOCK_MARKER_LEN);
    stale[1] = ES_EVENT_BLOCK_MARKER;
    memcpy(stale + ES_BLOCK_MARKER_LEN, buf, len);
    struct es_header *h2 = malloc(sizeof *h2);
    ok(es_header_detect(stale, len + ES_BLOCK_MARKER_LEN), "%s: detected behind a stale marker",
       path);
    ok(es_header_parse(stale, len + ES_BLOCK_MARKER_LEN, h2) == 0 &&
           h2->skip == ES_BLOCK_MARKER_LEN && h2->len == h->len,
       "%s: stale marker skipped, same header", path);

    /* Every truncation of the header is rejected, never over-read (ASan). */
    size_t bad = 0;
    for (size_t n = 0; n < h->len; n++) {
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, buf, n);
        if (es_header_parse(copy, n, h2) != -EINVAL || h2->len != 0)
            bad++;
        free(copy);
    }
    ok(bad == 0, "%s: all %zu truncations rejected", path, h->len);

    /* A damaged end-of-type marker is rejected. */
    unsigned char *broken = malloc(len);
    memcpy(broken, buf, len);
    unsigned char *ete = memmem(broken, h->len, "ete\0", 4);
    ete[0] = 'x';
    ok(es_header_parse(broken, len, h2) == -EINVAL, "%s: damaged ete marker rejected", path);

    free(broken);
    free(stale);
    free(h2);
    free(h);
    free(buf);
}

UNIT_FIXTURE_CASE(header_recorded, path) {
    check_fixture(path);
}

UNIT_CASE(header_not_a_header) {
    struct es_header *h = malloc(sizeof *h);
    ok(!es_header_detect((const uint8_t *)"hdr", 3), "three bytes are not a header");
    ok(!es_header_detect((const uint8_t *)"\0\x12xxxxxxxx", 10), "a short block is not a header");
    ok(es_header_parse((const uint8_t *)"hdrbhetbhetehdredatb", 20, h) == -EINVAL,
       "a header without a block marker type is rejected");
    free(h);
}
