/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream as the clients get it: the header, the chunks in the store,
 * the definitions kept for late joiners, and the list of connected
 * clients. Chunks the walker hands over come in here (es_fanout_ingest)
 * and go out to every client; a client that connects is placed in the
 * stream here (es_fanout_join). What to do about clients that fall behind
 * is es_bound.h's. Loop thread only. */
#ifndef ES_FANOUT_H
#define ES_FANOUT_H

#include "es_client.h"
#include "base/es_counters.h"
#include "es_defs.h"
#include "format/es_header.h"
#include "es_store.h"
#include "es_window.h"
#include "base/es_queue.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct es_fanout {
    struct es_counters *counters;
    size_t max_buffer; /* bytes kept for the first client before it connects */
    struct es_store store;
    struct es_header header; /* handed over by the walker; es_fanout_header */
    bool have_header;
    struct es_defs defs;
    struct es_window window; /* the flight recorder's (off unless es_fanout_keep_window) */
    struct es_queue clients; /* struct es_client, through fan_node; newest first */
    /* Problems that are logged once. */
    bool bad_header_logged, orphan_logged, retain_drop_logged, defs_full_logged, defs_oom_logged;
    bool owed_full_logged, notice_full_logged;
};

void es_fanout_init(struct es_fanout *f, struct es_counters *counters, size_t max_buffer,
                    size_t defs_limit);
void es_fanout_destroy(struct es_fanout *f);

/* Keep a window of the stream's last `bytes` (0: none) and `max_age_ns`
 * of program time (0: no limit) from now on (es_window.h). Before the
 * first chunk. */
void es_fanout_keep_window(struct es_fanout *f, size_t bytes, uint64_t max_age_ns);

/* Whether a window is kept. */
static inline bool es_fanout_has_window(const struct es_fanout *f) {
    return es_window_on(&f->window);
}

/* The notice `text` for `c` alone, sent now (even in a program that writes
 * nothing meanwhile), stamped with the newest block's end, after any
 * notice for it still unsent (in one block, of at most
 * ES_CLIENT_NOTICE_MAX bytes: past it the notice is not told, logged
 * once). Before the program's header it is kept (es_client_owe) and told
 * once the header has come. */
void es_fanout_tell(struct es_fanout *f, struct es_client *c, const char *text);

/* A client asked for the window (EVENTLOG_SOCKET_CMD_WINDOW): a held one
 * (ES_CLIENT_HELD) is placed at the window's first chunk, after a block of
 * the definitions before it that ends with the window notice; otherwise
 * it gets a notice saying why not (no window kept, or asked after its
 * stream began). protocol.md, section 2. */
void es_fanout_window(struct es_fanout *f, struct es_client *c);

/* Write the header, the definitions before the window and the window to
 * `fd` (the dump at a failing exit, after the loop has ended). Returns the
 * bytes written, or -errno. */
long long es_fanout_write_window(struct es_fanout *f, int fd);

/* Take in a chunk from the walker: the header, or data for every client
 * (its definition events kept first). Data before any header is dropped.
 * What memory runs out for is logged here (and bytes after a header lost
 * for it are counted and noticed). */
void es_fanout_ingest(struct es_fanout *f, struct es_chunk *c);

/* Append a chunk the library made (a drop notice) for every client; once
 * the end marker has come, the chunk is freed instead. */
void es_fanout_append(struct es_fanout *f, struct es_chunk *c);

/* Place an accepted client in the stream: everything kept for a first
 * client, otherwise from the next chunk on, after a block of the
 * definitions it missed. False when the client misses the stream's start:
 * the caller then has the POST_START hooks run for it
 * (es_registry_client_connected). */
bool es_fanout_join(struct es_fanout *f, struct es_client *c);

/* Take a closed client out of the list. */
void es_fanout_leave(struct es_fanout *f, struct es_client *c);

/* The stream's header as the loop thread knows it: the walker's parse of
 * the newest header chunk ingested (es_walker.h). The address stays the
 * same for the fan-out's life; the sizes are those of a header that parsed
 * (all zero before one has). */
static inline const struct es_header *es_fanout_header(const struct es_fanout *f) {
    return &f->header;
}

/* Whether a header chunk has come (parsed or not). */
static inline bool es_fanout_have_header(const struct es_fanout *f) {
    return f->have_header;
}

/* The end time of the newest block (what a notice is stamped with). */
static inline uint64_t es_fanout_last_time(const struct es_fanout *f) {
    return es_store_last_time(&f->store);
}

/* Whether the stream's end marker has come: nothing may follow it. */
static inline bool es_fanout_ended(const struct es_fanout *f) {
    return es_store_ended(&f->store);
}

/* Clients in the list (joined, not yet left). */
static inline unsigned es_fanout_nclients(const struct es_fanout *f) {
    return (unsigned)es_queue_len(&f->clients);
}

/* Bytes held for clients: chunks, header, definitions. */
static inline size_t es_fanout_held(const struct es_fanout *f) {
    return es_store_held(&f->store) + es_defs_held(&f->defs);
}

/* What is held for clients beyond the window (the memory bound's measure,
 * es_bound.h): the window's chunks stay whatever happens to clients, so
 * skipping them would free nothing. */
static inline size_t es_fanout_held_for_clients(const struct es_fanout *f) {
    return es_fanout_held(f) - es_window_bytes(&f->window);
}

/* Whether no client has joined yet: chunks are kept for the first. */
static inline bool es_fanout_retaining(const struct es_fanout *f) {
    return es_store_retaining(&f->store);
}

/* The stream offset after the newest chunk. */
static inline uint64_t es_fanout_end_offset(const struct es_fanout *f) {
    return es_store_end_offset(&f->store);
}

/* The chunk store, for the clients' env (es_client.h); the definition
 * event types, for the walker's (es_walker.h). Set up by es_fanout_init. */
static inline struct es_store *es_fanout_store(struct es_fanout *f) {
    return &f->store;
}
static inline const bool *es_fanout_def_types(const struct es_fanout *f) {
    return es_defs_types(&f->defs);
}

/* The first client (the newest), and the one after `c`, which must be in
 * the list; NULL past the end. */
static inline struct es_client *es_fanout_first(struct es_fanout *f) {
    struct es_queue_node *n = es_queue_first(&f->clients);
    return n != NULL ? ES_QUEUE_DATA(n, struct es_client, fan_node) : NULL;
}
static inline struct es_client *es_fanout_next(struct es_fanout *f, struct es_client *c) {
    struct es_queue_node *n = es_queue_next(&f->clients, &c->fan_node);
    return n != NULL ? ES_QUEUE_DATA(n, struct es_client, fan_node) : NULL;
}

/* For each client, the next one read first, so that the body may close
 * the client (closing only unlinks it later, in a libuv callback, so the
 * next one is still in the list when its turn comes: es_queue_next
 * asserts it). */
#define es_fanout_each(f, c, nxt)                                                                  \
    for (struct es_client *c = es_fanout_first(f), *nxt = c ? es_fanout_next(f, c) : NULL;         \
         c != NULL; c = nxt, nxt = c ? es_fanout_next(f, c) : NULL)

#endif
