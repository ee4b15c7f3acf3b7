/* SPDX-License-Identifier: BSD-3-Clause */
/* Notices: blocks the server synthesises into the stream, so that a client
 * sees in its own stream what the library did (protocol.md, 1.3): where
 * chunks were skipped (the drop notice), what lossless clients cost the
 * program (the wait notice), why lossless delivery was refused or ended
 * for one client (es_lossless.h), and, for clients that ask, what
 * streaming costs it in CPU time (the cost notice). Safe on any thread; the loop thread is the
 * one that sends them. */
#ifndef ES_NOTICE_H
#define ES_NOTICE_H

#include "es_chunk.h"
#include "format/es_header.h"

#include <stdint.h>

/* A block of its own (global buffer) holding one USER_MSG event, "eventlog-
 * socket: dropped N chunks (X MiB)", stamped `time` (the end of the gap),
 * with one reference for the caller. NULL when out of memory or when the
 * header does not declare USER_MSG as variable-size (GHC always does). */
struct es_chunk *es_notice_drop(const struct es_header *hdr, uint64_t chunks, uint64_t bytes,
                                uint64_t time);

/* The wait notice: "eventlog-socket: the program waited X ms (N times)
 * for lossless clients in the last S s", stamped `time`. */
struct es_chunk *es_notice_wait(const struct es_header *hdr, uint64_t time, uint64_t waits,
                                uint64_t wait_ns, uint64_t period_ms);

/* A notice holding `text` (at most 65535 bytes), stamped `time`. */
struct es_chunk *es_notice_message(const struct es_header *hdr, uint64_t time, const char *text);

/* A new block (global buffer, one reference for the caller): the events
 * of `block` (a block, or NULL for none) followed by one USER_MSG holding
 * `text`, stamped `time`; the block's start and end cover both. What a
 * client that asked for the window gets: its definitions block, and the
 * window notice at its end (es_fanout_window). NULL when out of memory or
 * when USER_MSG is not variable-size. */
struct es_chunk *es_notice_append(const struct es_header *hdr, const struct es_chunk *block,
                                  uint64_t time, const char *text);

/* An empty block (its marker alone, global buffer), stamped `time`: what
 * a TCP client that shut down its writing side is sent to learn whether
 * it is still there (es_client_check_peer; protocol.md 1.3). */
struct es_chunk *es_notice_empty(uint64_t time);

/* The end of a stream the library cuts short (es_cut.h): the cut notice
 * "eventlog-socket: recording cut: WHY" in a block stamped `time`, then
 * the end-of-data marker, in one chunk. */
struct es_chunk *es_notice_cut(const struct es_header *hdr, uint64_t time, const char *why);

/* What streaming has cost the program so far: CPU nanoseconds by thread
 * role (eventlog_socket_stats()'s cpu_ns_*) and bytes sent to all clients.
 * The cost notice carries the difference between two of these. */
struct es_cost {
    uint64_t writer_ns, walker_ns, loop_ns;
    uint64_t bytes_sent;
};

/* The cost notice: "eventlog-socket: streaming cost X ms of CPU in the
 * last S s (RTS threads W, walker K, loop L), M MiB sent", for the cost
 * `d` over `period_ms`, stamped `time`. */
struct es_chunk *es_notice_cost(const struct es_header *hdr, uint64_t time, const struct es_cost *d,
                                uint64_t period_ms);

#endif
