/* SPDX-License-Identifier: BSD-3-Clause */
/* Incremental parser for the control frames a client writes, in either of
 * two framings, mixed freely on one connection (protocol.md section 2):
 *
 *   GCTL:     "GCTL" command                      (5 bytes)
 *   upstream: F0 9E 97 8C, version 0x00, namespace length n (1-255),
 *             n namespace bytes, command id        (upstream eventlog-socket)
 *
 * Bytes outside frames are skipped; after any mismatch the parser
 * resynchronises on the next magic of either kind. The byte after a
 * complete GCTL magic, and the byte after an upstream frame's namespace,
 * are always taken as the command. A complete magic inside an upstream
 * frame's length byte and namespace abandons that frame and starts a new
 * one, so a wrong length byte cannot hide the frames that follow it.
 *
 * Thread ownership: a parser belongs to one connection and is used only by
 * the thread that reads it (the server's loop thread); it has no locks. */
#ifndef ES_CONTROL_H
#define ES_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Both magics are this long. */
#define ES_CONTROL_MAGIC     "GCTL"
#define ES_CONTROL_MAGIC_LEN 4

/* Our framing's frame for `command` (EVENTLOG_SOCKET_CMD_*): the magic,
 * then the command byte, as a client sends it (the command's `control`
 * subcommand, top, serve). */
static inline void es_control_frame(uint8_t out[ES_CONTROL_MAGIC_LEN + 1], uint8_t command) {
    for (int i = 0; i < ES_CONTROL_MAGIC_LEN; i++)
        out[i] = (uint8_t)ES_CONTROL_MAGIC[i];
    out[ES_CONTROL_MAGIC_LEN] = command;
}

/* The upstream framing: its magic (the UTF-8 encoding of U+1E5CC), the one
 * version this parser reads, and the namespace of the built-in commands. */
#define ES_CONTROL_UPSTREAM_MAGIC     "\xF0\x9E\x97\x8C"
#define ES_CONTROL_UPSTREAM_VERSION   0x00
#define ES_CONTROL_UPSTREAM_NAMESPACE "eventlog-socket"

/* An upstream frame whose namespace is not the built-in one: whether the
 * namespace and id are known (es_control_feed's `custom`). */
typedef bool (*es_control_custom_cb)(const uint8_t *ns, size_t ns_len, uint8_t id);

struct es_control_parser {
    /* Where in a frame the next byte goes (es_control.c's enum). */
    uint8_t state;
    /* A partly matched magic: which one (es_control.c's enum) and how many
     * of its bytes (0-3). Tracked while scanning and inside an upstream
     * frame's length byte and namespace. */
    uint8_t magic;
    uint8_t matched;
    /* The upstream frame being read: its namespace length, how many
     * namespace bytes have arrived, and the bytes. A frame es_control_next
     * returns points at ns[0..ns_len) for its namespace, until the parser
     * is fed again. */
    uint8_t ns_len;
    uint8_t ns_got;
    /* A GCTL frame whose command takes an argument: its byte. */
    uint8_t arg_of;
    uint8_t ns[255];
    /* Whole frames that were ignored: an unknown GCTL command byte, or an
     * upstream frame whose namespace or command id is not known (a custom
     * frame its reader found unregistered counts through
     * es_control_ignored). Junk (a wrong version byte, a zero length, a
     * frame cut by another magic) is skipped without being counted. */
    uint64_t unknown;
    /* For es_control_feed only: frames in other namespaces go here, when
     * set (after es_control_init), which says whether they are known. */
    es_control_custom_cb custom;
};

/* A known command, as EVENTLOG_SOCKET_CMD_*, whichever framing carried it
 * (es_control_feed's callback). */
typedef void (*es_control_cb)(uint8_t cmd, void *ctx);

void es_control_init(struct es_control_parser *p);

/* A complete frame, as es_control_next finds it. */
enum es_control_kind {
    ES_CONTROL_NONE,    /* the bytes ended before a frame did */
    ES_CONTROL_COMMAND, /* a built-in command: `cmd` */
    ES_CONTROL_CUSTOM,  /* not a built-in command: `ns`, `ns_len`, `id` (a
                         * registered custom command, or unknown) */
};
struct es_control_found {
    enum es_control_kind kind;
    uint8_t cmd;       /* EVENTLOG_SOCKET_CMD_* */
    const uint8_t *ns; /* in the parser: valid until it is fed again */
    size_t ns_len;
    uint8_t id;
};

/* Read buf[0..len) up to the end of the next complete frame that is a
 * built-in command or in another namespace, and say which (`*out`);
 * returns the bytes read: up to and including the frame's last byte, or
 * all of them (kind ES_CONTROL_NONE) when no frame ends in them. Unknown
 * built-in frames and junk are passed over (unknown ones counted). */
size_t es_control_next(struct es_control_parser *p, const uint8_t *buf, size_t len,
                       struct es_control_found *out);

/* A custom frame es_control_next returned was not a registered command:
 * count it as ignored. */
static inline void es_control_ignored(struct es_control_parser *p) {
    p->unknown++;
}

/* Every frame of buf[0..len): `cb` is called once per frame with a known
 * command, in order; a custom one goes to p->custom (unknown without it).
 * Returns the number of commands delivered (custom ones `custom` knew
 * included). For tests and tools that want all of them at once. */
size_t es_control_feed(struct es_control_parser *p, const uint8_t *buf, size_t len,
                       es_control_cb cb, void *ctx);

/* The command an upstream frame with namespace ns[0..ns_len) and command
 * `id` means (EVENTLOG_SOCKET_CMD_*), or 0 when it is not a built-in one:
 * in the namespace "eventlog-socket", the row with that upstream id
 * (es_commands.h). */
uint8_t es_control_upstream_command(const uint8_t *ns, size_t ns_len, uint8_t id);

#endif
