/* SPDX-License-Identifier: BSD-3-Clause */
/* What `heap` writes (heap_write.h): the .hp format as the RTS writes it,
 * and the CSV rows. */
#include "heap_write.h"

#include "csv.h"
#include "format/es_utf8.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Text for a quoted .hp field: no quotes or line breaks inside. */
static void hp_text(char *s) {
    for (; *s; s++)
        if (*s == '"')
            *s = '\'';
        else if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
}

/* JOB as the RTS writes it: the program's name alone, and in a profiling
 * RTS its arguments, then " +RTS" and its RTS options (those it got from
 * GHCRTS or -with-rtsopts are not in the stream's arguments). */
static void hp_job(const struct es_model *m, char *job, size_t size) {
    /* A stream without the program's name (a start from Haskell on GHC
     * 9.0 loses it) says so rather than naming it "program". */
    snprintf(job, size, "%s", m->program[0] ? m->program : "(program not named in the eventlog)");
    if (!es_model_rts_profiled(m->rts_id))
        return;
    char rts[1100] = "";
    size_t jl = strlen(job), rl = 0;
    bool in_rts = false, all_prog = false;
    char args[sizeof m->args];
    snprintf(args, sizeof args, "%s", m->args);
    char *save = NULL;
    strtok_r(args, " ", &save); /* argv[0] */
    for (char *w = strtok_r(NULL, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
        if (!all_prog && strcmp(w, "--RTS") == 0) {
            all_prog = true;
            continue;
        }
        if (!all_prog && strcmp(w, "+RTS") == 0) {
            in_rts = true;
            continue;
        }
        if (!all_prog && strcmp(w, "-RTS") == 0) {
            in_rts = false;
            continue;
        }
        if (in_rts && !all_prog)
            rl += (size_t)snprintf(rts + rl, rl < sizeof rts ? sizeof rts - rl : 0, " %s", w);
        else
            jl += (size_t)snprintf(job + jl, jl < size ? size - jl : 0, " %s", w);
        if (rl >= sizeof rts)
            rl = sizeof rts - 1;
        if (jl >= size)
            jl = size - 1;
    }
    snprintf(job + jl, size - jl, " +RTS%s", rts);
}

/* The RTS's -L: how long a cost-centre stack may be in its .hp (default
 * 25), from the program's +RTS options as the stream gives them. */
static size_t ccs_length(const struct es_model *m) {
    size_t len = 25;
    bool rts = false;
    char args[sizeof m->args];
    snprintf(args, sizeof args, "%s", m->args);
    char *save = NULL;
    for (char *w = strtok_r(args, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (strcmp(w, "+RTS") == 0 || strcmp(w, "-RTS") == 0)
            rts = w[0] == '+';
        else if (rts && w[0] == '-' && w[1] == 'L' && w[2] >= '0' && w[2] <= '9')
            len = (size_t)strtoul(w + 2, NULL, 10);
    }
    return len < 4 ? 4 : len;
}

/* A label as hp2ps reads it: the RTS writes labels as they are, but
 * hp2ps ends a label at white space, reads one that starts with '"' as a
 * string and one that is a word of the format (BEGIN_SAMPLE, JOB, ...) as
 * that word, and has no empty label. So each white-space character
 * becomes '_', and so does a leading '"'; an empty label is "_"; and a
 * label so changed, or a format word, is renamed by the model's rule
 * (model.h, "Census labels": a suffix from the hash of label `of`), so
 * that it is no other label's line. Any other label, every one the RTS's
 * own modes make, is written as the RTS writes it. */
static void hp_readable(char *out, size_t size, const char *of) {
    static const char *const words[] = {"BEGIN_SAMPLE", "END_SAMPLE", "JOB", "DATE",
                                        "SAMPLE_UNIT",  "VALUE_UNIT", "MARK"};
    bool changed = false;
    for (char *p = out; *p; p++)
        if (strchr(" \t\n\v\f\r", *p) != NULL) { /* hp2ps's isspace, in the C locale */
            *p = '_';
            changed = true;
        }
    if (out[0] == '"') {
        out[0] = '_';
        changed = true;
    }
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        changed |= strcmp(out, words[i]) == 0;
    if (out[0] == '\0') {
        snprintf(out, size, "_");
        changed = true;
    }
    if (changed)
        es_model_label_rename(out, size, out, of);
}

/* A census label as the RTS's .hp writes it: a cost-centre stack longer
 * than -L is cut to its first L-4 characters and "..." (rts/ProfHeap.c,
 * fprint_ccs; here between two UTF-8 characters, so the text stays
 * valid); its "(N)" stack number is not in the eventlog. Then made
 * readable by hp2ps (hp_readable). */
static void hp_label(const struct es_model *m, char *out, size_t size, uint32_t label) {
    const char *of = es_model_label(m, label);
    snprintf(out, size, "%s", of);
    size_t len = ccs_length(m);
    if (m->breakdown == ES_MODEL_BY_CCS && strlen(out) > len && len < size)
        strcpy(out + es_utf8_cut(out, len - 4), "...");
    hp_readable(out, size, of);
}

void es_heapwrite_hp_begin(FILE *f, const struct es_model *m) {
    char job[1300];
    hp_job(m, job, sizeof job);
    hp_text(job);
    char date[64] = "";
    time_t start = m->wall_start_s ? (time_t)m->wall_start_s : time(NULL);
    struct tm tm;
    if (localtime_r(&start, &tm) != NULL)
        strftime(date, sizeof date, "%a %b %d %H:%M %Y", &tm);
    fprintf(f,
            "JOB \"%s\"\nDATE \"%s\"\nSAMPLE_UNIT \"seconds\"\nVALUE_UNIT \"bytes\"\n"
            "BEGIN_SAMPLE 0.000000\nEND_SAMPLE 0.000000\n",
            job, date);
}

void es_heapwrite_hp_sample(FILE *f, const struct es_model *m, const struct es_model_census *c) {
    double t = (double)c->time / 1e9;
    fprintf(f, "BEGIN_SAMPLE %f\n", t);
    for (size_t i = 0; i < c->n; i++) {
        char label[600];
        hp_label(m, label, sizeof label, c->e[i].label);
        fprintf(f, "%s\t%llu\n", label, (unsigned long long)c->e[i].bytes);
    }
    fprintf(f, "END_SAMPLE %f\n", t);
    fflush(f);
}

void es_heapwrite_hp_end(FILE *f, uint64_t end) {
    fprintf(f, "BEGIN_SAMPLE %f\nEND_SAMPLE %f\n", (double)end / 1e9, (double)end / 1e9);
}

void es_heapwrite_csv_begin(FILE *f) {
    fprintf(f, "time_s,label,bytes\n");
}

void es_heapwrite_csv_sample(FILE *f, const struct es_model *m, const struct es_model_census *c) {
    for (size_t i = 0; i < c->n; i++) {
        /* Exact to the nanosecond, and the label cleaned, as `table
         * census` writes them. */
        es_csv_time(f, c->time);
        fputc(',', f);
        es_csv_str(f, es_model_label(m, c->e[i].label));
        fprintf(f, ",%llu\n", (unsigned long long)c->e[i].bytes);
    }
    fflush(f);
}
