/* SPDX-License-Identifier: BSD-3-Clause */
/* The flight recorder's window without GHC: its bookkeeping on the chunk
 * store (size, age, the newest always kept, the first client's retention
 * beside it, memory given back), then a real server fed blocks as the RTS
 * would: the window kept with nobody connected, a client that asks gets
 * header, definitions and the window notice, the window's blocks in order
 * and the live stream; one that does not ask, asks late or asks a program
 * without a window gets what the protocol says; the dump's file. Runs
 * under ASan/UBSan and TSan. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "delivery/es_pool.h"
#include "delivery/es_store.h"
#include "delivery/es_window.h"
#include "format/es_notice_text.h"
#include "format/es_stream.h"
#include "server/es_dump.h"
#include "server/es_server.h"
#include "server_util.h"
#include "../unit.h"

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sockios.h>

static struct es_chunk *chunk_at(size_t len, uint64_t time) {
    size_t n;
    unsigned char *b = make_block(1, len > 36 ? len - 36 : 0, time, &n);
    struct es_chunk *c = es_pool_chunk_new(b, n);
    free(b);
    return c;
}

/* Append as the fan-out does: counted for the window, then taken by it. */
static struct es_chunk *append(struct es_store *st, struct es_window *w, struct es_chunk *c) {
    struct es_chunk *kept = es_store_append(st, c, es_window_holders(w));
    if (kept != NULL && es_window_on(w))
        es_window_add(w, st, kept);
    return kept;
}

/* The chunks in the store's list, walked oldest to newest; (size_t)-1
 * when the walk disagrees with the list's count. */
static size_t list_length(const struct es_store *s) {
    size_t n = 0;
    for (const struct es_chunk *c = es_store_oldest(s); c; c = es_store_next(s, c))
        n++;
    return n == es_store_length(s) ? n : (size_t)-1;
}

UNIT_CASE(window_size) {
    struct es_store st;
    struct es_window w;
    es_store_init(&st, 1 << 20);
    es_store_join(&st); /* a client came and went: nothing retained for one */
    es_window_init(&w, 10000, 0);
    for (int i = 0; i < 30; i++)
        append(&st, &w, chunk_at(1000, (uint64_t)i * 1000));
    ok(es_window_bytes(&w) >= 10000 && es_window_bytes(&w) < 11000,
       "30 chunks of 1000 bytes: the window holds the last 10000 bytes, and less than a chunk "
       "more (%zu)",
       es_window_bytes(&w));
    ok(st.bytes_held == es_window_bytes(&w) && list_length(&st) == es_window_chunks(&w),
       "the older chunks were freed: the store holds the window only (%zu bytes)", st.bytes_held);
    ok(es_block_time(es_window_first(&w)->data) == 20000 &&
           es_window_last(&w) == es_store_newest(&st),
       "the window is the newest chunks, oldest first");
    append(&st, &w, chunk_at(50000, 99000));
    ok(es_window_chunks(&w) == 1 && es_window_first(&w) == es_store_newest(&st),
       "a chunk larger than the window stays alone: the newest is always kept");
    uint64_t from, to;
    es_window_span(&w, &st, &from, &to);
    ok(from == 99000 && to == 99001, "its span is its block's");
    es_window_clear(&w, &st);
    ok(st.bytes_held == 0 && es_store_oldest(&st) == NULL,
       "clearing the window gives every byte back");
    es_store_destroy(&st);
}

UNIT_CASE(window_age) {
    struct es_store st;
    struct es_window w;
    es_store_init(&st, 1 << 20);
    es_store_join(&st);
    es_window_init(&w, 1 << 20, 1000000000); /* one second */
    for (int i = 0; i < 50; i++)
        append(&st, &w, chunk_at(100, (uint64_t)i * 100000000)); /* 0.1 s apart */
    uint64_t from, to;
    es_window_span(&w, &st, &from, &to);
    ok(to - from <= 1000000001 && to - from >= 900000000,
       "blocks 0.1 s apart, one second kept: %.2f s from first start to last end",
       (double)(to - from) / 1e9);
    ok(es_window_chunks(&w) == 11, "11 blocks end within the last second (%llu)",
       (unsigned long long)es_window_chunks(&w));
    /* A block of another capability that arrives late, with older events,
     * is kept as it came (the window is in arrival order). */
    append(&st, &w, chunk_at(100, 4500000000u));
    ok(es_store_next(&st, es_window_last(&w)) == NULL && es_window_chunks(&w) == 12,
       "a late block with older times is kept in arrival order");
    es_store_destroy(&st);
}

