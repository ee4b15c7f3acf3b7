/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket profile ADDR|FILE -o OUT [--duration D] [--since D]`:
 * a time profile, where the program spends its time, out of the
 * cost-centre samples the RTS streams (client/profile/prof.h), written as
 * folded stacks, speedscope's format or pprof's (client/profile/write.h;
 * OUT's ending picks).
 *
 * From a file: every sample (--since D: those of its last D seconds).
 * From a live program, like Go's net/http/pprof: it looks for a second
 * whether samples are coming; if not, it starts cost-centre profiling
 * (upstream's command 1), collects D (30 s by default) of program time
 * and stops it again (command 2), so the program is left as it was found;
 * if they are, it only collects. With --since D, the last D of the
 * program's window instead (the flight recorder's: the past, at once).
 * Runs on one thread, the libuv loop's. */
#include "profile/prof.h"
#include "profile/write.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "format/es_event_types.h"
#include "format/es_payload.h"
#include "model/model.h"
#include "opts.h"
#include "source/heapmode.h"
#include "source/outfile.h"
#include "source/session.h"
#include "source/units.h"
#include "subcommands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* How long a live program is watched for samples before profiling is
 * started: samples reach a client within a flush interval (100 ms). */
#define PROBE_MS 1000
/* After D: how long to wait for the samples of D's last moments. */
#define GRACE_MS 2000
/* How long the stop command may take to go out. */
#define STOP_SEND_MS 2000

enum phase { PROBE, COLLECT, STOPPING, DONE };

struct profile {
    struct es_session ses;
    struct es_prof prof;
    const char *out;
    enum es_profwrite_format fmt;
    double duration;
    const char *since;
    uint64_t since_ns;
    enum phase phase;
    uv_timer_t timer;
    bool timer_init;
    bool live;
    bool no_flush;     /* GHC 9.0's header: nothing arrives before 2 MiB */
    bool seen_sample;  /* a cost-centre sample arrived (any time) */
    bool started;      /* profile sent the start command */
    bool stop_sent;    /* and the stop */
    bool dash_p;       /* the program's RTS options start profiling (-p) */
    bool cost_centres; /* HEAP_PROF_COST_CENTRE came: a profiled program */
    uint64_t latest;   /* the latest program time seen */
    bool window;       /* --since on a live program: its window, not the live stream */
    const char *why;   /* how the collection ended, for the last line */
    int status;
};

static bool know_unprofiled(const struct profile *pr) {
    const struct es_conn *c = pr->ses.conn;
    return c->info.rts_ident[0] != '\0' && !es_model_rts_profiled(c->info.rts_ident) &&
           !pr->cost_centres;
}

#define BUILD_HINT                                                                                 \
    "build it with ghc -prof -fprof-auto (cabal: --enable-profiling) and run it with +RTS -l"

/* Why there is nothing to write, and what to do: on stderr. */
static void say_none(struct profile *pr) {
    const struct es_conn *c = pr->ses.conn;
    const struct es_prof *p = &pr->prof;
    if (know_unprofiled(pr))
        fprintf(stderr,
                "eventlog-socket: %s: no time profile: the program was not built with "
                "profiling (its RTS is %s); %s\n",
                c->name, c->info.rts_ident, BUILD_HINT);
    else if (p->outside > 0)
        fprintf(stderr,
                "eventlog-socket: %s: no time profile: none of the %llu cost-centre samples "
                "fell in the time asked for\n",
                c->name, (unsigned long long)p->outside);
    else if (pr->window)
        fprintf(stderr,
                "eventlog-socket: %s: no cost-centre sample in the window: was the program "
                "profiling then (+RTS -p)?\n",
                c->name);
    else if (pr->live && pr->no_flush)
        fprintf(stderr,
                "eventlog-socket: %s: no cost-centre sample arrived (%s: the samples come when "
                "the RTS hands over a full buffer or the program exits; profile a recording "
                "of the whole run instead)\n",
                c->name, ES_MODEL_GHC90_NOTE);
    else if (pr->live)
        fprintf(stderr,
                "eventlog-socket: %s: no cost-centre sample arrived: is the program built with "
                "profiling? %s\n",
                c->name, BUILD_HINT);
    else
        fprintf(stderr,
                "eventlog-socket: %s: no time profile in this eventlog: cost-centre profiling "
                "was not running (run a profiled program with +RTS -p -l, or run `eventlog-socket "
                "profile ADDR` while it runs)\n",
                c->name);
}

