/* SPDX-License-Identifier: BSD-3-Clause */
/* Ending a client's stream on an event boundary when the library closes
 * the connection itself: at exit (es_linger.h), for a slow or stuck client
 * (es_bound.h). A client's write in flight holds whole chunks (every chunk
 * is whole events: the header, a block, a notice), but the kernel takes
 * any prefix of it, so closing the socket at once can leave the client
 * with half an event, and then ghc-events rejects the whole file.
 *
 * es_cut_client works out how far the kernel has taken the write in
 * flight and which chunk that ends in; the write is cancelled (the handle
 * closed, the socket kept through a duplicate), and on a new handle on
 * that socket the client gets the rest of that one chunk, then, when the
 * socket has room for it at once, a cut notice ("eventlog-socket:
 * recording cut: WHY", the words `record` uses, so every tool of the
 * command says "cut") and the end-of-data marker. The ending follows the
 * client's reading, within ES_CUT_FINISH_MS; a client that stops reading
 * meanwhile, or reads too slowly to take the rest of its chunk within that
 * time (200 kB/s with 1 MiB left), is left with a partial event. Until
 * then the client stays in the list of clients (closing), so exit waits
 * for it.
 *
 * "The library closes a client" means exactly the calls of es_cut_client;
 * es_client_close (the peer went away, a refusal before anything was sent)
 * closes at once, and so does es_cut_client for a client that has stopped
 * reading: only such a client can be left with half an event. Loop thread
 * only. */
#ifndef ES_CUT_H
#define ES_CUT_H

#include <stdbool.h>

struct es_client;

/* How long an ending goes on: as long as the client keeps reading (the
 * rest of the chunk in flight is at most one RTS buffer, 2 MiB, or the
 * header or definitions block, behind what the socket already holds),
 * but it is given up once the client has read nothing for the while that
 * makes any client stalled (es_client_stall_ms: half the linger time, 1 s
 * by default), and after ES_CUT_FINISH_MS in any case. */
#define ES_CUT_FINISH_MS 5000

/* Close `c`, its stream ended on an event boundary; `why` goes into the
 * cut notice (copied). A client that is closing already is left alone;
 * one that has been handed its whole stream, or none of its header, or
 * that has stopped reading (es_client_stalled: it would not take the rest
 * of the chunk either, and waiting would keep that chunk's memory), is
 * closed at once. */
void es_cut_client(struct es_client *c, const char *why);

/* The client's closed_hook while it is being cut (es_client.h): whether
 * the cut goes on (the handle was reopened on the kept socket; the client
 * is not to be freed yet). False once the ending is over (its state is
 * then freed). */
bool es_cut_on_closed(struct es_client *c);

#endif
