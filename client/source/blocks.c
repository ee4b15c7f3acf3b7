/* SPDX-License-Identifier: BSD-3-Clause */
#include "blocks.h"

#include "format/es_payload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t end_marker[2] = {0xff, 0xff};

void es_blocks_init(struct es_blocks *b) {
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->salvaged = -1;
}

void es_blocks_destroy(struct es_blocks *b) {
    es_bytes_free(&b->held);
}

void es_blocks_header(struct es_blocks *b, uint64_t header_len) {
    b->boundary = b->header_len = header_len;
}

/* The library's cost notice: a block of the global buffer holding one
 * USER_MSG with these words first (cbits/delivery/es_notice.c). */
static bool cost_notice(const struct es_blocks *b, const struct es_event *ev, uint64_t offset) {
    static const char prefix[] = "eventlog-socket: streaming cost ";
    return ev->type == ES_EVENT_USER_MSG && b->block_cap == ES_GLOBAL_CAP &&
           offset == b->block_start + ES_BLOCK_MARKER_LEN && b->block_end != 0 &&
           offset + ev->len == b->block_end && ev->payload_len >= sizeof prefix - 1 &&
           memcmp(ev->payload, prefix, sizeof prefix - 1) == 0;
}

void es_blocks_event(struct es_blocks *b, const struct es_event *ev, uint64_t offset) {
    if (ev->time > b->last_time)
        b->last_time = ev->time;
    if (ev->type == ES_EVENT_BLOCK_MARKER) {
        /* Everything before a block marker is whole blocks. A marker too
         * short to say its size and capability ends no known range. */
        struct es_block_fields f;
        bool whole = es_payload_block(ev, &f);
        b->boundary = offset;
        b->block_end = whole ? offset + f.size : 0;
        b->block_start = offset;
        b->block_cap = f.cap;
    }
    /* Events are reported before their bytes arrive, so the range is known
     * before any of it is written. */
    if (b->skip_cost_notices && b->nskip < ES_BLOCKS_SKIPS && cost_notice(b, ev, offset)) {
        b->skip[b->nskip].from = b->block_start;
        b->skip[b->nskip].to = b->block_end;
        b->nskip++;
    }
    /* A block is whole when an event ends exactly where its marker said:
     * no need to wait for the next block to write it. */
    if (b->block_end != 0 && offset + ev->len == b->block_end)
        b->boundary = b->block_end;
}

int es_blocks_skip(struct es_blocks *b, uint64_t from, uint64_t to) {
    if (b->nskip >= ES_BLOCKS_SKIPS)
        return -ENOSPC;
    b->skip[b->nskip].from = from;
    b->skip[b->nskip].to = to;
    b->nskip++;
    return 0;
}

void es_blocks_end_marker(struct es_blocks *b, uint64_t after) {
    b->boundary = after;
    b->complete = true;
}

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write the stream's bytes [from, to), which `data` holds from `from` on,
 * leaving out the ranges to skip; forget the ranges passed. */
static int put(struct es_blocks *b, const uint8_t *data, uint64_t from, uint64_t to) {
    uint64_t at = from, skipped0 = b->skipped;
    unsigned used = 0;
    while (at < to) {
        uint64_t stop = to;
        if (used < b->nskip && b->skip[used].to <= at) {
            used++; /* behind us (cannot happen: ranges come before their bytes) */
            continue;
        }
        if (used < b->nskip && b->skip[used].from < to) {
            if (b->skip[used].from <= at) {
                uint64_t end = b->skip[used].to < to ? b->skip[used].to : to;
                b->skipped += end - at;
                at = end;
                if (end == b->skip[used].to)
                    used++;
                continue;
            }
            stop = b->skip[used].from;
        }
        int r = write_all(b->fd, data + (at - from), (size_t)(stop - at));
        if (r != 0) {
            b->skipped = skipped0; /* as before the call: the file ends at base - skipped */
            return r;
        }
        at = stop;
    }
    b->nskip -= used;
    memmove(b->skip, b->skip + used, b->nskip * sizeof b->skip[0]);
    return 0;
}

/* A write failed (a full disk, a size limit): cut the file back to its
 * last whole block and end it with an end marker, so that what was written
 * still parses. The marker goes where mark_end kept one (bytes the file
 * already has, so it needs no new space), then the rest is cut off.
 * Nothing to save on a pipe, or before the header was whole. */