/* Before any client the store keeps chunks for the first one; the window
 * keeps its own. Both limits hold, and the first client gets the store's
 * chunks only (it need not be the window's). */
UNIT_CASE(window_with_retention) {
    struct es_store st;
    struct es_window w;
    es_store_init(&st, 5000);
    es_window_init(&w, 20000, 0);
    for (int i = 0; i < 40; i++)
        append(&st, &w, chunk_at(1000, (uint64_t)i));
    ok(st.kept_bytes <= 5000 && es_window_bytes(&w) >= 20000 && es_window_bytes(&w) < 21000,
       "retained for the first client %zu bytes, window %zu bytes", st.kept_bytes,
       es_window_bytes(&w));
    ok(st.bytes_held == es_window_bytes(&w), "the two share their chunks: %zu bytes held",
       st.bytes_held);
    ok(st.retain_dropped_chunks == 35, "35 chunks dropped for the first client (%llu)",
       (unsigned long long)st.retain_dropped_chunks);
    struct es_chunk *first = es_store_join(&st);
    ok(first != NULL && es_block_time(first->data) == 35,
       "the first client starts at the oldest chunk retained for it, not the window's");
    es_store_release_range(&st, first, es_store_newest(&st)); /* it sent everything */
    ok(st.bytes_held == es_window_bytes(&w), "the window's chunks stay after it sent them");
    es_store_destroy(&st);
}

/* ---- a real server ------------------------------------------------------ */

static char sock_path[4096];
static unsigned char *hdr_bytes;
static size_t hdr_len;

/* What every server case needs: a socket path in the case's directory and
 * the recorded header the server sends first. */
static void server_setup(void) {
    snprintf(sock_path, sizeof sock_path, "%s/w.sock", unit_tmpdir());
    size_t len;
    hdr_bytes = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    struct es_header h;
    es_header_parse(hdr_bytes, len, &h);
    hdr_len = h.len;
}

static void on_command(uint8_t cmd, void *ctx) {
    (void)cmd;
    (void)ctx;
}

/* A block of capability 0 holding one USER_MSG "blk N", stamped time. */
static void submit_numbered(struct es_server *s, unsigned n, uint64_t time, size_t pad) {
    char text[64];
    int k = snprintf(text, sizeof text, "blk %u", n);
    size_t len = ES_BLOCK_MARKER_LEN + 12 + (size_t)k + pad;
    unsigned char *b = calloc(1, len);
    es_put_block_marker(b, time, (uint32_t)len, time + 1, 0);
    unsigned char *e = b + ES_BLOCK_MARKER_LEN;
    es_put_be(e, ES_EVENT_USER_MSG, 2);
    es_put_be(e + 2, time, 8);
    es_put_be(e + 10, (uint64_t)k + pad, 2);
    memcpy(e + 12, text, (size_t)k);
    memset(e + 12 + k, ' ', pad);
    es_server_submit(s, b, len);
    free(b);
}

/* What a client's stream held. */
struct seen {
    unsigned blk[512]; /* "blk N" in order */
    size_t nblk;
    unsigned window_at; /* index in blk[] where the window notice came */
    bool window, refused, complete;
    struct es_notice_read notice;
    uint64_t bytes_after_notice; /* stream bytes from the notice's block's end */
    uint64_t notice_block_end;
    uint16_t first_cap; /* the first block's capability */
    bool first_block_seen;
};

static void seen_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    struct seen *v = ctx;
    const uint8_t *p = base + ev->offset;
    if (ev->type == ES_EVENT_BLOCK_MARKER && !v->first_block_seen) {
        v->first_block_seen = true;
        v->first_cap = (uint16_t)es_be16(p + 22);
    }
    if (ev->type != ES_EVENT_USER_MSG)
        return;
    const uint8_t *text = ev->payload;
    size_t n = ev->payload_len;
    if (n > 4 && memcmp(text, "blk ", 4) == 0 && v->nblk < 512) {
        v->blk[v->nblk++] = (unsigned)strtoul((const char *)text + 4, NULL, 10);
        return;
    }
    struct es_notice_read r;
    es_notice_text_parse(text, n, &r);
    if (r.kind == ES_NOTICE_WINDOW) {
        v->window = true;
        v->window_at = (unsigned)v->nblk;
        v->notice = r;
    } else if (r.kind == ES_NOTICE_WINDOW_REFUSED) {
        v->refused = true;
        v->notice = r;
    }
}

