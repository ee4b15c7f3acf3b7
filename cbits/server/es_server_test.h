/* SPDX-License-Identifier: BSD-3-Clause */
/* What only tests use of the server (tests/unit): a loop thread made to
 * look stuck, and a look inside. The library itself never calls these. */
#ifndef ES_SERVER_TEST_H
#define ES_SERVER_TEST_H

#include "es_server.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Make the loop thread sleep `ms` at its next wake-up, as if it were
 * stuck, while RTS threads go on writing; whether it sleeps in it now; end
 * the sleep early. Any thread. */
void es_server_debug_block(struct es_server *s, unsigned ms);
bool es_server_debug_blocked(struct es_server *s);
void es_server_debug_release(struct es_server *s);

/* Whether a program thread waits for a lossless client now. */
bool es_server_debug_waiting(struct es_server *s);

/* Bytes handed over and not yet taken in, chunks and bytes the hand-off
 * dropped, and the library's two threads. Any thread. */
size_t es_server_in_flight(struct es_server *s);
void es_server_handoff_dropped(struct es_server *s, uint64_t *chunks, uint64_t *bytes);
void es_server_threads(struct es_server *s, uv_thread_t *walker, uv_thread_t *loop);

#endif
