/* SPDX-License-Identifier: BSD-3-Clause */
/* The `eventlog-socket` command: one subcommand per verb (subcommands.h),
 * dispatched by name from the table below; its help and usage are the
 * manual's (help.h, docs/man/eventlog-socket.1.scd). */
#include "help.h"
#include "subcommands.h"

#include <assert.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifndef ES_VERSION
#error "ES_VERSION: the Makefile passes the cabal file's version"
#endif

static const struct subcommand {
    const char *name;
    int (*fn)(int argc, char **argv);
} subcommands[] = {
    {"record", es_record_main}, {"control", es_control_main}, {"heap", es_heap_main},
    {"top", es_top_main},       {"serve", es_serve_main},     {"report", es_report_main},
    {"table", es_table_main},   {"compare", es_compare_main}, {"metrics", es_metrics_main},
    {"watch", es_watch_main},   {"profile", es_profile_main},
};
#define NSUB (sizeof subcommands / sizeof *subcommands)

/* The manual describes exactly these subcommands. */
static bool documented(void) {
    for (size_t i = 0; i < NSUB; i++)
        if (es_help_page(subcommands[i].name) == NULL)
            return false;
    return (size_t)es_help_npages == NSUB;
}

static const struct subcommand *find(const char *name) {
    for (size_t i = 0; i < NSUB; i++)
        if (strcmp(name, subcommands[i].name) == 0)
            return &subcommands[i];
    return NULL;
}

/* A word that is no subcommand (or no option of the command itself). */
static int unknown(const char *who, const char *word) {
    const char *near =
        word[0] == '-' ? es_help_nearest_flag(&es_help_top, word) : es_help_nearest_cmd(word);
    fprintf(stderr, "%s: no %s %s%s%s%s\n", who, word[0] == '-' ? "option" : "subcommand", word,
            near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
    es_help_usage(stderr, &es_help_top);
    return 2;
}

/* `eventlog-socket help [SUBCOMMAND]`: the same as SUBCOMMAND --help. */
static int help(int argc, char **argv) {
    if (argc == 0) {
        es_help_print(stdout, &es_help_top);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "eventlog-socket help: one subcommand at a time (%s, then %s)\n", argv[0],
                argv[1]);
        return 2;
    }
    if (strcmp(argv[0], "help") == 0) {
        es_help_print(stdout, &es_help_top);
        return 0;
    }
    const struct es_help_page *p = es_help_page(argv[0]);
    if (p == NULL)
        return unknown("eventlog-socket help", argv[0]);
    es_help_print(stdout, p);
    return 0;
}

int main(int argc, char **argv) {
    assert(documented());
    /* A server that goes away while a control frame is being written is
     * an error to report, not a reason to die silently. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        fprintf(stderr, "eventlog-socket: SUBCOMMAND is required\n");
        es_help_usage(stderr, &es_help_top);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return help(0, NULL);
    if (strcmp(argv[1], "help") == 0)
        return help(argc - 2, argv + 2);
    if (strcmp(argv[1], "--version") == 0) {
        printf("eventlog-socket %s\n", ES_VERSION);
        return 0;
    }
    const struct subcommand *s = find(argv[1]);
    if (s == NULL)
        return unknown("eventlog-socket", argv[1]);
    return s->fn(argc - 1, argv + 1);
}