/* Read a client to EOF (10 s without a byte ends it) and parse it. */
static void read_stream(int fd, struct seen *v) {
    memset(v, 0, sizeof *v);
    struct es_stream st;
    es_stream_init(&st);
    struct es_stream_callbacks cb = {.on_event = seen_event, .ctx = v};
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            break;
        unsigned char buf[65536];
        ssize_t r = read(fd, buf, sizeof buf);
        if (r <= 0)
            break;
        if (es_stream_feed(&st, buf, (size_t)r, &cb) != 0)
            break;
    }
    v->complete = es_stream_finish(&st) == 0;
    es_stream_destroy(&st);
}

static void *stop_thread(void *arg) {
    es_server_stop(arg);
    return NULL;
}

/* Stop `s` (the program's exit) while reading its `n` clients `fds` to EOF
 * at once, as clients do: a client that read nothing while the exit went
 * on would be "never going to read" after ES_EXIT_NEVER_READ_MS, which a
 * loop thread starved at load 12 to 20 reached before the stop was done. */
static void stop_reading(struct es_server *s, const int *fds, struct seen *v, size_t n) {
    struct es_stream st[4];
    struct es_stream_callbacks cb[4];
    bool open[4];
    assert(n <= 4);
    for (size_t i = 0; i < n; i++) {
        memset(&v[i], 0, sizeof v[i]);
        es_stream_init(&st[i]);
        cb[i] = (struct es_stream_callbacks){.on_event = seen_event, .ctx = &v[i]};
        open[i] = true;
    }
    pthread_t t;
    pthread_create(&t, NULL, stop_thread, s);
    for (size_t left = n; left > 0;) {
        struct pollfd p[4];
        for (size_t i = 0; i < n; i++)
            p[i] = (struct pollfd){.fd = open[i] ? fds[i] : -1, .events = POLLIN};
        if (poll(p, (nfds_t)n, 10000) <= 0)
            break; /* 10 s without a byte */
        for (size_t i = 0; i < n; i++) {
            if (!open[i] || p[i].revents == 0)
                continue;
            unsigned char buf[65536];
            ssize_t r = read(fds[i], buf, sizeof buf);
            if (r <= 0 || es_stream_feed(&st[i], buf, (size_t)r, &cb[i]) != 0) {
                open[i] = false;
                left--;
            }
        }
    }
    pthread_join(t, NULL);
    for (size_t i = 0; i < n; i++) {
        v[i].complete = es_stream_finish(&st[i]) == 0;
        es_stream_destroy(&st[i]);
    }
}

/* A server keeping `retain` bytes (`seconds`) of window; the header is
 * submitted at once unless `no_header`. */
static struct es_server *start_with(size_t retain, unsigned seconds, bool no_header) {
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.linger_ms = 1000;
    cfg.retain = retain;
    cfg.retain_seconds = seconds;
    struct es_server *s = NULL;
    unlink(sock_path);
    if (es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) != 0)
        return NULL;
    if (!no_header)
        es_server_submit(s, hdr_bytes, hdr_len);
    return s;
}

static struct es_server *start(size_t retain, unsigned seconds) {
    return start_with(retain, seconds, false);
}

static void wait_idle(struct es_server *s) {
    for (int i = 0; i < 1000 && es_server_in_flight(s) > 0; i++)
        sleep_ms(5);
    sleep_ms(50);
}

static void wait_accepted(struct es_server *s, uint64_t n) {
    for (int i = 0; i < 1000 && atomic_load(&es_server_counters(s)->clients_accepted) < n; i++)
        sleep_ms(5);
}

static void end_stream(struct es_server *s, unsigned n, uint64_t time) {
    submit_numbered(s, n, time, 0);
    static const unsigned char end[2] = {0xff, 0xff};
    es_server_submit(s, end, 2);
}

/* 60 blocks of about 4 KiB with nobody connected, a 64 KiB window: then
 * a client that asks, one that does not, one that asks late. */
