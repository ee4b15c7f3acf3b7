/* SPDX-License-Identifier: BSD-3-Clause */
/* A size means the same to the library and to the command: one table of
 * what people type (the documented spellings, the edge cases: a unit alone,
 * a sign, a space, a fraction, 2^64) run through the library's reader of
 * its variables (es_config_parse_size: GHC_EVENTLOG_MAX_BUFFER, _RETAIN...)
 * and through the command's (a watch condition, heap-size>SIZE), each
 * entry taking or refusing the same texts with the same number of bytes;
 * and the library's environment refuses a size that is not one, naming the
 * grammar. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "base/es_config.h"
#include "base/es_log.h"
#include "flight/trigger.h"
#include "../unit.h"

#include <stdint.h>

#define KIB ((uint64_t)1 << 10)
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define TIB ((uint64_t)1 << 40)

static const struct {
    const char *text;
    bool taken;
    uint64_t bytes;
} sizes[] = {
    /* Bytes. */
    {"0", true, 0},
    {"4096", true, 4096},
    {"4096B", true, 4096},
    {"4096b", true, 4096},
    {"007", true, 7},
    /* The units, in any case, with B or iB after them: powers of 1024. */
    {"64K", true, 64 * KIB},
    {"64k", true, 64 * KIB},
    {"64KB", true, 64 * KIB},
    {"64KiB", true, 64 * KIB},
    {"64kib", true, 64 * KIB},
    {"16M", true, 16 * MIB},
    {"16MiB", true, 16 * MIB},
    {"64MB", true, 64 * MIB},
    {"256mb", true, 256 * MIB},
    {"1G", true, GIB},
    {"2gb", true, 2 * GIB},
    {"2GiB", true, 2 * GIB},
    {"1T", true, TIB},
    {"3TiB", true, 3 * TIB},
    /* The largest: 2^64 - 1 bytes, and 2^24 - 1 TiB. */
    {"18446744073709551615", true, UINT64_MAX},
    {"16777215T", true, 16777215 * TIB},
    /* Too large: 2^64 bytes, however it is written. */
    {"18446744073709551616", false, 0},
    {"99999999999999999999", false, 0},
    {"16777216T", false, 0},
    {"17179869184G", false, 0},
    {"18014398509481984K", false, 0},
    /* Not a size. */
    {"", false, 0},
    {"K", false, 0},
    {"B", false, 0},
    {"MiB", false, 0},
    {"-1", false, 0},
    {"+1", false, 0},
    {" 1M", false, 0},
    {"1M ", false, 0},
    {"1 M", false, 0},
    {"1M\n", false, 0},
    {"1.5M", false, 0},
    {"1e6", false, 0},
    {"0x10", false, 0},
    {"1P", false, 0},
    {"12Q", false, 0},
    {"1KK", false, 0},
    {"1Ki", false, 0},
    {"1iB", false, 0},
    {"1KBB", false, 0},
    {"1BK", false, 0},
};

UNIT_CASE(client_sizes_one_grammar) {
    char shown[64];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const char *text = sizes[i].text;
        unit_shown(text, shown, sizeof shown);
        size_t lib = 12345;
        int r = es_config_parse_size(text, &lib);
        if (sizes[i].taken)
            ok(r == 0 && lib == sizes[i].bytes, "the library takes \"%s\" as %llu bytes (%d, %zu)",
               shown, (unsigned long long)sizes[i].bytes, r, lib);
        else
            ok(r == EVENTLOG_SOCKET_EINVAL && lib == 12345,
               "the library refuses \"%s\" and keeps what it had (%d, %zu)", shown, r, lib);

        char cond[64], err[400] = "";
        snprintf(cond, sizeof cond, "heap-size>%s", text);
        struct es_triggers ts;
        memset(&ts, 0, sizeof ts);
        r = es_triggers_add(&ts, cond, err, sizeof err);
        if (sizes[i].taken)
            ok(r == 0 && ts.n == 1 && ts.t[0].threshold == sizes[i].bytes,
               "the command takes heap-size>%s as %llu bytes (%s)", shown,
               (unsigned long long)sizes[i].bytes, err);
        else
            ok(r != 0 && ts.n == 0 && strstr(err, "not a size") != NULL,
               "the command refuses heap-size>%s: %s", shown, err);
        es_triggers_free(&ts);
    }
}

/* The library's environment: a size that is not one is refused with a line
 * that says what a size is; the largest unit is taken. */
UNIT_CASE(client_sizes_environment) {
    struct es_config cfg;
    es_config_defaults(&cfg);
    setenv("GHC_EVENTLOG_UNIX_PATH", "/tmp/es-sizes-unused.sock", 1);
    setenv("GHC_EVENTLOG_MAX_BUFFER", "1T", 1);
    int r = es_config_from_env(&cfg);
    ok(r == 0 && cfg.max_buffer == (size_t)TIB, "GHC_EVENTLOG_MAX_BUFFER=1T is 1 TiB (%d)", r);

    setenv("GHC_EVENTLOG_MAX_BUFFER", "1.5M", 1);
    char log[1024];
    es_log_drain(5000); /* earlier lines are not this call's */
    unit_capture_begin();
    r = es_config_from_env(&cfg);
    es_log_drain(5000); /* es_log only queues the line */
    unit_capture_end(log, sizeof log);
    ok(r == EVENTLOG_SOCKET_EINVAL && strstr(log, "GHC_EVENTLOG_MAX_BUFFER=\"1.5M\"") != NULL &&
           strstr(log, "K, M, G or T") != NULL,
       "GHC_EVENTLOG_MAX_BUFFER=1.5M is refused, naming the units: %s", log);
    unsetenv("GHC_EVENTLOG_MAX_BUFFER");
    unsetenv("GHC_EVENTLOG_UNIX_PATH");
}
