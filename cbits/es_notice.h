/* The drop notice: a block the server synthesises where chunks were
 * skipped, so that a client sees the gap in its own stream (protocol.md,
 * 1.3). Safe on any thread; the loop thread is the one that sends them. */
#ifndef ES_NOTICE_H
#define ES_NOTICE_H

#include "es_chunk.h"
#include "es_header.h"

#include <stdint.h>

/* A block of its own (global buffer) holding one USER_MSG event, "eventlog-
 * socket: dropped N chunks (X MiB)", stamped `time` (the end of the gap),
 * with one reference for the caller. NULL when out of memory or when the
 * header does not declare USER_MSG as variable-size (GHC always does). */
struct es_chunk *es_notice_new(const struct es_header *hdr, uint64_t chunks, uint64_t bytes,
                               uint64_t time);

#endif