UNIT_CASE(window_server) {
    server_setup();
    struct es_server *s = start(64 << 10, 0);
    ok(s != NULL, "a server with a 64 KiB window started");
    for (unsigned i = 1; i <= 60; i++)
        submit_numbered(s, i, (uint64_t)i * 1000000, 4000);
    wait_idle(s);
    const struct es_counters *k = es_server_counters(s);
    uint64_t wb = atomic_load(&k->window_bytes);
    ok(wb >= (64 << 10) && wb < (68 << 10), "with nobody connected the window holds %llu bytes",
       (unsigned long long)wb);

    int asker = connect_unix(sock_path);
    ok(asker >= 0 && write(asker, "GCTL\x08", 5) == 5, "a client asks for the window at once");
    wait_accepted(s, 1);
    int plain = connect_unix(sock_path);
    wait_accepted(s, 2);
    for (unsigned i = 61; i <= 70; i++)
        submit_numbered(s, i, (uint64_t)i * 1000000, 10);
    wait_idle(s);
    sleep_ms(700); /* the plain client's hold ends */
    int late = connect_unix(sock_path);
    wait_accepted(s, 3);
    sleep_ms(700); /* ... and the late one's: its stream has begun */
    ok(write(late,
             "\xf0\x9e\x97\x8c\x00\x0f"
             "eventlog-socket\x08",
             22) == 22,
       "a third asks late, in upstream's framing");
    sleep_ms(200);
    end_stream(s, 71, 71000000);
    int fds[3] = {asker, plain, late};
    struct seen got[3];
    stop_reading(s, fds, got, 3);
    struct seen a = got[0], p = got[1], l = got[2];
    ok(a.window && a.complete && a.window_at == 0, "the asker got the window notice first");
    ok(a.first_cap == 0xffff, "... in the block of definitions right after the header");
    unsigned first = a.nblk > 0 ? a.blk[0] : 0;
    bool in_order = a.nblk > 0;
    for (size_t i = 1; i < a.nblk; i++)
        in_order = in_order && a.blk[i] == a.blk[i - 1] + 1;
    ok(in_order && a.nblk > 11 && a.blk[a.nblk - 1] == 71,
       "then blocks %u to 71 in order, the window and the live stream", first);
    ok(first > 1 && first < 50, "the window began at block %u: the oldest were let go", first);
    ok(a.notice.chunks == 61 - first, "the notice counts the %u blocks kept (%llu)", 61 - first,
       (unsigned long long)a.notice.chunks);
    ok(!p.window && !p.refused && p.complete && p.nblk == 11 && p.blk[0] == 61,
       "a client that never asked got the live stream only (%zu blocks from %u)", p.nblk,
       p.nblk ? p.blk[0] : 0);
    ok(l.refused && strstr(l.notice.why, "first thing") != NULL && l.complete,
       "one that asked after its stream began is told so: %s", l.notice.why);
    ok(atomic_load(&k->windows_sent) == 1, "one window sent");
    close(asker);
    close(plain);
    close(late);

    /* The dump: header, definitions, window, an end marker. */
    char path[300];
    snprintf(path, sizeof path, "%s/dump.eventlog", unit_tmpdir());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    long long n = es_server_write_window(s, fd);
    close(fd);
    fd = open(path, O_RDONLY);
    struct seen d;
    read_stream(fd, &d);
    close(fd);
    ok(n > (56 << 10) && d.complete && d.nblk > 10 && d.blk[d.nblk - 1] == 71,
       "the window written after the stop parses, ends with the end marker (%lld bytes, "
       "blocks %u to 71)",
       n, d.nblk ? d.blk[0] : 0);
    es_server_free(s);
    free(hdr_bytes);
}

UNIT_CASE(window_server_age) {
    server_setup();
    struct es_server *s = start(1 << 20, 1);
    for (unsigned i = 1; i <= 40; i++)
        submit_numbered(s, i, (uint64_t)i * 100000000, 100); /* 0.1 s apart: 4 s */
    wait_idle(s);
    int c = connect_unix(sock_path);
    ok(write(c, "GCTL\x08", 5) == 5, "asking a 1 s window of 4 s of blocks");
    wait_accepted(s, 1);
    sleep_ms(100);
    end_stream(s, 41, 4100000000u);
    struct seen v;
    stop_reading(s, &c, &v, 1);
    close(c);
    ok(v.window && v.nblk > 0 && v.blk[0] >= 29 && v.blk[0] <= 31,
       "only the blocks of the last second: from block %u", v.nblk ? v.blk[0] : 0);
    ok(v.notice.to_s - v.notice.from_s <= 1.01, "the notice spans %.2f s to %.2f s",
       v.notice.from_s, v.notice.to_s);
    es_server_free(s);
    free(hdr_bytes);
}

