/* SPDX-License-Identifier: BSD-3-Clause */
/* What clients write: their control frames (format/es_control.h, either
 * framing), read from each connection's socket and acted on at once, in
 * the order they came; everything else they write is passed over. A
 * client's frame goes down one way from here:
 *
 * - a built-in command that costs the program something (a heap census,
 *   heap or cost-centre profiling) to es_command.h, which asks the rate
 *   limit (es_gate.h) and calls into the RTS;
 * - one its connection keeps to itself: lossless delivery
 *   (es_lossless_request), cost notices (es_client_want_cost_notices), the
 *   window (es_fanout_window);
 * - a custom one (another namespace, upstream framing) to the registry
 *   (es_registry_dispatch), whose threads run the program's handlers.
 *
 * Nothing a client writes may slow the program (protocol.md, section 2):
 * past its read budget a client is not read until its second is over
 * (ES_READER_BUDGET), and a client that shuts down its writing side is
 * watched until its peer is gone (es_hangup.h). Loop thread only. */
#ifndef ES_READER_H
#define ES_READER_H

#include "es_command.h"
#include "delivery/es_client.h"
#include "delivery/es_fanout.h"
#include "policy/es_hangup.h"
#include "policy/es_lossless.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Bytes a client may write per second. Control frames are 5 bytes, and a
 * client may bury them in megabytes of other bytes (protocol.md, section
 * 2), but past this the client is not read until the second is over, so
 * that the kernel makes a client flooding the socket wait instead of the
 * loop thread reading and parsing for it: a client writing census requests
 * as fast as it could kept the loop thread busy on one of two cores and
 * made the program 3 times slower. A client whose read folded a request
 * into one still waiting is not read for a second either: a flood of one
 * command is then read one buffer (ES_READER_BUF) a second, not 4 MiB
 * (parsing those took 4-5 % of a core beside a program of two
 * capabilities). */
#define ES_READER_BUDGET ((size_t)4 << 20)

/* Where every client's reads land: each read is parsed before the next
 * one begins, so one buffer serves them all. */
#define ES_READER_BUF 65536

struct es_reader {
    uv_loop_t *loop;
    struct es_command *command;   /* built-in commands */
    struct es_fanout *fan;        /* the window; the clients paused */
    struct es_lossless *lossless; /* lossless requests */
    struct es_hangup *hangup;     /* clients that shut down their writing side */
    uv_timer_t resume;            /* resumes clients paused for their budget */
    bool open;
    uint8_t buf[ES_READER_BUF];
};

/* Create the resume timer on the loop (before it runs); the modules the
 * frames go to outlive the reader. */
void es_reader_open(struct es_reader *r, uv_loop_t *loop, struct es_command *command,
                    struct es_fanout *fan, struct es_lossless *lossless, struct es_hangup *hangup);
void es_reader_close(struct es_reader *r, uv_close_cb cb);

/* Start reading `c`, a client es_client_start has begun serving (a
 * closing one is left alone). Returns 0 or a libuv error (then the
 * client is closing). */
int es_reader_start(struct es_reader *r, struct es_client *c);

#endif
