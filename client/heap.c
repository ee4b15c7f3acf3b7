/* `eventlog-socket heap ADDR|FILE (--hp OUT.hp | --csv OUT.csv)`: the heap
 * profile out of an eventlog, live or recorded: the censuses
 * (HEAP_PROF_SAMPLE_*) in the RTS's classic .hp format, which hp2ps and
 * hp2pretty read, and/or as CSV rows (time, label, bytes). Each census is
 * written and flushed as soon as it is complete, and the .hp file is ended
 * properly however the run stops (end of stream, Ctrl-C), so it is usable
 * at any moment. Runs on one thread, the libuv loop's. */
#include "model.h"
#include "opts.h"
#include "rtsopts.h"
#include "session.h"
#include "subcommands.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct heap {
    struct es_session ses;
    struct es_model *model;
    const char *hp_path, *csv_path;
    FILE *hp, *csv;
    bool hp_started;
    uint64_t written; /* censuses written */
    uint64_t last_time;
    bool stopped;
    bool mode_told; /* the note on a mode the eventlog cannot carry is out */
    int status;
    struct es_heapmode hm; /* whether a heap profile can come at all */
    bool told_ghc90;
    bool opened; /* open_outputs ran */
};

static void heap_usage(FILE *f) {
    fprintf(f, "usage: eventlog-socket heap ADDR|FILE (--hp OUT.hp | --csv OUT.csv)\n"
               "                            [--connect-timeout S] [--retry]\n"
               "Writes the heap profile (the censuses of a program run with +RTS -hT, or\n"
               "another -h mode) from a live program or a recorded eventlog: --hp in the\n"
               "RTS's .hp format (for hp2ps, hp2pretty), --csv one row per (time_s, label,\n"
               "bytes); - for stdout. Times are seconds since the program started. Exit\n"
               "status 0 when the stream was complete, 1 when it was cut or had no heap\n"
               "profile, 2 on errors.\n");
}

/* Text for a quoted .hp field: no quotes or line breaks inside. */
static void hp_text(char *s) {
    for (; *s; s++)
        if (*s == '"')
            *s = '\'';
        else if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
}

static FILE *open_out(const char *path);

/* The output files are created with the first census (or at the end of a
 * stream that has a heap profile), so a stream without one leaves none.
 * False after saying why one cannot be created. */
