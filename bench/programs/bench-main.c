/* SPDX-License-Identifier: BSD-3-Clause */
/* The workload's C main: eventlog-socket when GHC_EVENTLOG_UNIX_PATH (or
 * _INET_PORT) is set, otherwise the RTS's own writers (so the same binary
 * measures "no eventlog" and "file writer" too). Event logging is on only
 * when the command line says +RTS -l. */
#include <Rts.h>
#include <stdio.h>
#include <stdlib.h>

#include "eventlog_socket.h"

extern StgClosure ZCMain_main_closure;

/* For make bench: the library's counters at exit, after hs_exit has
 * delivered the rest of the stream, as JSON in the file $BENCH_STATS names. */
static void write_stats(void) {
    const char *path = getenv("BENCH_STATS");
    struct eventlog_socket_stats st;
    if (path == NULL || eventlog_socket_stats(&st) != 0)
        return;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fprintf(f,
            "{\"flushes\": %llu, \"flush_us\": %llu, \"bytes_sent\": %llu, "
            "\"lossless_wait_ns\": %llu}\n",
            (unsigned long long)st.flushes, (unsigned long long)st.flush_us,
            (unsigned long long)st.bytes_sent, (unsigned long long)st.lossless_wait_ns);
    fclose(f);
}

/* For make bench (bench/bench_classes.py): BENCH_CLASSES="ON,OFF" (decimal
 * EVENTLOG_SOCKET_EVENTS_* bits) switches those classes on and off as the
 * program starts, the way a client's command would. */
static void switch_classes(void *data) {
    (void)data;
    unsigned on, off;
    const char *spec = getenv("BENCH_CLASSES");
    if (spec == NULL || sscanf(spec, "%u,%u", &on, &off) != 2)
        return;
    int err = eventlog_socket_switch_event_classes(on, off);
    if (err < 0)
        fprintf(stderr, "workload: BENCH_CLASSES=%s: %s\n", spec,
                eventlog_socket_error_message(err));
}

int main(int argc, char *argv[]) {
    RtsConfig conf = defaultRtsConfig;
    conf.rts_opts_enabled = RtsOptsAll;
    conf.rts_hs_main = true;
    if (getenv("GHC_EVENTLOG_UNIX_PATH") || getenv("GHC_EVENTLOG_INET_PORT")) {
        int err = eventlog_socket_init_from_env();
        if (err < 0) {
            fprintf(stderr, "workload: %s\n", eventlog_socket_error_message(err));
            return 1;
        }
        conf.eventlog_writer = &SocketEventLogWriter;
        atexit(write_stats);
        eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING, switch_classes,
                                 NULL);
    }
    return eventlog_socket_hs_main(argc, argv, conf, &ZCMain_main_closure);
}
