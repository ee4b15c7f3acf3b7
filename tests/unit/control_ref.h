/* For the tests of the control-frame parser (tests/unit/test_control.c and
 * tests/fuzz/fuzz_control.c): what they collect from it, and protocol.md's
 * rule read literally, to check it against. */
#ifndef CONTROL_REF_H
#define CONTROL_REF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The commands the parser delivered, in order (the first 4096 of them). */
struct control_got {
    uint8_t cmds[4096];
    size_t n;
};

/* An es_control_cb that appends to a struct control_got. */
static inline void control_collect(uint8_t cmd, void *ctx) {
    struct control_got *g = ctx;
    if (g->n < sizeof g->cmds)
        g->cmds[g->n] = cmd;
    g->n++;
}

/* Every "GCTL" followed by a byte is a frame, and the search goes on after
 * that byte. The known commands (1 to 3, EVENTLOG_SOCKET_CMD_*) go to `out`
 * (room for len / 5 + 1 of them), and their number is returned; unknown
 * ones are counted in `*unknown` unless it is NULL. */
static inline size_t control_reference(const uint8_t *buf, size_t len, uint8_t *out,
                                       uint64_t *unknown) {
    size_t n = 0, i = 0;
    while (i + 4 < len) {
        if (memcmp(buf + i, "GCTL", 4) == 0) {
            uint8_t c = buf[i + 4];
            if (c >= 1 && c <= 3)
                out[n++] = c;
            else if (unknown != NULL)
                (*unknown)++;
            i += 5;
        } else {
            i++;
        }
    }
    return n;
}

#endif
