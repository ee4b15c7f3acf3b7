/* SPDX-License-Identifier: BSD-3-Clause */
/* The subcommands' command lines: one parser for all of them, driven by a
 * table of each subcommand's options, so that every subcommand treats
 * --help, the connection options (es_conn_parse_option), unknown options
 * (with the nearest one), missing arguments, options and values, and extra
 * arguments the same way, each with its own words in the messages. The
 * help and the usage come from the manual (help.h), whose options must be
 * the table's: the parser asserts it.
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
    ES_OPT_SECONDS, /* the next word as a duration in seconds (double), > 0, <= max */
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
    /* At least one of a subcommand's options marked required must be
     * given (one: "-o OUT.html is required"; more: "--hp OUT.hp or --csv
     * OUT.csv is required"). */
    bool required;
};

struct es_opts_spec {
    /* "record": messages begin "eventlog-socket record: ", and the help is
     * the manual's for it (es_help_page). */
    const char *cmd;
    const struct es_opt *opts;    /* ended by an entry whose name is NULL */
    struct es_conn_options *conn; /* --retry and --connect-timeout go here */
    const char **pos;             /* where the positional arguments go, in order */
    int npos;
    int required; /* positional arguments that must be there */
    /* What the required ones are called in a message ("ADDR is required"). */
    const char *const *pos_names;
    /* One positional argument too many: with "%s, then %s" (the first
     * one and the extra one) when pos_first, else "%s" (the extra one).
     * NULL: "one address only (%s, then %s)". */
    const char *too_many;
    bool pos_first;
};

/* Parse argv[1..argc-1] into the spec's places. Returns -1 when the
 * subcommand should go on, or its exit status: 0 after --help (the help on
 * stdout), 2 after a message on stderr (and the usage lines, when the
 * words themselves are wrong: unknown, missing or too many). */
int es_opts_parse(const struct es_opts_spec *sp, int argc, char **argv);

/* es_opts_parse for a subcommand whose one argument, required, is the
 * program's address (ADDR): `opts` (NULL: none), the connection's options
 * into `conn`, the address into *addr. */
int es_opts_parse_addr(const char *cmd, const struct es_opt *opts, struct es_conn_options *conn,
                       const char **addr, int argc, char **argv);

#endif
