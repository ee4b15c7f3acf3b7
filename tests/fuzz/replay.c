/* SPDX-License-Identifier: BSD-3-Clause */
/* A main for the fuzz targets without libFuzzer, so that `make check` runs
 * them (under ASan/UBSan) on inputs made from the recorded eventlogs and
 * on a few control-frame streams in both framings; and `make fuzz` takes the same inputs as
 * its starting corpus.
 *
 *   fuzz_TARGET FIXTURES_DIR            run every input, print TAP
 *   fuzz_TARGET FIXTURES_DIR --write DIR    write every input to DIR
 *   fuzz_TARGET --list                  its one case's name (fuzz_TARGET),
 *   fuzz_TARGET --case NAME FIXTURES_DIR    and that case: every input, as
 *                                       tests/run-unit.sh runs unit tests
 *
 * Inputs: for each recorded eventlog, the header with each of its blocks
 * and with what follows the last block (the fuzz_stream layout: u16
 * header length, header, chunk), and the whole file; then the control
 * streams below, each behind the byte fuzz_control reads as its cut. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *write_dir;
static int count;

static void run(const char *name, const uint8_t *data, size_t size) {
    count++;
    if (write_dir != NULL) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed-%03d", write_dir, count);
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
            fprintf(stderr, "replay: cannot write %s\n", path);
            exit(1);
        }
        return;
    }
    LLVMFuzzerTestOneInput(data, size); /* aborts on a failed check */
    printf("ok %d - %s (%zu bytes)\n", count, name, size);
}

static uint32_t be(const uint8_t *p, int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* The header, then `chunk`, in the fuzz_stream layout. */
static void run_chunk(const char *file, const char *what, const uint8_t *hdr, size_t hlen,
                      const uint8_t *chunk, size_t clen) {
    uint8_t *buf = malloc(2 + hlen + clen);
    buf[0] = (uint8_t)(hlen >> 8);
    buf[1] = (uint8_t)hlen;
    memcpy(buf + 2, hdr, hlen);
    memcpy(buf + 2 + hlen, chunk, clen);
    char name[512];
    snprintf(name, sizeof name, "%s: header and %s", file, what);
    run(name, buf, 2 + hlen + clen);
    free(buf);
}

static void eventlog_inputs(const char *dir, const char *file) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        exit(1);
    }
    static uint8_t d[1 << 20];
    size_t len = fread(d, 1, sizeof d, f);
    fclose(f);
    if (len == sizeof d) {
        fprintf(stderr, "replay: %s is larger than the %zu bytes this reads\n", path, sizeof d);
        exit(1);
    }
    run(file, d, len);
    size_t h = 0;
    while (h + 4 <= len && memcmp(d + h, "datb", 4) != 0)
        h++;
    if (h + 4 > len || h + 4 > 0xffff)
        return;
    h += 4;
    size_t pos = h;
    int block = 0;
    /* Blocks by their markers' sizes (type 18, u32 size at offset 10). */
    while (pos + 24 <= len && be(d + pos, 2) == 18) {
        size_t size = be(d + pos + 10, 4);
        if (size < 24 || size > len - pos)
            break;
        char what[64];
        snprintf(what, sizeof what, "block %d", block++);
        run_chunk(file, what, d, h, d + pos, size);
        pos += size;
    }
    run_chunk(file, "the rest", d, h, d + pos, len - pos);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    const char *name = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        printf("%s\n", name);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "--case") == 0) {
        if (strcmp(argv[2], name) != 0) {
            fprintf(stderr, "%s: no case named %s (--list shows it)\n", name, argv[2]);
            return 2;
        }
        argv += 2;
        argc -= 2;
    }
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--write") == 0)) {
        fprintf(stderr, "usage: %s [--case %s] FIXTURES_DIR [--write DIR] | --list\n", name, name);
        return 2;
    }
    write_dir = argc == 4 ? argv[3] : NULL;
    DIR *dir = opendir(argv[1]);
    if (dir == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", argv[1]);
        return 1;
    }
    char *names[256];
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL && n < 256;) {
        size_t l = strlen(e->d_name);
        if (l > 9 && strcmp(e->d_name + l - 9, ".eventlog") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        eventlog_inputs(argv[1], names[i]);
        free(names[i]);
    }
    /* String literals: the length leaves out the terminating NUL. The
     * upstream framing: magic, version 0, length, namespace, command id. */
#define UMAGIC "\xF0\x9E\x97\x8C"
#define UPSTREAM(id)                                                                               \
    UMAGIC "\x00\x0f"                                                                              \
           "eventlog-socket" id
    /* Versions 14 and 19 of clang-format lay a braced macro body out apart. */
    /* clang-format off */
#define CONTROL(name, bytes) {name, bytes, sizeof bytes - 1}
    /* clang-format on */
    static const struct {
        const char *name, *bytes;
        size_t len;
    } control[] = {
        CONTROL("every command", "\x01GCTL\x01GCTL\x02GCTL\x03"),
        CONTROL("resynchronising", "\x05GCTGCTL\x03GGCTL\x01"),
        CONTROL("an unknown command and a cut frame", "\x0fGCTL\x09xyGCTL\x00GCT"),
        CONTROL("a magic at the very end", "\x02GCTL"),
        CONTROL("every upstream command", "\x03" UPSTREAM("\x01") UPSTREAM("\x02") UPSTREAM("\x03")
                                              UPSTREAM("\x04") UPSTREAM("\x05")),
        CONTROL("both framings interleaved",
                "\x07GCTL\x03" UPSTREAM("\x05") "GCT" UPSTREAM("\x04") "\xF0\x9EGCTL\x01"),
        CONTROL("an upstream frame cut by a GCTL frame", "\x01" UMAGIC "\x00\x0f"
                                                         "event"
                                                         "GCTL\x03"),
        CONTROL("a wrong version, a zero length",
                "\x0b" UMAGIC "\x01\x0f"
                "eventlog-socket\x05" UMAGIC "\x00\x00" UMAGIC "GCTL\x02"),
        CONTROL("a length past the data", "\x04" UMAGIC "\x00\xff"
                                          "eventlog-socket\x05" UPSTREAM("\x03") "GCTL\x02"),
        CONTROL("unknown namespaces and ids", "\x09" UMAGIC "\x00\x03"
                                              "foo\x01" UMAGIC "\x00\x08"
                                              "eventlog\x05" UPSTREAM("\x06") UPSTREAM("\x00")),
        CONTROL("an upstream frame at the very end", "\x00" UMAGIC "\x00\x0f"
                                                     "eventlog-sock"),
    };
#undef CONTROL
#undef UPSTREAM
#undef UMAGIC
    for (size_t i = 0; i < sizeof control / sizeof control[0]; i++)
        run(control[i].name, (const uint8_t *)control[i].bytes, control[i].len);
    if (write_dir == NULL)
        printf("1..%d\n", count);
    return 0;
}
