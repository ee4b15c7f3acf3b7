#include "opts.h"

#include <stdlib.h>
#include <string.h>

/* The message after "eventlog-socket CMD: ", formatted with up to two
 * words (a spec's format takes as many as it names). */
static void say(const struct es_opts_spec *sp, const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "eventlog-socket %s: ", sp->cmd);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
}

static const struct es_opt *find(const struct es_opts_spec *sp, const char *word) {
    for (const struct es_opt *o = sp->opts; o != NULL && o->name != NULL; o++)
        if (strcmp(word, o->name) == 0 || (o->alias != NULL && strcmp(word, o->alias) == 0))
            return o;
    return NULL;
}

static int unknown(const struct es_opts_spec *sp, const char *word) {
    say(sp, sp->unknown ? sp->unknown : "unknown option %s", word, NULL);
    sp->usage(stderr);
    return 2;
}

/* The option at argv[*i], and its value if it takes one. */
static int take(const struct es_opts_spec *sp, const struct es_opt *o, int argc, char **argv,
                int *i) {
    const char *word = argv[*i];
    if (o->kind == ES_OPT_FLAG) {
        *(bool *)o->out = true;
        return -1;
    }
    if (*i + 1 >= argc) {
        if (o->missing == NULL)
            return unknown(sp, word);
        say(sp, o->missing, word, NULL);
        return 2;
    }
    const char *value = argv[++*i];
    if (o->kind == ES_OPT_VALUE) {
        *(const char **)o->out = value;
        return -1;
    }
    if (o->kind == ES_OPT_LIST) {
        struct es_opt_list *l = o->out;
        if (l->n >= ES_OPT_LIST_MAX) {
            say(sp, "%s: at most 16 times", word, NULL);
            return 2;
        }
        l->v[l->n++] = value;
        return -1;
    }
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end != '\0' || !(v > 0) || v > o->max) {
        say(sp, o->bad ? o->bad : o->missing, o->name, value);
        return 2;
    }
    *(double *)o->out = v;
    return -1;
}

int es_opts_parse(const struct es_opts_spec *sp, int argc, char **argv) {
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        int k = es_conn_parse_option(sp->conn, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k > 0)
            continue;
        const char *word = argv[i];
        if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
            sp->usage(stdout);
            return 0;
        }
        const struct es_opt *o = find(sp, word);
        if (o != NULL) {
            int r = take(sp, o, argc, argv, &i);
            if (r >= 0)
                return r;
        } else if (word[0] == '-' && word[1] != '\0') {
            /* "-" alone is a positional argument: stdin or stdout. */
            return unknown(sp, word);
        } else if (npos < sp->npos) {
            sp->pos[npos++] = word;
        } else if (sp->too_many == NULL) {
            say(sp, "one address only (%s, then %s)", sp->pos[0], word);
            return 2;
        } else {
            if (sp->pos_first)
                say(sp, sp->too_many, sp->pos[0], word);
            else
                say(sp, sp->too_many, word, NULL);
            return 2;
        }
    }
    if (npos < sp->required) {
        sp->usage(stderr);
        return 2;
    }
    return -1;
}