static void salvage(struct es_blocks *b, int err) {
    b->error = err;
    if (!b->seekable)
        return;
    off_t end = (off_t)es_blocks_file_len(b);
    if (b->base == 0) {
        if (ftruncate(b->fd, 0) == 0)
            b->salvaged = 0;
        return;
    }
    /* The stream's own end marker is in the file only once everything up
     * to the boundary after it was written. */
    bool ended = b->complete && b->base >= b->boundary;
    if (!ended && pwrite(b->fd, end_marker, 2, end) != 2)
        return;
    off_t len = ended ? end : end + 2;
    if (ftruncate(b->fd, len) == 0)
        b->salvaged = (int64_t)len;
}

/* After whole blocks were written: an end marker after them, which the
 * next write overwrites (the file position stays before it). */
static int mark_end(struct es_blocks *b) {
    if (!b->seekable || b->complete)
        return 0;
    return pwrite(b->fd, end_marker, 2, (off_t)es_blocks_file_len(b)) == 2 ? 0 : -errno;
}

static int keep(struct es_blocks *b, const uint8_t *data, size_t n) {
    return es_bytes_append(&b->held, data, n, 1 << 16);
}

/* Write the stream's whole bytes [base, whole) from `data`, which holds
 * them from `base` on, each part followed by an end marker (mark_end). The
 * header goes in a write of its own: once it is in the file, the end
 * marker after it fits in the page it took, so that a disk with a page
 * free keeps a file that parses (a first write of the header and blocks
 * together could fill that page with a part of it and fail, leaving
 * nothing to cut back to). */
static int write_whole(struct es_blocks *b, const uint8_t *data, uint64_t whole) {
    uint64_t from = b->base;
    while (b->base < whole) {
        uint64_t to = b->base < b->header_len && whole > b->header_len ? b->header_len : whole;
        int r = put(b, data + (b->base - from), b->base, to);
        if (r == 0) {
            b->base = to;
            r = mark_end(b);
        }
        if (r != 0) {
            salvage(b, -r);
            return r;
        }
    }
    return 0;
}

/* Write the whole bytes held. The boundary can lie past the bytes held
 * when the reader saw events in bytes it then refused (a malformed read). */
static int flush(struct es_blocks *b) {
    if (b->fd < 0 || b->error)
        return -b->error;
    uint64_t whole = b->boundary < b->base + b->held.len ? b->boundary : b->base + b->held.len;
    if (whole <= b->base)
        return 0;
    uint64_t base0 = b->base;
    int r = write_whole(b, b->held.data, whole);
    size_t n = (size_t)(b->base - base0);
    es_bytes_consume(&b->held, n);
    return r;
}

int es_blocks_whole(struct es_blocks *b, uint64_t offset) {
    if (offset > b->boundary)
        b->boundary = offset;
    return flush(b);
}

/* An unfinished block longer than any a server sends (a block marker that
 * claims 4 GiB, or events that never close their block): not an
 * eventlog-socket stream, or a corrupt one. Its bytes are let go, and
 * nothing more is held. */
static int too_long(struct es_blocks *b) {
    uint64_t kept = b->boundary > b->base ? b->boundary - b->base : 0;
    if (kept < b->held.len)
        es_bytes_truncate(&b->held, (size_t)kept);
    if (b->held.len == 0)
        es_bytes_free(&b->held);
    b->too_long = true;
    return -EMSGSIZE;
}

/* Whether the unfinished block has grown past ES_BLOCKS_MAX_BLOCK. */
static bool overlong(const struct es_blocks *b) {
    return b->header_len > 0 && b->received > b->boundary &&
           es_blocks_past_max(b->received - b->boundary);
}

static int append(struct es_blocks *b, const uint8_t *data, size_t n) {
    if (b->fd >= 0 && b->held.len == 0 && !b->error) {
        /* The common case: nothing held, so write the whole part straight
         * from the reader's buffer and keep only the unfinished block. */
        uint64_t whole = b->boundary < b->received ? b->boundary : b->received;
        uint64_t base0 = b->base;
        if (whole > b->base) {
            int r = write_whole(b, data, whole);
            if (r != 0)
                return r;
        }
        size_t direct = (size_t)(b->base - base0);
        return keep(b, data + direct, n - direct);
    }
    int r = keep(b, data, n);
    if (r != 0)
        return r;
    return flush(b);
}

