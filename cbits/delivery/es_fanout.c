/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_fanout.h"

#include "es_notice.h"
#include "es_pool.h"

#include "base/es_log.h"
#include "format/es_notice_text.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void es_fanout_init(struct es_fanout *f, struct es_counters *counters, size_t max_buffer,
                    size_t defs_limit) {
    *f = (struct es_fanout){.counters = counters, .max_buffer = max_buffer};
    es_queue_init(&f->clients);
    es_store_init(&f->store, max_buffer);
    es_defs_init(&f->defs, defs_limit);
    es_window_init(&f->window, 0, 0);
}

void es_fanout_keep_window(struct es_fanout *f, size_t bytes, uint64_t max_age_ns) {
    assert(es_store_newest(&f->store) == NULL);
    es_window_init(&f->window, bytes, max_age_ns);
}

void es_fanout_destroy(struct es_fanout *f) {
    es_defs_destroy(&f->defs, &f->store);
    es_store_destroy(&f->store);
}

void es_fanout_append(struct es_fanout *f, struct es_chunk *c) {
    struct es_store *st = &f->store;
    if (es_store_ended(st)) {
        /* Nothing follows the stream's end marker: a notice made after it
         * (a wait or drop notice during the exit's linger) is let go. */
        es_pool_chunk_free(c);
        return;
    }
    uint64_t dropped, dropped_bytes, now_dropped, now_bytes;
    es_store_retain_dropped(st, &dropped, &dropped_bytes);
    struct es_chunk *kept =
        es_store_append(st, c, es_fanout_nclients(f) + es_window_holders(&f->window));
    es_defs_end_chunk(&f->defs, es_store_end_offset(st));
    if (kept != NULL && es_window_on(&f->window)) {
        es_window_add(&f->window, st, kept);
        atomic_store_explicit(&f->counters->window_bytes, es_window_bytes(&f->window),
                              memory_order_relaxed);
    }
    if (kept != NULL)
        es_fanout_each(f, cl, next) es_client_on_append(cl, kept);
    es_store_retain_dropped(st, &now_dropped, &now_bytes);
    if (now_dropped > dropped) {
        atomic_fetch_add(&f->counters->chunks_dropped, now_dropped - dropped);
        atomic_fetch_add(&f->counters->bytes_dropped, now_bytes - dropped_bytes);
        if (dropped == 0)
            es_log("no client yet and %.1f MiB retained: dropping the oldest chunks from now "
                   "on (the first client will miss them)",
                   (double)f->max_buffer / (1 << 20));
    }
}

static void tell_owed(struct es_fanout *f, struct es_client *c);

/* Keep only the header proper: GHC 9.0 may put a stale block marker before
 * it, which must never reach a client, and bytes after "datb" (none in
 * practice) are ordinary data. */
static void ingest_header(struct es_fanout *f, struct es_chunk *c) {
    /* The walker parsed it (es_walker.h) and handed over its parse. */
    if (c->header != NULL) {
        f->header = *c->header;
        free(c->header);
        c->header = NULL;
    } else {
        es_log_once(&f->bad_header_logged,
                    "the RTS wrote a header that does not parse; passing it on unchanged");
        f->header.skip = 0;
        f->header.len = c->len;
    }
    f->have_header = true;
    /* The parse lies within the chunk it was made from. */
    assert(f->header.skip <= c->len && f->header.len <= c->len - f->header.skip);
    size_t rest = c->len - f->header.skip - f->header.len;
    /* The header stays in its chunk, moved to the front (so that no
     * allocation can lose it); bytes after it get a chunk of their own. */
    struct es_chunk *tail = rest ? es_pool_chunk_new(c->data + c->len - rest, rest) : NULL;
    if (f->header.skip > 0)
        memmove(c->data, c->data + f->header.skip, f->header.len);
    c->len = f->header.len;
    es_store_set_header(&f->store, c);
    if (tail != NULL) {
        es_fanout_append(f, tail);
    } else if (rest > 0) {
        atomic_fetch_add(&f->counters->chunks_lost, 1);
        atomic_fetch_add(&f->counters->bytes_lost, rest);
        es_log("out of memory: lost the %zu bytes of eventlog that followed its header "
               "(clients get a drop notice)",
               rest);
        struct es_chunk *notice = es_notice_drop(&f->header, 1, rest, 0);
        if (notice != NULL)
            es_fanout_append(f, notice);
    }
    /* What clients were told, and window requests read, before the header
     * are told and answered now. */
    es_fanout_each(f, cl, next) {
        if (!es_client_is(cl, ES_CLIENT_CLOSING))
            tell_owed(f, cl);
        if (es_client_window_early(cl) && !es_client_is(cl, ES_CLIENT_CLOSING)) {
            es_client_set_window_early(cl, false);
            es_fanout_window(f, cl);
        }
    }
}