static void write_out(struct profile *pr) {
    struct es_prof *p = &pr->prof;
    const struct es_conn *c = pr->ses.conn;
    if (pr->prof.tail_ns)
        es_prof_tail_end(p);
    if (p->samples == 0) {
        say_none(pr);
        if (pr->status == 0)
            pr->status = 1;
        return;
    }
    FILE *f = es_outfile_fopen(pr->out, "w");
    int err = f ? es_profwrite(f, pr->fmt, p, c->info.program) : errno;
    if (f && fclose(f) != 0 && err == 0)
        err = errno;
    if (err) {
        fprintf(stderr, "eventlog-socket profile: cannot write %s: %s\n", pr->out, strerror(err));
        pr->status = 2;
        return;
    }
    /* The CPU time only with the tick (a profile started by a command
     * brings no PROF_BEGIN on some GHCs). */
    char cpu[64] = "";
    if (p->tick_ns)
        snprintf(cpu, sizeof cpu, ", %.3g s of CPU", (double)p->samples * (double)p->tick_ns / 1e9);
    fprintf(stderr,
            "eventlog-socket: %s: %llu samples (%u stacks%s) from program time %.3f s to %.3f s "
            "to %s%s%s\n",
            c->name, (unsigned long long)p->samples, (unsigned)p->nstacks, cpu,
            (double)p->first / 1e9, (double)p->last / 1e9, pr->out, pr->why ? ": " : "",
            pr->why ? pr->why : "");
    if (p->oom)
        fprintf(stderr, "eventlog-socket: %s: out of memory: the profile is incomplete\n", c->name);
    if (p->runs_dropped)
        fprintf(stderr,
                "eventlog-socket: %s: the time order holds the first %llu runs of samples; "
                "%llu later samples are left out of it%s\n",
                c->name, (unsigned long long)p->nruns, (unsigned long long)p->runs_dropped, "");
}

static void finish(struct profile *pr, const char *why) {
    if (pr->phase == DONE)
        return;
    pr->phase = DONE;
    if (pr->why == NULL)
        pr->why = why;
    es_session_close(&pr->ses);
    if (pr->timer_init && !uv_is_closing((uv_handle_t *)&pr->timer))
        uv_close((uv_handle_t *)&pr->timer, NULL);
    write_out(pr);
}

static void on_timer(uv_timer_t *t);

/* D is over (or the program exits, or the user interrupts): stop what
 * profile started, then write. */
static void end_collection(struct profile *pr, const char *why) {
    if (pr->phase == DONE || pr->phase == STOPPING)
        return;
    pr->why = why;
    if (pr->started && !pr->dash_p && !pr->ses.conn->ended) {
        pr->phase = STOPPING;
        if (es_conn_send_command(pr->ses.conn, EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING) ==
            0) {
            pr->stop_sent = true;
            uv_timer_start(&pr->timer, on_timer, STOP_SEND_MS, 0);
            return; /* on_sent finishes */
        }
        fprintf(stderr,
                "eventlog-socket: %s: could not send the stop: cost-centre profiling is still "
                "running (eventlog-socket profile started it)\n",
                pr->ses.conn->name);
    }
    finish(pr, why);
}

/* The program time now: from the wall clock where the stream has told how
 * the two map, else the latest event's. */
