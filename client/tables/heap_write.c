/* What `heap` writes (heap_write.h): the .hp format as the RTS writes it,
 * and the CSV rows. */
#include "heap_write.h"

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

/* Whether the RTS is a profiling one: its way, after the version in
 * RTS_IDENTIFIER ("GHC-9.6.6 rts_thr_p"), has a "_p" part. */
static bool profiled_rts(const char *rts_id) {
    const char *way = strchr(rts_id, ' ');
    for (const char *p = way ? strstr(way, "_p") : NULL; p != NULL; p = strstr(p + 2, "_p"))
        if (p[2] == '\0' || p[2] == '_')
            return true;
    return false;
}

/* JOB as the RTS writes it: the program's name alone, and in a profiling
 * RTS its arguments, then " +RTS" and its RTS options (those it got from
 * GHCRTS or -with-rtsopts are not in the stream's arguments). */
static void hp_job(const struct es_model *m, char *job, size_t size) {
    snprintf(job, size, "%s", m->program[0] ? m->program : "program");
    if (!profiled_rts(m->rts_id))
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

/* A census label as the RTS's .hp writes it: a cost-centre stack longer
 * than -L is cut to its first L-4 characters and "..." (rts/ProfHeap.c,
 * fprint_ccs); its "(N)" stack number is not in the eventlog. */
static void hp_label(const struct es_model *m, char *out, size_t size, uint32_t label) {
    snprintf(out, size, "%s", es_model_label(m, label));
    size_t len = ccs_length(m);
    if (m->breakdown == ES_MODEL_BY_CCS && strlen(out) > len && len < size)
        snprintf(out + len - 4, size - (len - 4), "...");
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
}

void es_heap_hp_begin(FILE *f, const struct es_model *m) {
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

void es_heap_hp_sample(FILE *f, const struct es_model *m, const struct es_model_census *c) {
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

void es_heap_hp_end(FILE *f, uint64_t end) {
    fprintf(f, "BEGIN_SAMPLE %f\nEND_SAMPLE %f\n", (double)end / 1e9, (double)end / 1e9);
}

/* A CSV field, quoted when it must be (RFC 4180). */
static void csv_field(FILE *f, const char *s) {
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void es_heap_csv_begin(FILE *f) {
    fprintf(f, "time_s,label,bytes\n");
}

void es_heap_csv_sample(FILE *f, const struct es_model *m, const struct es_model_census *c) {
    double t = (double)c->time / 1e9;
    for (size_t i = 0; i < c->n; i++) {
        fprintf(f, "%f,", t);
        csv_field(f, es_model_label(m, c->e[i].label));
        fprintf(f, ",%llu\n", (unsigned long long)c->e[i].bytes);
    }
    fflush(f);
}
