/* The `eventlog-socket` command: one subcommand per verb (subcommands.h),
 * dispatched by name from the table below (see README, "The
 * eventlog-socket command"). */
#include "subcommands.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#ifndef ES_VERSION
#error "ES_VERSION: the Makefile passes the cabal file's version"
#endif

static const struct subcommand {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} subcommands[] = {
    {"record", es_record_main,
     "record ADDR [-o FILE] [--duration S]    save the live eventlog to a file"},
    {"control", es_control_main,
     "control ADDR start|stop|census [--wait] start/stop heap profiling, ask for a census"},
    {"heap", es_heap_main,
     "heap ADDR|FILE (--hp OUT.hp | --csv OUT.csv) the heap profile, in .hp or CSV"},
    {"top", es_top_main, "top ADDR [--retry]                      watch the program live"},
    {"serve", es_serve_main,
     "serve ADDR [--http HOST:PORT]           a live web page of the program"},
    {"report", es_report_main,
     "report FILE -o OUT.html                 the same page from a recording\n"
     "  report RUN_A RUN_B -o OUT.html          two runs' heap profiles on shared axes, with "
     "compare's table"},
    {"table", es_table_main,
     "table KIND ADDR|FILE --csv OUT|-        gc, heap, census, markers, sparks or threads as "
     "CSV"},
    {"compare", es_compare_main,
     "compare RUN_A RUN_B [--csv OUT|-]       each heap profile label's peak and mean, A vs B"},
    {"metrics", es_metrics_main,
     "metrics [--http HOST:PORT] SOURCE...    Prometheus metrics of every program"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: eventlog-socket SUBCOMMAND ARGS...\n\nsubcommands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        fprintf(out, "  %s\n", subcommands[i].help);
    fprintf(out, "\nADDR is unix:/path, a path containing '/', tcp:HOST:PORT, HOST:PORT or :PORT.\n"
                 "Every subcommand takes --connect-timeout S (default 5) and --retry (wait\n"
                 "for the program to appear). `eventlog-socket SUBCOMMAND --help` tells more.\n"
                 "Exit status: 0 done, 1 cut or timed out, 2 usage error or no eventlog.\n");
}

int main(int argc, char **argv) {
    /* A server that goes away while a control frame is being written is
     * an error to report, not a reason to die silently. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("eventlog-socket %s\n", ES_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "eventlog-socket: no subcommand %s (eventlog-socket --help lists them)\n",
            argv[1]);
    return 2;
}
