/* SPDX-License-Identifier: BSD-3-Clause */
#include "opts.h"

#include "help.h"
#include "source/units.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* The options this parser and es_conn_parse_option handle for every
 * subcommand: the manual's OPTIONS must be these. */
static const struct {
    const char *name;
    bool value;
} common[] = {{"-h", false}, {"--help", false}, {"--retry", false}, {"--connect-timeout", true}};

/* The message after "eventlog-socket CMD: ", formatted with up to two
 * words (a spec's format takes as many as it names). The format is not a
 * literal (-Wformat-nonliteral): it is one of a spec's messages
 * (client/opts.h), each with at most two %s. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void say(const struct es_opts_spec *sp, const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "eventlog-socket %s: ", sp->cmd);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
}
#pragma GCC diagnostic pop

/* A message about the words of the command line, then the usage. */
static int usage_error(const struct es_opts_spec *sp, const char *fmt, const char *a,
                       const char *b) {
    say(sp, fmt, a, b);
    es_help_usage(stderr, es_help_page(sp->cmd));
    return 2;
}

static const struct es_opt *find(const struct es_opts_spec *sp, const char *word) {
    for (const struct es_opt *o = sp->opts; o != NULL && o->name != NULL; o++)
        if (strcmp(word, o->name) == 0 || (o->alias != NULL && strcmp(word, o->alias) == 0))
            return o;
    return NULL;
}

static int unknown(const struct es_opts_spec *sp, const char *word) {
    const struct es_help_page *p = es_help_page(sp->cmd);
    /* --http=HOST:PORT: the option is known, the "=" is not. */
    const char *eq = strchr(word, '=');
    if (eq != NULL) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - word), word);
        const char *arg = es_help_arg(p, name);
        if (arg != NULL && arg[0] != '\0')
            return usage_error(sp, "unknown option %s (write %s VALUE, with a space)", word, name);
    }
    const char *near = es_help_nearest_flag(p, word);
    if (near != NULL)
        return usage_error(sp, "unknown option %s; did you mean %s?", word, near);
    return usage_error(sp, "unknown option %s", word, NULL);
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
        if (o->missing != NULL)
            say(sp, o->missing, word, NULL);
        else
            say(sp, "%s needs a value (%s)", word, es_help_arg(es_help_page(sp->cmd), o->name));
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
    if (!es_units_seconds(value, o->max, false, (double *)o->out)) {
        say(sp, o->bad ? o->bad : o->missing, o->name, value);
        return 2;
    }
    return -1;
}

/* One option of the table against the manual: documented, with a value
 * exactly when it takes one. */
static bool documented_one(const struct es_opts_spec *sp, const struct es_help_page *p,
                           const char *name, bool value) {
    const char *arg = es_help_arg(p, name);
    if (arg != NULL && (arg[0] != '\0') == value)
        return true;
    fprintf(stderr, "eventlog-socket %s: %s is %s in docs/man/eventlog-socket.1.scd\n", sp->cmd,
            name, arg == NULL ? "not documented" : "documented with another value");
    return false;
}

/* The manual's options of the subcommand are the table's, and its common
 * options the ones handled for every subcommand. */
static bool documented(const struct es_opts_spec *sp, const struct es_help_page *p) {
    bool ok = true;
    for (const struct es_opt *o = sp->opts; o != NULL && o->name != NULL; o++) {
        ok &= documented_one(sp, p, o->name, o->kind != ES_OPT_FLAG);
        if (o->alias != NULL)
            ok &= documented_one(sp, p, o->alias, o->kind != ES_OPT_FLAG);
    }
    for (const struct es_help_flag *h = p->flags; h->flag != NULL; h++)
        if (find(sp, h->flag) == NULL) {
            fprintf(stderr, "eventlog-socket %s: the manual documents %s, which it does not take\n",
                    sp->cmd, h->flag);
            ok = false;
        }
    size_t n = 0;
    for (const struct es_help_flag *h = es_help_common_flags; h->flag != NULL; h++, n++) {
        size_t k = 0;
        while (k < sizeof common / sizeof *common && strcmp(common[k].name, h->flag) != 0)
            k++;
        if (k == sizeof common / sizeof *common || common[k].value != (h->arg[0] != '\0')) {
            fprintf(stderr, "eventlog-socket: the manual's OPTIONS has %s, not handled so\n",
                    h->flag);
            ok = false;
        }
    }
    return ok && n == sizeof common / sizeof *common;
}

/* After the words: the positional arguments and options that must be
 * there. */
static int check_required(const struct es_opts_spec *sp, int npos) {
    if (npos < sp->required)
        return usage_error(sp, "%s is required", sp->pos_names[npos], NULL);
    char need[256] = "";
    size_t len = 0;
    for (const struct es_opt *o = sp->opts; o != NULL && o->name != NULL; o++) {
        if (!o->required)
            continue;
        assert(o->kind == ES_OPT_VALUE);
        if (*(const char **)o->out != NULL)
            return -1;
        len += (size_t)snprintf(need + len, sizeof need - len, "%s%s %s", len ? " or " : "",
                                o->name, es_help_arg(es_help_page(sp->cmd), o->name));
        assert(len < sizeof need);
    }
    if (len > 0)
        return usage_error(sp, "%s is required", need, NULL);
    return -1;
}

int es_opts_parse(const struct es_opts_spec *sp, int argc, char **argv) {
    const struct es_help_page *page = es_help_page(sp->cmd);
    assert(page != NULL);
    assert(documented(sp, page));
    assert(sp->required <= sp->npos && (sp->required == 0 || sp->pos_names != NULL));
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        int k = es_conn_parse_option(sp->conn, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k > 0)
            continue;
        const char *word = argv[i];
        if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
            es_help_print(stdout, page);
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
            return usage_error(sp, "one address only (%s, then %s)", sp->pos[0], word);
        } else if (sp->pos_first) {
            return usage_error(sp, sp->too_many, sp->pos[0], word);
        } else {
            return usage_error(sp, sp->too_many, word, NULL);
        }
    }
    return check_required(sp, npos);
}

int es_opts_parse_addr(const char *cmd, const struct es_opt *opts, struct es_conn_options *conn,
                       const char **addr, int argc, char **argv) {
    static const char *const names[] = {"ADDR"};
    const struct es_opts_spec spec = {.cmd = cmd,
                                      .opts = opts,
                                      .conn = conn,
                                      .pos = addr,
                                      .npos = 1,
                                      .required = 1,
                                      .pos_names = names};
    return es_opts_parse(&spec, argc, argv);
}