void es_fanout_ingest(struct es_fanout *f, struct es_chunk *c) {
    /* Straight from the walker: in no list yet. */
    assert(!es_queue_linked(&c->link));
    if (c->flags & ES_CHUNK_HEADER) {
        ingest_header(f, c);
        return;
    }
    if (!f->have_header) {
        /* Data before any header cannot be parsed by a client. */
        es_log_once(&f->orphan_logged, "dropping eventlog data that arrived before the header");
        es_pool_chunk_free(c);
        return;
    }
    int r = es_defs_take_chunk(&f->defs, c);
    if (r == -ENOSPC)
        es_log_once(&f->defs_full_logged,
                    "more than %.1f MiB of start-up definition events; clients joining later "
                    "will miss the rest",
                    (double)es_defs_limit(&f->defs) / (1 << 20));
    else if (r == -ENOMEM)
        es_log_once(&f->defs_oom_logged,
                    "out of memory keeping the program's start-up definition events for "
                    "clients that join later: those clients will miss some of them");
    es_fanout_append(f, c);
}

bool es_fanout_join(struct es_fanout *f, struct es_client *c) {
    assert(!es_client_is_any(c, ES_CLIENT_STARTED | ES_CLIENT_CLOSING)); /* a new client */
    struct es_store *st = &f->store;
    uint64_t id = atomic_fetch_add(&f->counters->clients_accepted, 1) + 1;
    /* Only the first client gets the stream from its start, and with it
     * what the POST_START hooks posted then, unless chunks were dropped
     * before it came. */
    uint64_t missed, missed_bytes;
    es_store_retain_dropped(st, &missed, &missed_bytes);
    bool from_start = es_store_retaining(st) && missed == 0;
    struct es_chunk *first = es_store_join(st);
    /* Definitions from chunks this client will not get (all of them for a
     * late joiner; none for a first client that gets everything). */
    struct es_chunk *defs =
        es_defs_block(&f->defs, st, first ? es_chunk_start(first) : es_store_end_offset(st));
    es_client_join(c, id, first, es_store_end_offset(st), defs);
    /* Once: a client joins the stream one time (es_client_join asserts it
     * too). */
    assert(!es_queue_linked(&c->fan_node));
    es_queue_insert_head(&f->clients, &c->fan_node);
    atomic_store(&f->counters->clients_connected, es_fanout_nclients(f));
    if (missed > 0)
        es_log_once(&f->retain_drop_logged,
                    "the first client missed %llu chunks (%.1f MiB) that arrived before it "
                    "connected: more than the buffer limit of %.1f MiB",
                    (unsigned long long)missed, (double)missed_bytes / (1 << 20),
                    (double)f->max_buffer / (1 << 20));
    return from_start;
}

void es_fanout_leave(struct es_fanout *f, struct es_client *c) {
    /* Only a client of this stream leaves it, and only once. */
    assert(es_queue_contains(&f->clients, &c->fan_node));
    es_queue_remove(&f->clients, &c->fan_node);
    atomic_store(&f->counters->clients_connected, es_fanout_nclients(f));
}

void es_fanout_tell(struct es_fanout *f, struct es_client *c, const char *text) {
    if (!es_fanout_have_header(f)) {
        /* Nothing may come before the header: told when it comes. */
        if (!es_client_owe(c, text))
            es_log_once(&f->owed_full_logged,
                        "a client's notices from before the eventlog header exceed %u bytes: "
                        "the rest are not told",
                        ES_CLIENT_OWED_MAX);
        return;
    }
    /* After the one it has not been sent yet, if any, in one block, up to
     * a bound. */
    const struct es_chunk *unsent = es_client_unsent_notice(c);
    if (unsent != NULL && unsent->len + strlen(text) > ES_CLIENT_NOTICE_MAX) {
        es_log_once(&f->notice_full_logged,
                    "client %llu has %zu bytes of notices unsent (it reads nothing): later ones "
                    "are not told to it",
                    (unsigned long long)es_client_id(c), unsent->len);
        return;
    }
    struct es_chunk *n = es_notice_append(&f->header, unsent, es_store_last_time(&f->store), text);
    if (n != NULL)
        es_client_notice(c, n);
    es_client_pump(c); /* now, even in a program that writes nothing meanwhile */
}