UNIT_CASE(window_server_refused) {
    server_setup();
    struct es_server *s = start(0, 0);
    submit_numbered(s, 1, 1000, 10);
    wait_idle(s);
    int c = connect_unix(sock_path);
    ok(write(c, "GCTL\x08", 5) == 5, "asking a program without a window");
    wait_accepted(s, 1);
    sleep_ms(100);
    end_stream(s, 2, 2000);
    struct seen v;
    stop_reading(s, &c, &v, 1);
    close(c);
    ok(v.refused && strstr(v.notice.why, "GHC_EVENTLOG_RETAIN") && v.complete && v.nblk == 2,
       "it is refused with a notice naming the setting, and gets its stream as before (the "
       "first client's: %zu blocks)",
       v.nblk);
    int fd = open("/dev/null", O_WRONLY);
    ok(es_server_write_window(s, fd) == -ENODATA, "nothing to dump without a window");
    close(fd);
    es_server_free(s);
    free(hdr_bytes);
}

/* The request read before the stream's header has reached the server
 * (a client that connects as the program starts, or a loaded machine
 * whose library threads lag): the answer waits for the header, then the
 * refusal comes, instead of none at all (record --window waited out its
 * timeout). */
UNIT_CASE(window_refused_before_the_header) {
    server_setup();
    struct es_server *s = start_with(0, 0, true);
    int c = connect_unix(sock_path);
    ok(write(c, "GCTL\x08", 5) == 5, "asking before the header");
    wait_accepted(s, 1);
    /* The request is read (the loop thread acts on what it read before it
     * takes in the header): a fixed pause was too short at load 14. */
    int unread = 5;
    for (int i = 0; i < 2000 && ioctl(c, SIOCOUTQ, &unread) == 0 && unread > 0; i++)
        sleep_ms(5);
    ok(unread == 0, "the server has read the request (%d bytes unread)", unread);
    es_server_submit(s, hdr_bytes, hdr_len);
    end_stream(s, 1, 1000);
    struct seen v;
    stop_reading(s, &c, &v, 1);
    close(c);
    ok(v.refused && strstr(v.notice.why, "GHC_EVENTLOG_RETAIN") && v.complete && v.nblk == 1,
       "the refusal comes once the header has, then the stream (%zu blocks)", v.nblk);
    es_server_free(s);
    free(hdr_bytes);
}

UNIT_CASE(window_dump_path) {
    char out[64];
    ok(es_dump_path(out, sizeof out, "/tmp/app-%p-%t.eventlog", 42, 1700000000) &&
           strcmp(out, "/tmp/app-42-1700000000.eventlog") == 0,
       "%%p and %%t: %s", out);
    ok(es_dump_path(out, sizeof out, "100%%-%x", 1, 2) && strcmp(out, "100%-%x") == 0,
       "%%%% is a %%, another %% stays: %s", out);
    ok(!es_dump_path(out, 8, "/a/long/name", 1, 2), "a name that does not fit is refused");
}

/* What the start refuses, so that the exit that needs the dump does not
 * find out too late; and what it takes. (An unwritable directory is the
 * integration tests', as another user: root may write anywhere.) */
