/* SPDX-License-Identifier: BSD-3-Clause */
/* For the tests of the control-frame parser (tests/unit/library/test_control.c and
 * tests/fuzz/fuzz_control.c): what they collect from it, and protocol.md's
 * rules read literally over the whole input at once, to check it against. */
#ifndef CONTROL_REF_H
#define CONTROL_REF_H

#include <stdbool.h>
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

#define REF_GCTL     "GCTL"
#define REF_UPSTREAM "\xF0\x9E\x97\x8C"

/* 1 if a GCTL magic starts at buf[i], 2 if an upstream magic does, else 0. */
static inline int control_ref_magic(const uint8_t *buf, size_t len, size_t i) {
    if (len < 4 || i > len - 4)
        return 0;
    if (memcmp(buf + i, REF_GCTL, 4) == 0)
        return 1;
    if (memcmp(buf + i, REF_UPSTREAM, 4) == 0)
        return 2;
    return 0;
}

/* Whether `b` is one of the event classes' switches: 0x40 or 0x80 with
 * one or more of the six class bits. */
static inline bool control_ref_switch(uint8_t b) {
    return (b & 0xc0) != 0 && (b & 0xc0) != 0xc0 && (b & 0x3f) != 0;
}

/* protocol.md section 2, literally:
 * - a GCTL magic and the byte after it are a frame; commands 1 to 9 are
 *   known; 0x0a and 0x0b take the byte after them too, whatever it is, and
 *   are known with one of 1 to 0x3f there, as 0x40 or 0x80 with its bits;
 * - an upstream magic, version 0, a length n > 0, n namespace bytes and an
 *   id are a frame; in namespace "eventlog-socket" ids 1 to 9 are known
 *   and mean 4, 5, 1, 2, 3, 6, 7, 8, 9, and ids 0x41 to 0x7f and 0x81 to
 *   0xbf mean themselves; a wrong version or a zero length ends the
 *   attempt and the search goes on at that byte;
 * - the first magic that lies wholly within an upstream frame's length byte
 *   and namespace ends the attempt, and the search goes on at that magic;
 * - after a frame the search goes on after its last byte.
 * Known commands go to `out` (room for len / 5 + 1 of them) and their
 * number is returned; whole frames with unknown commands are counted in
 * `*unknown` unless it is NULL. */
static inline size_t control_reference(const uint8_t *buf, size_t len, uint8_t *out,
                                       uint64_t *unknown) {
    static const uint8_t upstream_meaning[10] = {0, 4, 5, 1, 2, 3, 6, 7, 8, 9};
    size_t n = 0, i = 0;
    while (i < len) {
        int kind = control_ref_magic(buf, len, i);
        size_t j = i + 4; /* the byte after the magic */
        uint8_t cmd;
        if (kind == 0) {
            i++;
            continue;
        }
        if (j >= len)
            break;
        if (kind == 1) {
            cmd = buf[j] >= 1 && buf[j] <= 9 ? buf[j] : 0;
            i = j + 1;
            if (buf[j] == 0x0a || buf[j] == 0x0b) {
                if (j + 1 >= len)
                    break;
                uint8_t a = buf[j + 1];
                cmd = a >= 1 && a <= 0x3f ? (uint8_t)((buf[j] == 0x0a ? 0x40 : 0x80) | a) : 0;
                i = j + 2;
            }
        } else {
            if (buf[j] != 0) {
                i = j; /* wrong version */
                continue;
            }
            if (j + 1 >= len)
                break;
            size_t ns_len = buf[j + 1];
            if (ns_len == 0) {
                i = j + 1;
                continue;
            }
            size_t id_at = j + 2 + ns_len;
            size_t k = j + 1;
            while (k + 4 <= id_at && control_ref_magic(buf, len, k) == 0)
                k++;
            if (k + 4 <= id_at && k + 4 <= len) {
                i = k; /* a magic inside the frame */
                continue;
            }
            if (id_at >= len)
                break;
            uint8_t id = buf[id_at];
            bool ours = ns_len == 15 && memcmp(buf + j + 2, "eventlog-socket", 15) == 0;
            cmd = !ours                    ? 0
                  : id >= 1 && id <= 9     ? upstream_meaning[id]
                  : control_ref_switch(id) ? id
                                           : 0;
            i = id_at + 1;
        }
        if (cmd != 0)
            out[n++] = cmd;
        else if (unknown != NULL)
            (*unknown)++;
    }
    return n;
}

#endif
