/* libFuzzer target: the bytes a client writes, fed to the control-frame
 * parser in pieces as the socket delivers them, checked against a plain
 * search for "GCTL" + command byte over the whole input: the pieces must
 * not change which commands are found. The settings parsers get the same
 * bytes as a string, since they read what a user typed.
 *
 * Input: one byte that says where to cut the rest into pieces, then the
 * bytes. Build and run with `make fuzz`. */
#include "es_config.h"
#include "es_control.h"
#include "fuzz_check.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
    uint8_t cmds[4096];
    size_t n;
};

static void on_command(uint8_t cmd, void *ctx) {
    struct seen *s = ctx;
    if (s->n < sizeof s->cmds)
        s->cmds[s->n] = cmd;
    s->n++;
}

static bool known(uint8_t cmd) {
    return cmd == EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS;
}

/* protocol.md's rule, read literally: every "GCTL" followed by a byte is a
 * frame, and the search goes on after that byte. */
static void reference(const uint8_t *buf, size_t len, struct seen *out, uint64_t *unknown) {
    out->n = 0;
    *unknown = 0;
    for (size_t i = 0; i + ES_CONTROL_MAGIC_LEN < len;) {
        if (memcmp(buf + i, ES_CONTROL_MAGIC, ES_CONTROL_MAGIC_LEN) != 0) {
            i++;
            continue;
        }
        uint8_t cmd = buf[i + ES_CONTROL_MAGIC_LEN];
        if (known(cmd))
            on_command(cmd, out);
        else
            (*unknown)++;
        i += ES_CONTROL_MAGIC_LEN + 1;
    }
}

static void settings(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    bool b;
    int ms;
    size_t bytes;
    (void)es_config_parse_bool(s, &b);
    (void)es_config_parse_ms(s, &ms);
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

    static struct seen got, want;
    got.n = 0;
    struct es_control_parser p;
    es_control_init(&p);
    size_t delivered = 0;
    /* Pieces of 1 to 16 bytes, varying, as reads return them. */
    for (size_t off = 0, i = 0; off < len; i++) {
        size_t n = (step + i * 7) % 16 + 1;
        if (n > len - off)
            n = len - off;
        delivered += es_control_feed(&p, buf + off, n, on_command, &got);
        off += n;
    }
    uint64_t unknown;
    reference(buf, len, &want, &unknown);
    CHECK(delivered == got.n);
    CHECK(got.n == want.n && p.unknown == unknown);
    size_t kept = want.n < sizeof want.cmds ? want.n : sizeof want.cmds;
    CHECK(memcmp(got.cmds, want.cmds, kept) == 0);
    return 0;
}