UNIT_CASE(window_dump_check) {
    char p[600];
    snprintf(p, sizeof p, "%s/app-%%p.eventlog", unit_tmpdir());
    ok(es_dump_check(p) == 0, "a file in an existing directory is taken");
    snprintf(p, sizeof p, "%s/missing/app-%%p.eventlog", unit_tmpdir());
    ok(es_dump_check(p) == EVENTLOG_SOCKET_EINVAL, "a missing directory is refused");
    snprintf(p, sizeof p, "%s/run-%%t/app.eventlog", unit_tmpdir());
    ok(es_dump_check(p) == EVENTLOG_SOCKET_EINVAL, "%%t in the directory is refused");
    snprintf(p, sizeof p, "%s/app-%%t-%%%%t/x.eventlog", unit_tmpdir());
    ok(es_dump_check(p) == EVENTLOG_SOCKET_EINVAL, "... after a %%%% too");
    snprintf(p, sizeof p, "%s/100%%t", unit_tmpdir());
    ok(mkdir(p, 0700) == 0, "a directory named 100%%t");
    snprintf(p, sizeof p, "%s/100%%%%t/app-%%t.eventlog", unit_tmpdir());
    ok(es_dump_check(p) == 0, "%%%%t in the directory is a literal, %%t in the name is taken");
    snprintf(p, sizeof p, "%s/", unit_tmpdir());
    ok(es_dump_check(p) == EVENTLOG_SOCKET_EINVAL, "a name ending with / is refused");
    ok(es_dump_check(unit_tmpdir()) == EVENTLOG_SOCKET_EINVAL, "a directory's name is refused");
    char longname[300];
    memset(longname, 'a', 250);
    longname[250] = '\0';
    snprintf(p, sizeof p, "%s/%s", unit_tmpdir(), longname);
    ok(es_dump_check(p) == EVENTLOG_SOCKET_EINVAL, "a file's name with no room beside it");
    ok(es_dump_check("app-%p.eventlog") == 0, "a bare name: the working directory");
}

/* A server that kept a small window and has stopped, as at the exit. */
static struct es_server *stopped_with_window(void) {
    struct es_server *s = start(64 << 10, 0);
    for (unsigned i = 1; i <= 20; i++)
        submit_numbered(s, i, (uint64_t)i * 1000000, 1000);
    end_stream(s, 21, 21000000);
    es_server_stop(s);
    return s;
}

/* The only entry in `dir` whose name is `prefix` and more; its path into
 * `out`. */
static bool entry_beside(const char *dir, const char *prefix, char *out, size_t size) {
    DIR *dd = opendir(dir);
    int found = 0;
    struct dirent *e;
    while (dd != NULL && (e = readdir(dd)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strlen(e->d_name) > strlen(prefix)) {
            snprintf(out, size, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    if (dd != NULL)
        closedir(dd);
    return found == 1;
}

/* Whatever is at the dump's name is replaced, never opened: a FIFO (the
 * exit would wait on it for ever), a file others may read, a link; a
 * directory stays, the window beside it, named on stderr. */
UNIT_CASE(window_dump_over_planted_entries) {
    server_setup();
    alarm(60); /* a dump that opens the FIFO waits for a reader */
    char d[400], path[500], victim[500], beside[800];
    snprintf(d, sizeof d, "%s/dumps", unit_tmpdir());
    mkdir(d, 0700);
    snprintf(victim, sizeof victim, "%s/victim", d);
    int v = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    ok(v >= 0 && write(v, "keep", 4) == 4 && close(v) == 0, "a file a link points at");
    const char *kinds[] = {"fifo", "file", "link", "dir"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        snprintf(path, sizeof path, "%s/%s.eventlog", d, kinds[i]);
        int made = i == 0   ? mkfifo(path, 0666)
                   : i == 1 ? close(open(path, O_WRONLY | O_CREAT, 0666))
                   : i == 2 ? symlink(victim, path)
                            : mkdir(path, 0777);
        ok(made == 0, "a %s at the dump's name", kinds[i]);
        chmod(path, 0666);
        struct es_server *s = stopped_with_window();
        ok(es_dump_window(s, path, 3) == 0, "the dump over a %s is written", kinds[i]);
        struct stat st;
        const char *at = path;
        if (i == 3) {
            ok(lstat(path, &st) == 0 && S_ISDIR(st.st_mode), "the directory is left alone");
            ok(entry_beside(d, "dir.eventlog", beside, sizeof beside),
               "the window is in one new file beside it");
            at = beside;
        }
        int got = lstat(at, &st);
        ok(got == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 && st.st_nlink == 1,
           "%s is a new regular file, mode 0600 (%o)", at, (unsigned)(st.st_mode & 0777));
        int fd = open(at, O_RDONLY);
        struct seen r;
        read_stream(fd, &r);
        close(fd);
        ok(r.complete && r.nblk > 5 && r.blk[r.nblk - 1] == 21, "it holds the window, whole");
        es_server_free(s);
    }
    char kept[8] = "";
    v = open(victim, O_RDONLY);
    ok(v >= 0 && read(v, kept, sizeof kept) == 4 && memcmp(kept, "keep", 4) == 0,
       "the file the link pointed at is untouched");
    close(v);
    alarm(0);
    free(hdr_bytes);
}
