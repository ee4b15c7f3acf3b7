/* SPDX-License-Identifier: BSD-3-Clause */
#include "help.h"

#include <string.h>

const struct es_help_page *es_help_page(const char *cmd) {
    for (int i = 0; i < es_help_npages; i++)
        if (strcmp(es_help_pages[i].cmd, cmd) == 0)
            return &es_help_pages[i];
    return NULL;
}

void es_help_print(FILE *f, const struct es_help_page *p) {
    fputs(p->usage, f);
    fputs(p->text, f);
}

void es_help_usage(FILE *f, const struct es_help_page *p) {
    fputs(p->usage, f);
    if (p->cmd[0] != '\0')
        fprintf(f, "`eventlog-socket %s --help` tells more.\n", p->cmd);
    else
        fprintf(f, "`eventlog-socket --help` lists the subcommands.\n");
}

static const char *arg_in(const struct es_help_flag *flags, const char *flag) {
    for (const struct es_help_flag *h = flags; h->flag != NULL; h++)
        if (strcmp(h->flag, flag) == 0)
            return h->arg;
    return NULL;
}

const char *es_help_arg(const struct es_help_page *p, const char *flag) {
    const char *arg = arg_in(p->flags, flag);
    if (arg == NULL && p != &es_help_top)
        arg = arg_in(es_help_common_flags, flag);
    return arg;
}

/* Longer words than this are near nothing. */
#define MAX_WORD 64

unsigned es_help_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > MAX_WORD || m > MAX_WORD)
        return MAX_WORD + 1;
    /* Three rows of the table: two back (for swaps), the last, this one. */
    unsigned rows[3][MAX_WORD + 1];
    unsigned *two = rows[0], *last = rows[1], *row = rows[2];
    for (size_t j = 0; j <= m; j++)
        last[j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++) {
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= m; j++) {
            unsigned best = last[j - 1] + (a[i - 1] != b[j - 1]);
            if (last[j] + 1 < best)
                best = last[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                two[j - 2] + 1 < best)
                best = two[j - 2] + 1;
            row[j] = best;
        }
        unsigned *t = two;
        two = last;
        last = row;
        row = t;
    }
    return last[m];
}

/* Choosing the nearest of some candidates: the only one that begins with
 * the word (of three letters or more, dashes aside), else the one at the
 * smallest distance, when that is 1 or 2 and at most a third of its
 * length (a one-letter option is near nothing). */
struct nearest {
    const char *word;
    size_t letters;     /* the word's length without leading dashes */
    const char *prefix; /* the one candidate it begins, if one */
    int prefixes;
    const char *best;
    unsigned distance;
};

static void consider(struct nearest *n, const char *cand) {
    if (n->letters >= 3 && strncmp(cand, n->word, strlen(n->word)) == 0) {
        n->prefix = cand;
        n->prefixes++;
    }
    unsigned d = es_help_distance(n->word, cand);
    if (d < n->distance && d <= 2 && 3 * d <= strlen(cand)) {
        n->best = cand;
        n->distance = d;
    }
}

static void nearest_init(struct nearest *n, const char *word) {
    *n = (struct nearest){.word = word, .distance = MAX_WORD + 1};
    n->letters = strlen(word) - strspn(word, "-");
}

static const char *nearest_result(const struct nearest *n) {
    return n->prefixes == 1 ? n->prefix : n->best;
}

const char *es_help_nearest_cmd(const char *word) {
    struct nearest n;
    nearest_init(&n, word);
    for (int i = 0; i < es_help_npages; i++)
        consider(&n, es_help_pages[i].cmd);
    consider(&n, "help");
    return nearest_result(&n);
}

const char *es_help_nearest_word(const char *word, const char *const *words) {
    struct nearest n;
    nearest_init(&n, word);
    for (const char *const *w = words; *w != NULL; w++)
        consider(&n, *w);
    return nearest_result(&n);
}

const char *es_help_nearest_flag(const struct es_help_page *p, const char *word) {
    struct nearest n;
    nearest_init(&n, word);
    for (const struct es_help_flag *h = p->flags; h->flag != NULL; h++)
        consider(&n, h->flag);
    if (p != &es_help_top)
        for (const struct es_help_flag *h = es_help_common_flags; h->flag != NULL; h++)
            consider(&n, h->flag);
    return nearest_result(&n);
}
