/* SPDX-License-Identifier: BSD-3-Clause */
/* The command's help, made at build time from the manual page's source
 * (docs/man/eventlog-socket.1.scd, by scripts/man.awk, into
 * build/gen/help.c): each subcommand's usage lines, its --help text and the
 * options its manual documents, with their values; and what usage errors
 * use from them: the usage lines, the value an option takes, the nearest
 * subcommand or option to a word that is none.
 *
 * Thread ownership: read-only data; the functions are pure apart from
 * writing to the FILE given. */
#ifndef ES_HELP_H
#define ES_HELP_H

#include <stdio.h>

struct es_help_flag {
    const char *flag; /* "--output" */
    const char *arg;  /* "FILE", or "" for an option without a value */
};

struct es_help_page {
    const char *cmd;   /* "record"; "" for the command itself */
    const char *usage; /* "usage: eventlog-socket record ADDR ...\n", each form a line */
    const char *text;  /* the rest of --help */
    const struct es_help_flag *flags; /* its own options, ended by {NULL, NULL} */
};

/* Generated (build/gen/help.c). */
extern const struct es_help_page es_help_top;
extern const struct es_help_page es_help_pages[]; /* one per subcommand */
extern const int es_help_npages;
/* The options every subcommand takes (the manual's OPTIONS). */
extern const struct es_help_flag es_help_common_flags[];

/* The page of subcommand `cmd`, or NULL. */
const struct es_help_page *es_help_page(const char *cmd);

/* --help: the usage lines and the text. */
void es_help_print(FILE *f, const struct es_help_page *p);

/* After a usage error's message: the usage lines and where to read more. */
void es_help_usage(FILE *f, const struct es_help_page *p);

/* The value `flag` takes on page `p` or as a common option ("FILE", "" for
 * none), or NULL when the manual does not document it there. */
const char *es_help_arg(const struct es_help_page *p, const char *flag);

/* The subcommand nearest to `word`, or NULL when none is near. */
const char *es_help_nearest_cmd(const char *word);
/* The one of `words` (NULL-terminated) nearest to `word` by the same rule,
 * or NULL: a subcommand's own words (control's start, stop, census). */
const char *es_help_nearest_word(const char *word, const char *const *words);

/* The option of page `p` (its own, or a common one for a subcommand)
 * nearest to `word`, or NULL. */
const char *es_help_nearest_flag(const struct es_help_page *p, const char *word);

/* The edit distance between `a` and `b`: insertions, deletions,
 * substitutions and swaps of neighbours, each 1. */
unsigned es_help_distance(const char *a, const char *b);

#endif
