/* The shared chunk store: retention before the first client, joining,
 * reference counting, and that memory comes back. */
#include "es_chunk.h"
#include "tap.h"

#include <string.h>

static struct es_chunk *chunk_of(size_t len, char fill) {
    char *buf = malloc(len);
    memset(buf, fill, len);
    struct es_chunk *c = es_chunk_new(buf, len);
    free(buf);
    return c;
}

/* Move a client's cursor to the tail, as sending everything does. */
static void send_all(struct es_store *s, struct es_chunk **cursor) {
    struct es_chunk *old = *cursor;
    *cursor = es_store_ref(s->tail);
    es_store_unref(s, old);
}

static size_t count_after(const struct es_chunk *c) {
    size_t n = 0;
    for (c = c->next; c; c = c->next)
        n++;
    return n;
}

int main(void) {
    struct es_store s;
    ok(es_store_init(&s, 1000) == 0, "store initialised");
    es_store_set_header(&s, chunk_of(50, 'h'));
    ok(s.bytes_held == 50, "header counted");

    /* Before any client: everything within the limit is retained. */
    for (int i = 0; i < 5; i++)
        es_store_append(&s, chunk_of(100, (char)('a' + i)));
    ok(s.bytes_held == 550 && s.retain_dropped_chunks == 0, "500 bytes retained, none dropped");

    /* Past the limit, the oldest go first. */
    for (int i = 0; i < 10; i++)
        es_store_append(&s, chunk_of(100, (char)('f' + i)));
    ok(s.retain_dropped_chunks == 5 && s.retain_dropped_bytes == 500,
       "5 oldest chunks dropped past the limit (got %llu)",
       (unsigned long long)s.retain_dropped_chunks);
    ok(es_store_behind(&s, s.retained) == 1000, "exactly the limit is retained for the client");
    ok(s.retained->next->data[0] == 'f', "the oldest kept chunk is the 6th");

    /* The first client gets the retained chunks; a second only new ones. */
    struct es_chunk *first = es_store_join(&s);
    ok(s.retained == NULL, "retention ends with the first client");
    ok(count_after(first) == 10, "first client has 10 chunks to send");
    struct es_chunk *second = es_store_join(&s);
    ok(count_after(second) == 0, "second client starts at the tail");

    es_store_append(&s, chunk_of(100, 'x'));
    ok(count_after(first) == 11 && count_after(second) == 1, "new chunk reaches both clients");

    /* Once the first client sends everything, memory goes back to the
     * newest chunk and the header. */
    send_all(&s, &first);
    ok(s.bytes_held == 50 + 100 + 100, "sent chunks freed (%zu bytes held)", s.bytes_held);
    ok(s.peak_bytes >= 1150, "peak remembered (%zu)", s.peak_bytes);

    /* A chunk held by a slow client survives until it has been sent. */
    es_store_append(&s, chunk_of(100, 'y'));
    send_all(&s, &first);
    ok(second->next != NULL && second->next->data[0] == 'x', "slow client still has its chunk");
    send_all(&s, &second);
    ok(s.bytes_held == 50 + 100, "all but the tail freed after both sent");

    /* No clients, no retention: only the tail stays. */
    es_store_unref(&s, first);
    es_store_unref(&s, second);
    for (int i = 0; i < 100; i++)
        es_store_append(&s, chunk_of(1000, 'z'));
    ok(s.bytes_held == 50 + 1000, "without clients only the newest chunk is held");

    /* A long chain freed at once does not recurse (ASan would catch a
     * stack overflow with a million chunks). */
    struct es_chunk *slow = es_store_join(&s);
    for (int i = 0; i < 1000000; i++)
        es_store_append(&s, chunk_of(1, 'c'));
    es_store_unref(&s, slow);
    ok(s.bytes_held == 50 + 1, "a million-chunk chain freed iteratively");

    es_store_destroy(&s);
    ok(s.bytes_held == 0, "destroy releases everything");
    return tap_done();
}