static bool open_outputs(struct heap *h) {
    if (h->opened)
        return h->hp != NULL || h->csv != NULL;
    h->opened = true;
    if ((h->hp_path && (h->hp = open_out(h->hp_path)) == NULL) ||
        (h->csv_path && (h->csv = open_out(h->csv_path)) == NULL))
        return false;
    if (h->csv)
        fprintf(h->csv, "time_s,label,bytes\n");
    return true;
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

static void hp_start(struct heap *h) {
    if (h->hp == NULL || h->hp_started)
        return;
    const struct es_model *m = h->model;
    char job[1300];
    hp_job(m, job, sizeof job);
    hp_text(job);
    char date[64] = "";
    time_t start = m->wall_start_s ? (time_t)m->wall_start_s : time(NULL);
    struct tm tm;
    if (localtime_r(&start, &tm) != NULL)
        strftime(date, sizeof date, "%a %b %d %H:%M %Y", &tm);
    fprintf(h->hp,
            "JOB \"%s\"\nDATE \"%s\"\nSAMPLE_UNIT \"seconds\"\nVALUE_UNIT \"bytes\"\n"
            "BEGIN_SAMPLE 0.000000\nEND_SAMPLE 0.000000\n",
            job, date);
    h->hp_started = true;
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

static void stop(struct heap *h, int status, const char *why);

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
static void hp_label(const struct heap *h, char *out, size_t size, uint32_t label) {
    const struct es_model *m = h->model;
    snprintf(out, size, "%s", es_model_label(m, label));
    size_t len = ccs_length(m);
    if (m->breakdown == ES_MODEL_BY_CCS && strlen(out) > len && len < size)
        snprintf(out + len - 4, size - (len - 4), "...");
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
}

/* Once, at the end, when a retainer or biographical profile gave no
 * sample (es_model_breakdown_lack). */
static void tell_mode(struct heap *h) {
    const struct es_model *m = h->model;
    const char *lack = es_model_breakdown_lack(m->breakdown, m->nlabels > 0);
    if (h->mode_told || !m->heap_prof || lack == NULL)
        return;
    h->mode_told = true;
    fprintf(stderr, "eventlog-socket: %s: %s\n", h->ses.conn->name, lack);
}

static void write_census(struct heap *h) {
    if (!open_outputs(h)) {
        stop(h, 2, "cannot create the output file");
        return;
    }
    const struct es_model *m = h->model;
    const struct es_model_census *c = &m->cur;
    double t = (double)c->time / 1e9;
    if (h->hp) {
        hp_start(h);
        fprintf(h->hp, "BEGIN_SAMPLE %f\n", t);
        for (size_t i = 0; i < c->n; i++) {
            char label[600];
            hp_label(h, label, sizeof label, c->e[i].label);
            fprintf(h->hp, "%s\t%llu\n", label, (unsigned long long)c->e[i].bytes);
        }
        fprintf(h->hp, "END_SAMPLE %f\n", t);
        fflush(h->hp);
    }
    if (h->csv) {
        for (size_t i = 0; i < c->n; i++) {
            fprintf(h->csv, "%f,", t);
            csv_field(h->csv, es_model_label(m, c->e[i].label));
            fprintf(h->csv, ",%llu\n", (unsigned long long)c->e[i].bytes);
        }
        fflush(h->csv);
    }
    if (c->time > h->last_time)
        h->last_time = c->time;
    h->written++;
}

static void stop(struct heap *h, int status, const char *why) {
    if (h->stopped)
        return;
    h->stopped = true;
    h->status = status;
    es_session_close(&h->ses);
    const struct es_conn *c = h->ses.conn;
    bool have_header = c->stream.state != ES_STREAM_HEADER;
    if (!have_header) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, why);
        return;
    }
    tell_mode(h);
    const struct es_model *m = h->model;
    bool profile = m->heap_prof || h->written > 0 || es_heapmode_verdict(&h->hm) == ES_HEAPMODE_ON;
    if (!profile && !c->is_file) {
        /* Live: nothing written, no file created. */
        fprintf(stderr,
                "eventlog-socket: %s: no heap profile in the stream (%s): run the program with "
                "+RTS -hT (or another -h mode); nothing written\n",
                c->name, why);
        if (h->status == 0)
            h->status = 1;
        return;
    }
    if (status != 2 && !open_outputs(h) && h->status != 2)
        h->status = 2;
    /* The .hp file ends like the RTS ends it: an empty sample at the end. */
    if (h->hp) {
        hp_start(h);
        uint64_t end = h->model->now > h->last_time ? h->model->now : h->last_time;
        fprintf(h->hp, "BEGIN_SAMPLE %f\nEND_SAMPLE %f\n", (double)end / 1e9, (double)end / 1e9);
    }
    int werr = 0;
    FILE *files[2] = {h->hp, h->csv};
    for (int i = 0; i < 2; i++)
        if (files[i] && (fflush(files[i]) != 0 || ferror(files[i])) && werr == 0)
            werr = errno ? errno : EIO;
    if (h->hp && h->hp != stdout && fclose(h->hp) != 0 && werr == 0)
        werr = errno;
    if (h->csv && h->csv != stdout && fclose(h->csv) != 0 && werr == 0)
        werr = errno;
    h->hp = h->csv = NULL;
    if (werr) {
        fprintf(stderr, "eventlog-socket: %s: cannot write the heap profile: %s\n", c->name,
                strerror(werr));
        h->status = 2;
        return;
    }
    if (!profile) {
        /* A recorded eventlog: the file ends as the RTS's would, empty. */
        fprintf(stderr,
                "eventlog-socket: %s: no heap profile in the stream (%s): run the program with "
                "+RTS -hT (or another -h mode)\n",
                c->name, why);
        if (h->status == 0)
            h->status = 1;
        return;
    }
    char to[1100];
    snprintf(to, sizeof to, "%s%s%s", h->hp_path ? h->hp_path : "",
             h->hp_path && h->csv_path ? " and " : "", h->csv_path ? h->csv_path : "");
    fprintf(stderr, "eventlog-socket: %s: %llu heap samples to %s: %s\n", c->name,
            (unsigned long long)h->written, to, why);
}

static void on_header(struct es_conn *c, void *ctx) {
    struct heap *h = ctx;
    es_model_header(h->model, &c->stream.header);
    es_heapmode_header(&h->hm, &c->stream.header, c->is_file ? 0 : c->peer_pid);
}

/* Live: stop as soon as the stream (or on GHC 9.0 the server's process)
 * says no heap profile can come; on 9.0 say when it will. */