static uint64_t program_now(const struct profile *pr) {
    const struct es_prof *p = &pr->prof;
    if (p->have_wall) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t wall = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        int64_t t = (int64_t)p->wall_at + (wall - (int64_t)p->wall_ns);
        if (t > (int64_t)pr->latest)
            return (uint64_t)t;
    }
    return pr->latest;
}

/* After the probe: is profiling running? Start it if not, then collect D. */
static void decide(struct profile *pr) {
    struct es_conn *c = pr->ses.conn;
    if (!pr->no_flush && know_unprofiled(pr)) {
        fprintf(stderr,
                "eventlog-socket: %s: the program was not built with profiling (its RTS is %s), "
                "so it has no time profile to give; %s\n",
                c->name, c->info.rts_ident, BUILD_HINT);
        pr->status = 2;
        pr->why = NULL;
        pr->phase = DONE;
        es_session_close(&pr->ses);
        uv_close((uv_handle_t *)&pr->timer, NULL);
        return;
    }
    if (pr->no_flush)
        pr->dash_p = pr->dash_p || es_heapmode_opt_of_pid(ES_HEAPMODE_TIME, c->peer_pid) == 1;
    bool running = pr->seen_sample || (pr->no_flush && pr->dash_p);
    uint64_t from = program_now(pr);
    if (!running) {
        int r = es_conn_send_command(c, EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING);
        if (r < 0) {
            fprintf(stderr, "eventlog-socket: %s: cannot send: %s\n", c->name, uv_strerror(r));
            pr->status = 2;
            finish(pr, NULL);
            return;
        }
        pr->started = true;
    }
    pr->prof.from = from;
    pr->prof.to = from + (uint64_t)(pr->duration * 1e9);
    pr->phase = COLLECT;
    fprintf(stderr, "eventlog-socket: %s: %s for %g s%s\n", c->name,
            running ? "cost-centre profiling is running: collecting"
                    : "cost-centre profiling started: collecting",
            pr->duration, pr->no_flush ? " (" ES_MODEL_GHC90_NOTE ")" : "");
    uint64_t ms = (uint64_t)(pr->duration * 1000) + (pr->no_flush ? 0 : GRACE_MS);
    uv_timer_start(&pr->timer, on_timer, ms, 0);
}

static void on_timer(uv_timer_t *t) {
    struct profile *pr = t->data;
    switch (pr->phase) {
    case PROBE:
        decide(pr);
        break;
    case COLLECT:
        if (pr->window && pr->ses.conn->info.window != 0) {
            uv_timer_start(&pr->timer, on_timer, 1000, 0); /* answered: its end will come */
            break;
        }
        if (pr->window) {
            fprintf(stderr,
                    "eventlog-socket: %s: the program did not answer the window request in "
                    "time (is it running eventlog-socket 0.3 or later?)\n",
                    pr->ses.conn->name);
            pr->status = 2;
            finish(pr, NULL);
            break;
        }
        end_collection(pr, "the duration is over");
        break;
    case STOPPING:
        fprintf(stderr,
                "eventlog-socket: %s: the stop command did not go out: cost-centre profiling "
                "may still be running\n",
                pr->ses.conn->name);
        finish(pr, pr->why);
        break;
    case DONE:
        break;
    }
}

static void on_sent(struct es_conn *c, int status, void *ctx) {
    struct profile *pr = ctx;
    if (status < 0)
        fprintf(stderr, "eventlog-socket: %s: cannot send: %s\n", c->name, uv_strerror(status));
    if (pr->phase == STOPPING && pr->stop_sent)
        finish(pr, pr->why);
}

static void on_header(struct es_conn *c, void *ctx) {
    struct profile *pr = ctx;
    pr->no_flush = es_model_header_no_flush(&c->stream.header);
    if (!pr->live)
        return;
    if (pr->window) { /* the answer to the window request, within the connect timeout */
        pr->phase = COLLECT;
        uv_timer_start(&pr->timer, on_timer,
                       (uint64_t)(pr->ses.opt.connect_timeout * 1000) + GRACE_MS, 0);
        return;
    }
    /* The probe's samples are not the profile's: none is taken yet. */
    pr->prof.from = UINT64_MAX;
    uv_timer_start(&pr->timer, on_timer, pr->no_flush ? 0 : PROBE_MS, 0);
}

