/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the bytes a client writes, fed to the control-frame
 * parser in pieces as the socket delivers them, checked against the
 * reference reading of protocol.md's rules for both framings (GCTL and
 * upstream) over the whole input (tests/unit/library/control_ref.h): the pieces
 * must not change which commands are found, nor how many frames are
 * ignored. The settings parsers get the same bytes as a string, since they
 * read what a user typed.
 *
 * Input: one byte that says where to cut the rest into pieces, then the
 * bytes. Build and run with `make fuzz`. */
#include "../unit/library/control_ref.h"
#include "base/es_config.h"
#include "format/es_control.h"
#include "fuzz_check.h"

#include <stdlib.h>
#include <string.h>

static void settings(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    bool b;
    unsigned ms;
    size_t bytes;
    (void)es_config_parse_bool(s, &b);
    (void)es_config_parse_whole(s, ES_MAX_STALL_MS, &ms);
    (void)es_config_parse_size(s, &bytes);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    unsigned step = data[0] % 16 + 1;
    const uint8_t *buf = data + 1;
    size_t len = size - 1;
    settings(buf, len);

    static struct control_got got;
    got.n = 0;
    struct es_control_parser p;
    es_control_init(&p);
    size_t delivered = 0;
    /* Pieces of 1 to 16 bytes, varying, as reads return them. */
    for (size_t off = 0, i = 0; off < len; i++) {
        size_t n = (step + i * 7) % 16 + 1;
        if (n > len - off)
            n = len - off;
        delivered += es_control_feed(&p, buf + off, n, control_collect, &got);
        off += n;
    }
    uint8_t *want = malloc(len / 5 + 1);
    uint64_t unknown = 0;
    size_t nwant = control_reference(buf, len, want, &unknown);
    CHECK(delivered == got.n);
    CHECK(got.n == nwant && p.unknown == unknown);
    CHECK(memcmp(got.cmds, want, nwant < sizeof got.cmds ? nwant : sizeof got.cmds) == 0);
    free(want);
    return 0;
}