static void judge_live(struct heap *h) {
    const struct es_conn *c = h->ses.conn;
    if (c->is_file || h->stopped)
        return;
    enum es_heapmode_verdict v = es_heapmode_verdict(&h->hm);
    if (v == ES_HEAPMODE_OFF && h->written == 0 && !h->model->heap_prof) {
        stop(h, 1, "the program runs without a heap profiling mode");
        return;
    }
    if (h->hm.no_flush && !h->told_ghc90) {
        h->told_ghc90 = true;
        fprintf(stderr,
                "eventlog-socket: %s: %s: the heap profile is written when the program "
                "exits\n",
                c->name, ES_MODEL_GHC90_NOTE);
    }
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    (void)c;
    (void)offset;
    struct heap *h = ctx;
    uint64_t before = h->model->censuses;
    es_model_event(h->model, ev);
    es_heapmode_event(&h->hm, ev);
    if (h->model->censuses != before)
        write_census(h);
}

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    (void)c;
    (void)data;
    (void)n;
    judge_live(ctx);
}

static void on_skip(struct es_conn *c, const struct es_stream_skip *run, void *ctx) {
    (void)c;
    es_model_skip(((struct heap *)ctx)->model, run);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct heap *h = ctx;
    char why[700];
    switch (how) {
    case ES_CONN_COMPLETE:
        es_model_end(h->model);
        if (h->model->cut) {
            /* A recording whose end marker record added (client/blocks.h). */
            snprintf(why, sizeof why, "cut: the recording was cut (%s)", h->model->cut_why);
            stop(h, 1, why);
        } else {
            stop(h, 0, "complete, the program's end marker arrived");
        }
        break;
    case ES_CONN_CUT:
        snprintf(why, sizeof why, "cut: the stream ended without its end marker (%s)", c->error);
        stop(h, 1, why);
        break;
    case ES_CONN_FAILED:
        stop(h, 2, c->error);
        break;
    }
}

static void on_signal(void *ctx, int signum) {
    struct heap *h = ctx;
    stop(h, 1, signum == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
}

static FILE *open_out(const char *path) {
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "eventlog-socket heap: cannot create %s: %s\n", path, strerror(errno));
    return f;
}

/* Whether `path` can be created or written, checked up front: the file
 * itself is created only once there is a heap profile to write. */
static bool can_create(const char *path) {
    if (strcmp(path, "-") == 0)
        return true;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (access(path, F_OK) == 0 ? access(path, W_OK) == 0 : access(dir, W_OK | X_OK) == 0)
        return true;
    fprintf(stderr, "eventlog-socket heap: cannot create %s: %s\n", path, strerror(errno));
    return false;
}

int es_heap_main(int argc, char **argv) {
    static struct heap heap;
    struct heap *h = &heap;
    es_session_init(&h->ses);
    h->ses.opt.allow_file = true;
    const char *src = NULL;
    const struct es_opt opts[] = {
        {"--hp", NULL, ES_OPT_VALUE, &h->hp_path, 0, "%s needs a file name", NULL},
        {"--csv", NULL, ES_OPT_VALUE, &h->csv_path, 0, "%s needs a file name", NULL},
        {0}};
    const struct es_opts_spec spec = {.cmd = "heap",
                                      .opts = opts,
                                      .conn = &h->ses.opt,
                                      .usage = heap_usage,
                                      .pos = &src,
                                      .npos = 1,
                                      .too_many = "one source only (%s, then %s)",
                                      .pos_first = true};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    if (src == NULL || (h->hp_path == NULL && h->csv_path == NULL)) {
        heap_usage(stderr);
        return 2;
    }
    if (h->hp_path && h->csv_path && strcmp(h->hp_path, "-") == 0 &&
        strcmp(h->csv_path, "-") == 0) {
        fprintf(stderr, "eventlog-socket heap: --hp and --csv cannot both be stdout\n");
        return 2;
    }
    h->model = malloc(sizeof *h->model);
    if (h->model == NULL) {
        fprintf(stderr, "eventlog-socket heap: out of memory\n");
        return 2;
    }
    es_model_init(h->model);
    if ((h->hp_path && !can_create(h->hp_path)) || (h->csv_path && !can_create(h->csv_path)))
        return 2;

    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_bytes = on_bytes,
                                   .on_end = on_end,
                                   .ctx = h,
                                   .want = h->model->want,
                                   .window = h->model->window,
                                   .on_skip = on_skip};
    if (es_session_open(&h->ses, src, &cb) != 0) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", h->ses.conn->name, h->ses.conn->error);
        return 2;
    }
    es_session_signals(&h->ses, true, on_signal, h);
    uv_run(h->ses.loop, UV_RUN_DEFAULT);
    es_session_finish(&h->ses);
    es_model_destroy(h->model);
    free(h->model);
    return h->status;
}