/* PROGRAM_ARGS or PROGRAM_ENV: does it start time profiling (-p)? */
static void note_options(struct profile *pr, const struct es_event *ev) {
    struct es_payload r = es_payload_of(ev);
    es_payload_skip(&r, 4); /* the capset */
    size_t n;
    const char *strs = (const char *)es_payload_rest(&r, &n);
    if (!es_payload_ok(&r))
        return;
    if (ev->type == ES_EVENT_PROGRAM_ARGS ? es_heapmode_opt_in_args(ES_HEAPMODE_TIME, strs, n)
                                          : es_heapmode_opt_in_env(ES_HEAPMODE_TIME, strs, n))
        pr->dash_p = true;
}

/* --since on a live program: the window's samples of its last D, then
 * stop at its end. False when the event is past it (or the window was
 * refused): the profile is complete. */
static bool window_event(struct profile *pr, struct es_conn *c, const struct es_event *ev,
                         uint64_t offset) {
    const struct es_conn_info *in = &c->info;
    if (in->window < 0) {
        fprintf(stderr,
                "eventlog-socket: %s: no window to profile: %s (run the program with "
                "GHC_EVENTLOG_RETAIN=64M to keep one, or profile it from now on: profile ADDR "
                "--duration D)\n",
                c->name, in->window_why[0] ? in->window_why : "refused");
        pr->status = 2;
        finish(pr, NULL);
        return false;
    }
    if (in->window == 0)
        return true; /* the header's definitions, before the answer */
    double to_ns = in->window_to_s * 1e9;
    pr->prof.to = (uint64_t)to_ns + 1;
    pr->prof.from = to_ns > (double)pr->since_ns ? (uint64_t)(to_ns - (double)pr->since_ns) : 0;
    if (offset >= in->window_end) {
        finish(pr, "the window's end");
        return false;
    }
    (void)ev;
    return true;
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    struct profile *pr = ctx;
    if (pr->phase == DONE || pr->phase == STOPPING)
        return;
    if (ev->time > pr->latest)
        pr->latest = ev->time;
    switch (ev->type) {
    case ES_EVENT_PROGRAM_ARGS:
    case ES_EVENT_PROGRAM_ENV:
        note_options(pr, ev);
        break;
    case ES_EVENT_HEAP_PROF_COST_CENTRE:
        pr->cost_centres = true;
        break;
    case ES_EVENT_PROF_SAMPLE_COST_CENTRE:
        pr->seen_sample = true;
        break;
    default:
        break;
    }
    if (pr->window && !window_event(pr, c, ev, offset))
        return;
    es_prof_event(&pr->prof, ev);
    /* Samples are posted in time order (the RTS's global buffer): one
     * from D's end on means D's samples are all in. Not so of a window,
     * whose end is its last byte (window_event): its end time comes
     * rounded in the answer, and a sample of its last instant may lie
     * past it. */
    if (pr->live && !pr->window && pr->phase == COLLECT &&
        ev->type == ES_EVENT_PROF_SAMPLE_COST_CENTRE && ev->time >= pr->prof.to)
        end_collection(pr, "the duration is over");
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct profile *pr = ctx;
    if (pr->phase == DONE)
        return;
    char why[1000];
    int status = es_conn_end_words(c, how, NULL, why, sizeof why);
    if (how == ES_CONN_FAILED && c->stream.header.len == 0) {
        fprintf(stderr, "eventlog-socket: %s: %s\n", c->name, c->error);
        pr->status = 2;
        pr->phase = DONE;
        es_session_close(&pr->ses);
        if (pr->timer_init && !uv_is_closing((uv_handle_t *)&pr->timer))
            uv_close((uv_handle_t *)&pr->timer, NULL);
        return;
    }
    if (status > pr->status)
        pr->status = status;
    static char words[1000];
    snprintf(words, sizeof words, "%s", why);
    finish(pr, words);
}

