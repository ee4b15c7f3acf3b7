/* The subcommands' command lines: one parser for all of them, driven by a
 * table of each subcommand's options, so that every subcommand treats
 * --help, the connection options (es_conn_parse_option), unknown options,
 * missing values and extra arguments the same way, each with its own
 * words in the messages.
 *
 * Thread ownership: the main thread, before the subcommand starts. */
#ifndef ES_OPTS_H
#define ES_OPTS_H

#include "source/conn.h"

#include <stdbool.h>
#include <stdio.h>

enum es_opt_kind {
    ES_OPT_FLAG,    /* sets a bool */
    ES_OPT_VALUE,   /* takes the next word (const char *) */
    ES_OPT_SECONDS, /* takes the next word as seconds (double), > 0 and <= max */
    ES_OPT_LIST,    /* takes the next word, each time it is given (struct es_opt_list *) */
};

/* The words of an ES_OPT_LIST option, in order. */
#define ES_OPT_LIST_MAX 16
struct es_opt_list {
    const char *v[ES_OPT_LIST_MAX];
    int n;
};

struct es_opt {
    const char *name;  /* "--output" */
    const char *alias; /* "-o", or NULL */
    enum es_opt_kind kind;
    void *out;  /* bool *, const char **, double * or struct es_opt_list * by kind */
    double max; /* ES_OPT_SECONDS: the largest accepted */
    /* After "eventlog-socket CMD: ": when the value is missing (%s: the
     * option as written; NULL: the command's `unknown` message), and when
     * it is not a number of seconds (%s, %s: the option's name and the
     * word; NULL: `missing`). */
    const char *missing;
    const char *bad;
};

struct es_opts_spec {
    const char *cmd;              /* "record": messages begin "eventlog-socket record: " */
    const struct es_opt *opts;    /* ended by an entry whose name is NULL */
    struct es_conn_options *conn; /* --retry and --connect-timeout go here */
    void (*usage)(FILE *);
    /* An unknown option (NULL: "unknown option %s"); the usage follows it
     * on stderr. */
    const char *unknown;
    const char **pos; /* where the positional arguments go, in order */
    int npos;
    int required; /* positional arguments that must be there, else the usage on stderr */
    /* One positional argument too many: with "%s, then %s" (the first
     * one and the extra one) when pos_first, else "%s" (the extra one).
     * NULL: "one address only (%s, then %s)". */
    const char *too_many;
    bool pos_first;
};

/* Parse argv[1..argc-1] into the spec's places. Returns -1 when the
 * subcommand should go on, or its exit status: 0 after --help (the usage
 * on stdout), 2 after a message on stderr. */
int es_opts_parse(const struct es_opts_spec *sp, int argc, char **argv);

#endif
