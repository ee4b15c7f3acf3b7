/* Incremental parser for control frames a client writes: the four magic
 * bytes "GCTL" followed by one command byte. Bytes outside frames are
 * skipped; after a mismatch the parser resynchronises on the next magic, so
 * "GCTGCTL\x03" still yields command 0x03. The byte after a complete magic is
 * always taken as the command byte. */
#ifndef ES_CONTROL_H
#define ES_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#define ES_CONTROL_MAGIC     "GCTL"
#define ES_CONTROL_MAGIC_LEN 4

struct es_control_parser {
    /* How many bytes of the magic have been matched (0..4); at 4 the next
     * byte is the command. */
    unsigned matched;
    /* Frames whose command byte is unknown; they are ignored. */
    uint64_t unknown;
};

typedef void (*es_control_cb)(uint8_t cmd, void *ctx);

void es_control_init(struct es_control_parser *p);

/* Feed received bytes; `cb` is called once per frame with a known command
 * byte (EVENTLOG_SOCKET_CMD_*), in order. Returns the number of commands
 * delivered. */
size_t es_control_feed(struct es_control_parser *p, const uint8_t *buf, size_t len,
                       es_control_cb cb, void *ctx);

#endif