static void on_signal(void *ctx, int signum, const char *why) {
    struct profile *pr = ctx;
    (void)signum;
    (void)why; /* the summary says "interrupted" where the collection stopped */
    pr->status = 1;
    if (pr->phase == PROBE) {
        pr->phase = COLLECT; /* nothing started: write nothing more than came */
        finish(pr, "interrupted");
        return;
    }
    end_collection(pr, "interrupted");
}

static int usage_format(const char *out) {
    fprintf(stderr,
            "eventlog-socket profile: %s: the output's name says its format: end it in .folded "
            "(folded stacks), .speedscope.json (speedscope) or .pb.gz (pprof)\n",
            out);
    return 2;
}

int es_profile_main(int argc, char **argv) {
    static struct profile prof;
    struct profile *pr = &prof;
    es_session_init(&pr->ses);
    pr->ses.opt.allow_file = true;
    pr->duration = 30;
    es_prof_init(&pr->prof);
    const char *src = NULL;
    const struct es_opt opts[] = {
        {"-o", "--output", ES_OPT_VALUE, &pr->out, 0, "-o needs a file name", NULL, true},
        {"--duration", NULL, ES_OPT_SECONDS, &pr->duration, 1e7,
         "--duration needs a duration (" ES_UNITS_GRAMMAR ")",
         "%s %s: not a duration above 0 (" ES_UNITS_GRAMMAR ")", false},
        {"--since", NULL, ES_OPT_VALUE, &pr->since, 0,
         "--since needs a duration (" ES_UNITS_GRAMMAR ")", NULL, false},
        {0}};
    const struct es_opts_spec spec = {.cmd = "profile",
                                      .opts = opts,
                                      .conn = &pr->ses.opt,
                                      .pos = &src,
                                      .npos = 1,
                                      .required = 1,
                                      .pos_names = (const char *[]){"ADDR|FILE"},
                                      .too_many = "one source only (%s, then %s)",
                                      .pos_first = true};
    int status = es_opts_parse(&spec, argc, argv);
    if (status >= 0)
        return status;
    pr->fmt = es_profwrite_format_of(pr->out);
    if (pr->fmt == ES_PROFWRITE_NONE)
        return usage_format(pr->out);
    if (pr->since && (!es_units_duration(pr->since, &pr->since_ns) || pr->since_ns == 0)) {
        fprintf(stderr,
                "eventlog-socket profile: --since %s: not a duration above 0 (" ES_UNITS_GRAMMAR
                ")\n",
                pr->since);
        return 2;
    }
    /* --since on a live program: its window (the flight recorder's). */
    struct stat st;
    pr->window = pr->since && (stat(src, &st) != 0 || !S_ISREG(st.st_mode));
    pr->ses.opt.window = pr->window;
    if (!es_outfile_check("profile", NULL, pr->out))
        return 2;
    /* The runs only for a time-ordered view. */
    pr->prof.keep_runs = pr->fmt == ES_PROFWRITE_SPEEDSCOPE;
    /* --since on a recording: its last D, each sample kept until it is older. */
    pr->prof.tail_ns = pr->window ? 0 : pr->since_ns;
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_end = on_end,
                                   .on_sent = on_sent,
                                   .ctx = pr};
    if (es_session_start(&pr->ses, NULL, src, &cb, true, on_signal) != 0)
        return 2;
    pr->live = !pr->ses.conn->is_file;
    uv_timer_init(pr->ses.loop, &pr->timer);
    pr->timer.data = pr;
    pr->timer_init = true;
    es_session_run(&pr->ses);
    es_prof_destroy(&pr->prof);
    return pr->status;
}