int es_blocks_append(struct es_blocks *b, const uint8_t *data, size_t n) {
    if (b->finished)
        return 0;
    if (b->too_long)
        return -EMSGSIZE;
    b->received += n;
    int r = append(b, data, n);
    return r == 0 && overlong(b) ? too_long(b) : r;
}

void es_blocks_refusal_words(uint64_t at, uint64_t claims, const char *keeps, char *out,
                             size_t size) {
    char what[80] = "";
    if (es_blocks_past_max(claims))
        snprintf(what, sizeof what, ", whose marker claims %.1f MiB", (double)claims / (1 << 20));
    snprintf(out, size,
             "a malformed stream: the block at byte %llu%s runs past %.0f MiB, longer than any "
             "block a program sends (its RTS writes 2 MiB at most, the library's definitions "
             "block 16 MiB): not a program's eventlog, or a corrupt one; %s",
             (unsigned long long)at, what, (double)ES_BLOCKS_MAX_BLOCK / (1 << 20), keeps);
}

void es_blocks_too_long_why(const struct es_blocks *b, char *out, size_t size) {
    uint64_t claims = b->block_end > b->block_start ? b->block_end - b->block_start : 0;
    es_blocks_refusal_words(b->boundary, b->block_start == b->boundary ? claims : 0,
                            "the recording keeps the blocks before it", out, size);
}

int es_blocks_set_fd(struct es_blocks *b, int fd) {
    struct stat st;
    b->fd = fd;
    b->seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    return flush(b);
}

static void be(uint8_t *p, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The cut notice's block in `out` (at most `size` bytes): its length, 0
 * when the header does not allow it. */
static size_t cut_notice(const struct es_blocks *b, const struct es_header *hdr, const char *why,
                         uint8_t *out, size_t size) {
    if (hdr == NULL || hdr->size[ES_EVENT_USER_MSG] != ES_SIZE_VARIABLE ||
        hdr->size[ES_EVENT_BLOCK_MARKER] != 14)
        return 0;
    char text[400];
    int n = snprintf(text, sizeof text, ES_NOTICE_PREFIX ES_NOTICE_CUT_WORDS "%s", why);
    size_t tl = n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    size_t block = ES_BLOCK_MARKER_LEN + 12 + tl; /* marker, then USER_MSG: type, time, size */
    if (block > size)
        return 0;
    uint64_t t = b->last_time;
    be(out, ES_EVENT_BLOCK_MARKER, 2);
    be(out + 2, t, 8);
    be(out + 10, block, 4);
    be(out + 14, t, 8);
    be(out + 22, ES_GLOBAL_CAP, 2);
    uint8_t *m = out + ES_BLOCK_MARKER_LEN;
    be(m, ES_EVENT_USER_MSG, 2);
    be(m + 2, t, 8);
    be(m + 10, tl, 2);
    memcpy(m + 12, text, tl);
    return block;
}

int es_blocks_finish_cut(struct es_blocks *b, const struct es_header *hdr, const char *why) {
    if (b->finished)
        return -b->error;
    int r = flush(b);
    if (r != 0) {
        b->finished = true;
        return r;
    }
    if (!b->complete && b->base > 0 && b->fd >= 0) {
        uint8_t note[512];
        size_t n = cut_notice(b, hdr, why, note, sizeof note);
        r = n ? write_all(b->fd, note, n) : 0;
        if (r != 0) {
            b->finished = true;
            salvage(b, -r);
            return r;
        }
    }
    return es_blocks_finish(b);
}

int es_blocks_finish(struct es_blocks *b) {
    if (b->finished)
        return -b->error;
    b->finished = true;
    int r = flush(b);
    if (r != 0)
        return r;
    /* An unfinished block is left out: the file ends after the last whole one. */
    es_bytes_truncate(&b->held, 0);
    if (!b->complete && b->base > 0) {
        r = write_all(b->fd, end_marker, 2);
        if (r != 0)
            salvage(b, -r);
    }
    return r;
}