/* What clients were to be told before the header came, told now. */
static void tell_owed(struct es_fanout *f, struct es_client *c) {
    size_t len;
    char *owed = es_client_take_owed(c, &len);
    for (size_t at = 0; at < len; at += strlen(owed + at) + 1)
        es_fanout_tell(f, c, owed + at);
    free(owed);
}

/* A notice for `c` alone saying why it gets no window. */
static void refuse_window(struct es_fanout *f, struct es_client *c, const char *why) {
    char msg[300];
    es_notice_text_window_refused(msg, sizeof msg, why);
    es_fanout_tell(f, c, msg);
}

/* The definitions from before the window, ending with the window notice. */
static struct es_chunk *window_head(struct es_fanout *f, const struct es_chunk *first) {
    uint64_t from, to, bytes = 0, blocks = 0;
    es_window_span(&f->window, &f->store, &from, &to);
    for (const struct es_chunk *ch = first; ch != NULL; ch = es_store_next(&f->store, ch)) {
        bytes += ch->len;
        blocks += es_is_block(ch->data, ch->len);
    }
    char msg[200];
    es_notice_text_window(msg, sizeof msg, blocks, bytes, from, to);
    struct es_chunk *defs = es_defs_block(&f->defs, &f->store, es_chunk_start(first));
    struct es_chunk *head = es_notice_append(&f->header, defs, from, msg);
    es_store_release(&f->store, defs);
    if (head != NULL)
        es_store_adopt(&f->store, head);
    return head;
}

void es_fanout_window(struct es_fanout *f, struct es_client *c) {
    if (!f->have_header) {
        /* No notice can be made yet (nor a window sent): answered when the
         * header comes (ingest_header). */
        es_client_set_window_early(c, true);
        return;
    }
    if (!es_window_on(&f->window)) {
        refuse_window(f, c,
                      "this program keeps no window (start it with GHC_EVENTLOG_RETAIN=SIZE, "
                      "for example 64M)");
        return;
    }
    if (!es_client_is(c, ES_CLIENT_HELD)) {
        refuse_window(f, c,
                      "asked for after this connection's stream had begun: ask as the first "
                      "thing the connection sends");
        return;
    }
    struct es_chunk *first = es_window_first(&f->window);
    if (first == NULL) {
        refuse_window(f, c,
                      es_header_no_flush(&f->header)
                          ? ES_NOTICE_EMPTY_WORDS ": " ES_NOTICE_EMPTY_GHC90
                          : ES_NOTICE_EMPTY_WORDS ": the program has written nothing yet");
        return;
    }
    struct es_chunk *head = window_head(f, first);
    if (head == NULL) {
        refuse_window(f, c, "out of memory");
        return;
    }
    es_client_place(c, first, head);
    atomic_fetch_add(&f->counters->windows_sent, 1);
}

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

long long es_fanout_write_window(struct es_fanout *f, int fd) {
    struct es_chunk *h = es_store_header(&f->store);
    struct es_chunk *first = es_window_first(&f->window);
    if (h == NULL)
        return -ENODATA;
    long long total = 0;
    int r = write_all(fd, h->data, h->len);
    struct es_chunk *defs =
        first ? es_defs_block(&f->defs, &f->store, es_chunk_start(first)) : NULL;
    if (r == 0 && defs != NULL)
        r = write_all(fd, defs->data, defs->len);
    total = (long long)h->len + (defs ? (long long)defs->len : 0);
    es_store_release(&f->store, defs);
    bool ended = false;
    for (const struct es_chunk *ch = first; r == 0 && ch != NULL;
         ch = es_store_next(&f->store, ch)) {
        r = write_all(fd, ch->data, ch->len);
        total += (long long)ch->len;
        ended = (ch->flags & ES_CHUNK_END) != 0;
    }
    /* Without the program's own end marker (it never came), one of ours. */
    static const uint8_t end[2] = {0xff, 0xff};
    if (r == 0 && !ended) {
        r = write_all(fd, end, sizeof end);
        total += 2;
    }
    return r < 0 ? r : total;
}
