/* SPDX-License-Identifier: BSD-3-Clause */
/* The whole-block writer behind `eventlog-socket record`: it receives the
 * raw bytes of a stream together with the reader's event boundaries
 * (es_conn's callbacks) and writes out only the header and whole blocks,
 * holding back a block that has not fully arrived. So the file is always a
 * prefix of the stream that ends between blocks; at the end it gets an end
 * marker unless the stream's own arrived. On a regular file an end marker
 * is also kept after the last block while recording (and overwritten by the
 * next block), so that even a recorder killed outright leaves a file that
 * parses. When a write fails (a full disk), the file is cut back to its
 * last whole block and ends with an end marker (`salvaged`).
 *
 * It can leave out the library's cost notices (protocol.md 1.3), which
 * `serve` asks for, so that its recording stays the program's own stream.
 *
 * Until a file descriptor is given (the file's name may come from events
 * further on), everything is kept in memory. One writer per recording,
 * used by the loop thread only. */
#ifndef ES_BLOCKS_H
#define ES_BLOCKS_H

#include "base/es_bytes.h"
#include "format/es_events.h"
#include "format/es_notice_text.h"
#include "format/es_header.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The cut notice: when the stream ended without the program's end marker,
 * es_blocks_finish_cut ends the file with a block of its own holding one
 * message, "eventlog-socket: recording cut: WHY" (a USER_MSG, as the
 * library's notices, protocol.md 1.3; its words: es_notice_text.h), before the end marker it adds,
 * so that whoever reads the file later (heap, report) knows it was cut. */
/* The longest block a server sends (protocol.md 1.3): the library's
 * definitions block, 16 MiB of events and its marker (the RTS's own are
 * 2 MiB). Bytes of an unfinished block past this are not held: the
 * stream is refused as one no server sends (es_blocks_append). */
#define ES_BLOCKS_MAX_BLOCK (((uint64_t)16 << 20) + 24)
/* Cost notices waiting to be left out, at most (more are kept). */
#define ES_BLOCKS_SKIPS 16

struct es_blocks {
    int fd;               /* -1 until es_blocks_set_fd */
    bool seekable;        /* a regular file: keep a trailing end marker */
    struct es_bytes held; /* received bytes not yet written, from stream offset `base` */
    uint64_t base;        /* stream offset of held.data[0] (= bytes written so far) */
    uint64_t received;    /* stream offset after the last byte received */
    uint64_t header_len;  /* the header's length, 0 until it is known */
    uint64_t boundary;    /* bytes before this offset are the header and whole blocks */
    uint64_t block_end;   /* where the current block ends by its marker's size, 0: none */
    bool complete;        /* the stream's end marker is before `boundary` */
    bool finished;        /* es_blocks_finish has written the end */
    bool too_long;        /* an unfinished block grew past ES_BLOCKS_MAX_BLOCK */
    int error;            /* errno of a failed write, 0 */
    int64_t salvaged;     /* after a failed write: the file's length once cut back to its last
                           * whole block and an end marker (0: nothing whole), -1: not done */
    /* Leave the library's cost notices out (set after es_blocks_init):
     * the stream ranges of the ones seen and not yet passed, in order, and
     * the bytes left out before `base` (the file is that much shorter). */
    bool skip_cost_notices;
    uint64_t block_start; /* stream offset of the current block's marker */
    uint16_t block_cap;   /* and its capability */
    struct {
        uint64_t from, to;
    } skip[ES_BLOCKS_SKIPS];
    unsigned nskip;
    uint64_t skipped;
    uint64_t last_time; /* the latest event time seen, for the cut notice */
};

void es_blocks_init(struct es_blocks *b);
void es_blocks_destroy(struct es_blocks *b);

/* The reader's boundaries: the header's length, each event (with its stream
 * offset), and the end-of-data marker (the stream offset just after it). */
void es_blocks_header(struct es_blocks *b, uint64_t header_len);
void es_blocks_event(struct es_blocks *b, const struct es_event *ev, uint64_t offset);
void es_blocks_end_marker(struct es_blocks *b, uint64_t after);

/* The next received bytes. Writes what has become whole when a file is
 * set. Returns 0, -ENOMEM, -errno of a failed write, or -EMSGSIZE once an
 * unfinished block has grown past ES_BLOCKS_MAX_BLOCK (its bytes are let
 * go; es_blocks_finish_cut still ends the file after the last whole
 * block). */
int es_blocks_append(struct es_blocks *b, const uint8_t *data, size_t n);

/* Leave the stream's bytes [from, to) out of the file (whole blocks, not
 * yet written, after any range left out so far): `record --since` leaves
 * out the oldest blocks of the program's window. Returns 0, or -ENOSPC
 * when ES_BLOCKS_SKIPS ranges wait already. */
int es_blocks_skip(struct es_blocks *b, uint64_t from, uint64_t to);

/* Everything before stream offset `offset` is whole blocks (a writer that
 * cuts its own blocks: `record --trigger`'s files): write it. Returns 0
 * or -errno. */
int es_blocks_whole(struct es_blocks *b, uint64_t offset);

/* After -EMSGSIZE: what was refused and why, for people, into `out`. */
void es_blocks_too_long_why(const struct es_blocks *b, char *out, size_t size);

/* Whether `n` bytes that no whole block holds yet (an unfinished block,
 * from its marker on, or bytes after the last whole block that no marker
 * claims) are more than any server sends: the one bound of every reader
 * that keeps a block's bytes until it is whole (this writer, `watch`'s
 * ring, client/flight/ring.h), past which the stream is refused. */
static inline bool es_blocks_past_max(uint64_t n) {
    return n > ES_BLOCKS_MAX_BLOCK;
}

/* Why such a stream was refused, for people, into `out`, in the words
 * every such reader says it: the block at stream offset `at`, whose
 * marker claims `claims` bytes (said when past the bound), and what the
 * reader keeps (`keeps`: "the recording keeps the blocks before it"). */
void es_blocks_refusal_words(uint64_t at, uint64_t claims, const char *keeps, char *out,
                             size_t size);

/* Start writing to `fd` (everything whole so far goes out now). */
int es_blocks_set_fd(struct es_blocks *b, int fd);

/* The end: write what is whole, then an end marker unless the stream's own
 * is among it. Bytes of an unfinished block are dropped. Returns 0 or
 * -errno. */
int es_blocks_finish(struct es_blocks *b);
/* The same, with the cut notice (reason `why`) before the end marker it
 * adds, when the stream's own end marker did not arrive. `hdr`: the
 * stream's header (the notice needs USER_MSG declared variable-size and
 * BLOCK_MARKER declared, as GHC always does; else no notice). */
int es_blocks_finish_cut(struct es_blocks *b, const struct es_header *hdr, const char *why);

/* The file's length in whole blocks (after the header): what is written,
 * less the cost notices left out. An end marker follows it in the file
 * while recording, unless the stream's own is among it. */
static inline uint64_t es_blocks_file_len(const struct es_blocks *b) {
    return b->base - b->skipped;
}

/* The cut notice's time: `t` rather than the latest event time seen
 * (`record --snapshot` stops at the window's end, and the events it has
 * seen after it are not the file's). */
static inline void es_blocks_set_cut_time(struct es_blocks *b, uint64_t t) {
    b->last_time = t;
}

/* Bytes held in memory. */
static inline size_t es_blocks_held(const struct es_blocks *b) {
    return b->held.len;
}

#endif
