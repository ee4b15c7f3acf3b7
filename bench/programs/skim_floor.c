/* SPDX-License-Identifier: BSD-3-Clause */
/* The floor under `eventlog-socket metrics`'s parse: what the
 * client's reader (cbits/format/es_stream.c) costs to walk a stream whose events
 * no one wants one by one, every type skimmed but the block markers, the
 * least any consumer of the reader pays per byte. The stream is the one
 * bench_metrics.py sends (a recording's header, then its events MIB MiB
 * over), fed from memory in 208 KiB pieces (what a Unix socket read
 * returns); no sockets, so no system time: bench_metrics.py adds the
 * exporter's own.
 *
 *   skim-floor FILE MIB
 *
 * Prints one JSON object: bytes, events, CPU seconds per GiB. */
#define _GNU_SOURCE
#include "format/es_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct tally {
    uint64_t reported, skipped, latest;
};

static void on_event(const struct es_event *ev, const uint8_t *base, void *ctx) {
    (void)base;
    struct tally *t = ctx;
    t->reported++;
    if (ev->time > t->latest)
        t->latest = ev->time;
}

static void on_skip(const struct es_stream_skip *run, void *ctx) {
    struct tally *t = ctx;
    t->skipped += run->events;
    if (run->max_time > t->latest)
        t->latest = run->max_time;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf != NULL && fread(buf, 1, *len, f) != *len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: skim-floor FILE MIB\n");
        return 2;
    }
    size_t len;
    uint8_t *rec = read_file(argv[1], &len);
    static struct es_header h;
    if (rec == NULL || es_header_scan(rec, len, &h) != 0) {
        fprintf(stderr, "skim-floor: %s: not a readable eventlog\n", argv[1]);
        return 1;
    }
    /* The body without the end marker, repeated, as bench_metrics.py sends it. */
    size_t body = len - h.len;
    if (body >= 2 && rec[len - 2] == 0xff && rec[len - 1] == 0xff)
        body -= 2;
    size_t repeat = (size_t)(atof(argv[2]) * (1 << 20)) / (body ? body : 1);
    repeat = repeat ? repeat : 1;
    size_t total = h.len + body * repeat;
    uint8_t *s = malloc(total);
    if (s == NULL || body == 0) {
        fprintf(stderr, "skim-floor: no events, or no memory\n");
        return 1;
    }
    memcpy(s, rec, h.len);
    for (size_t i = 0; i < repeat; i++)
        memcpy(s + h.len + i * body, rec + h.len, body);
    static bool want[ES_MAX_EVENT_TYPES];
    want[ES_EVENT_BLOCK_MARKER] = true;
    struct tally t = {0};
    struct es_stream st;
    es_stream_init(&st);
    es_stream_skim(&st, want, NULL, on_skip);
    struct es_stream_callbacks cb = {.on_event = on_event, .ctx = &t};
    const size_t piece = 208 << 10;
    double start = cpu_now();
    for (size_t pos = 0; pos < total; pos += piece) {
        size_t n = total - pos < piece ? total - pos : piece;
        if (es_stream_feed(&st, s + pos, n, &cb) != 0) {
            fprintf(stderr, "skim-floor: %s\n", st.error ? st.error : "out of memory");
            return 1;
        }
    }
    double cpu = cpu_now() - start;
    printf("{\"bytes\": %zu, \"events\": %llu, \"reported\": %llu, \"cpu_s_per_gib\": %.3f, "
           "\"latest\": %llu}\n",
           total, (unsigned long long)st.events, (unsigned long long)t.reported,
           cpu / ((double)total / (1 << 30)), (unsigned long long)t.latest);
    es_stream_destroy(&st);
    free(s);
    free(rec);
    return t.reported + t.skipped == st.events ? 0 : 1;
}
