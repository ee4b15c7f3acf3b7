/* SPDX-License-Identifier: BSD-3-Clause */
/* `eventlog-socket watch ADDR --trigger CONDITION ...` (also `record
 * --trigger ...`): stay connected,
 * skim the stream for the conditions (client/flight/trigger.h) while
 * keeping the last --before of it in memory (client/flight/ring.h), and
 * write a file for each moment a condition holds: the time before it and
 * --after it (client/flight/shot.h). After a firing, conditions are held
 * off for --holdoff, so a storm makes a few files, not thousands. The
 * connection asks for the program's window first, which fills the ring
 * when the program keeps one. Runs on the loop's thread. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include "base/es_size.h"
#include "opts.h"
#include "ring.h"
#include "shot.h"
#include "source/naming.h"
#include "source/session.h"
#include "subcommands.h"
#include "trigger.h"
#include "source/units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_S 1000000000ull
/* --memory's least value (1M, its refusal's first example). */
#define MEMORY_MIN ((uint64_t)1 << 20)

struct watch {
    struct es_session ses;
    struct es_triggers ts;
    struct es_ring ring;
    struct es_shot shot;
    struct es_firing firing;
    struct es_firing next; /* one that waits for the shot before it to end */
    bool has_next;
    bool want[ES_MAX_EVENT_TYPES];
    const char *dir;
    uint64_t before, after, holdoff; /* ns */
    uint64_t memory;                 /* bytes the ring may hold */
    uint64_t next_allowed;           /* program time before which nothing fires */
    uint64_t received;               /* stream bytes so far */
    uint16_t cap;                    /* the capability of the block being read */
    bool fired_at_error;
    unsigned files, held_off;
    uv_timer_t after_timer; /* ends a shot in a program that goes quiet */
    bool stopped;
    int status;
};

int es_watch_wanted(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--trigger") == 0)
            return 1;
    return 0;
}

static double secs(uint64_t ns) {
    return (double)ns / 1e9;
}

/* The shot being written ends (`why`: the cut notice's reason, for a
 * shot that does not end with the program's end marker). */
static void end_shot(struct watch *w, bool complete, const char *why) {
    if (!w->shot.open)
        return;
    uv_timer_stop(&w->after_timer);
    const struct es_conn *c = w->ses.conn;
    int e = es_shot_end(&w->shot, &c->stream.header, complete, c->stream.offset, why);
    if (e != 0) {
        fprintf(stderr,
                "eventlog-socket: cannot write %s: %s; the file ends at its last whole "
                "block\n",
                w->shot.path, strerror(-e));
        w->status = 2;
        return;
    }
    fprintf(stderr,
            "eventlog-socket: wrote %s (%.1f MiB, %.3f s to %.3f s of the program's time)\n",
            w->shot.path, (double)es_blocks_file_len(&w->shot.b) / (1 << 20), secs(w->shot.from),
            secs(w->shot.last));
}

static void on_after(uv_timer_t *t) {
    struct watch *w = t->data;
    end_shot(w, false, "the time after the trigger is over; the program went on");
}

/* A condition holds: a new file with the ring, then what comes until
 * --after has passed. */
static void start_shot(struct watch *w, const struct es_firing *f) {
    char stem[600], path[700];
    w->firing = *f;
    w->next_allowed = f->time + w->holdoff;
    /* From --before before the moment, or from the span's start when that
     * is earlier and still kept. */
    uint64_t from = f->time > w->before ? f->time - w->before : 0;
    es_ring_trim(&w->ring, f->from < from ? f->from : from);
    int n = snprintf(stem, sizeof stem, "%s/", w->dir);
    es_naming_stem(w->ses.conn, true, stem + n, sizeof stem - (size_t)n);
    int fd = es_naming_create(stem, path, sizeof path);
    if (fd < 0) {
        fprintf(stderr, "eventlog-socket: %s held at %.3f s, but %s cannot be created: %s\n",
                f->by->text, secs(f->time), path, strerror(errno));
        w->status = 2;
        return;
    }
    w->files++;
    fprintf(stderr, "eventlog-socket: %s held at %.3f s (%s): writing %s\n", f->by->text,
            secs(f->time), f->what, path);
    int e = es_shot_begin(&w->shot, fd, path, &w->ring, f->time + w->after);
    if (e != 0) {
        end_shot(w, false, "the recording could not be written");
        return;
    }
    uv_timer_start(&w->after_timer, on_after, w->after / 1000000 + 2000, 0);
}

static void on_header(struct es_conn *c, void *ctx) {
    struct watch *w = ctx;
    es_ring_header(&w->ring, &c->stream.header, c->stream.header.len);
}

static void on_event(struct es_conn *c, const struct es_event *ev, uint64_t offset, void *ctx) {
    struct watch *w = ctx;
    (void)c;
    if (ev->type == ES_EVENT_BLOCK_MARKER) {
        if (es_ring_marker(&w->ring, ev, offset) != 0)
            w->status = 2;
        if (ev->payload_len >= 14)
            w->cap = (uint16_t)es_be16(ev->payload + 12);
        return;
    }
    struct es_firing f;
    if (!es_triggers_event(&w->ts, ev, w->cap, &f))
        return;
    if (f.by->kind == ES_TRIGGER_EXIT_FAILURE)
        w->fired_at_error = true;
    if (f.time < w->next_allowed || w->has_next || (w->shot.open && f.time < w->shot.until)) {
        w->held_off++;
    } else if (w->shot.open || !es_ring_has_header(&w->ring)) {
        /* The shot's time is over in the program's clock, but its blocks
         * are still arriving (GHC 9.0 hands over full buffers that span
         * seconds), or the header's bytes, read with this event, are not
         * in the ring yet: the next begins once the bytes read so far are
         * in. */
        w->next = f;
        w->has_next = true;
    } else {
        start_shot(w, &f);
    }
}

static void on_skip(struct es_conn *c, const struct es_stream_skip *run, void *ctx) {
    (void)c, (void)run, (void)ctx;
}

static void on_block(const struct es_ring_block *b, void *ctx) {
    struct watch *w = ctx;
    if (w->shot.open && es_shot_block(&w->shot, b) != 0)
        end_shot(w, false, "the time after the trigger is over; the program went on");
}

static void stop(struct watch *w, int status, const char *why);

static void on_bytes(struct es_conn *c, const uint8_t *data, size_t n, void *ctx) {
    struct watch *w = ctx;
    if (w->stopped)
        return;
    int e = es_ring_bytes(&w->ring, w->received, data, n, on_block, w);
    if (e == -EMSGSIZE) {
        /* A block longer than any a program sends: refused, as `record`
         * refuses it, before it outgrows --memory. */
        char why[700];
        es_ring_too_long_why(&w->ring, why, sizeof why);
        stop(w, 2, why);
        return;
    }
    if (e != 0)
        w->status = 2;
    w->received += n;
    if (w->has_next) {
        w->has_next = false;
        end_shot(w, false, "the time after the trigger is over; the program went on");
        start_shot(w, &w->next);
    }
    uint64_t now = c->info.latest_time;
    /* The time before the latest event is kept, and no more (but for a
     * watched span still open: from its start, within --memory). */
    if (!w->shot.open) {
        uint64_t every = w->before < 10000000 ? w->before : 10000000;
        uint64_t from = now > w->before ? now - w->before : 0;
        es_ring_trim(&w->ring, es_triggers_keep_from(&w->ts, from, every));
    }
}

static void stop(struct watch *w, int status, const char *why) {
    if (w->stopped)
        return;
    w->stopped = true;
    if (w->status == 0)
        w->status = status;
    end_shot(w, status == 0, why);
    es_session_close(&w->ses);
    uv_close((uv_handle_t *)&w->after_timer, NULL);
    const struct es_conn *c = w->ses.conn;
    /* After drop notices, the words record ends with (es_conn_add_gaps). */
    char said[1000];
    snprintf(said, sizeof said, "%s", why);
    if (status != 2)
        es_conn_add_gaps(&c->info, said, sizeof said);
    fprintf(stderr, "eventlog-socket: %s: %u recording%s written, %u firing%s held off; %s\n",
            c->name, w->files, w->files == 1 ? "" : "s", w->held_off, w->held_off == 1 ? "" : "s",
            said);
}

static void on_end(struct es_conn *c, enum es_conn_end how, void *ctx) {
    struct watch *w = ctx;
    struct es_firing f;
    if (!w->shot.open &&
        es_triggers_end(&w->ts, how == ES_CONN_CUT, c->info.latest_time, w->fired_at_error, &f))
        start_shot(w, &f);
    if (how == ES_CONN_COMPLETE)
        stop(w, 0, "the program's end marker arrived");
    else if (how == ES_CONN_CUT)
        stop(w, 1, "the program's stream ended without its end marker");
    else
        stop(w, 2, c->error);
}

static void on_signal(void *ctx, int signum, const char *why) {
    (void)why; /* each file says its own gaps; the summary, the signal alone */
    stop(ctx, 1, es_conn_signal_name(signum));
}

/* The durations and sizes of the options, and the conditions. */
static int setup(struct watch *w, const struct es_opt_list *conds, const char *d[4]) {
    static const char *const names[] = {"--before", "--after", "--holdoff"};
    uint64_t *ns[] = {&w->before, &w->after, &w->holdoff};
    for (int i = 0; i < 3; i++)
        if (d[i] != NULL && !es_units_duration(d[i], ns[i])) {
            fprintf(stderr, "eventlog-socket watch: %s %s: not a duration (" ES_UNITS_GRAMMAR ")\n",
                    names[i], d[i]);
            return -1;
        }
    if (d[2] == NULL)
        w->holdoff = w->before + w->after;
    if (d[3] != NULL && (!es_size_parse(d[3], &w->memory) || w->memory < MEMORY_MIN)) {
        fprintf(stderr,
                "eventlog-socket watch: --memory %s: not a size of 1M or more (" ES_SIZE_WORDS
                ": 1M, the least, 256MiB, 2GB)\n",
                d[3]);
        return -1;
    }
    for (int i = 0; i < conds->n; i++) {
        char err[400];
        if (es_triggers_add(&w->ts, conds->v[i], err, sizeof err) != 0) {
            fprintf(stderr, "eventlog-socket watch: --trigger %s\n", err);
            return -1;
        }
    }
    return 0;
}

int es_watch_main(int argc, char **argv) {
    static struct watch the_watch;
    struct watch *w = &the_watch;
    es_session_init(&w->ses);
    struct es_opt_list conds = {.n = 0};
    const char *addr = NULL, *d[4] = {NULL, NULL, NULL, NULL};
    w->dir = ".";
    w->before = 60 * NS_PER_S;
    w->after = 10 * NS_PER_S;
    w->memory = (uint64_t)256 << 20;
    const struct es_opt opts[] = {{"--trigger", NULL, ES_OPT_LIST, &conds, 0, NULL, NULL, false},
                                  {"--before", NULL, ES_OPT_VALUE, &d[0], 0, NULL, NULL, false},
                                  {"--after", NULL, ES_OPT_VALUE, &d[1], 0, NULL, NULL, false},
                                  {"--holdoff", NULL, ES_OPT_VALUE, &d[2], 0, NULL, NULL, false},
                                  {"--memory", NULL, ES_OPT_VALUE, &d[3], 0, NULL, NULL, false},
                                  {"-o", "--output", ES_OPT_VALUE, &w->dir, 0, NULL, NULL, false},
                                  {0}};
    int status = es_opts_parse_addr("watch", opts, &w->ses.opt, &addr, argc, argv);
    if (status >= 0)
        return status;
    if (conds.n == 0) {
        fprintf(stderr, "eventlog-socket watch: --trigger COND is required (gc-pause>100ms, "
                        "marker~PATTERN, exit-failure, ...)\n");
        return 2;
    }
    if (setup(w, &conds, d) != 0) {
        es_triggers_free(&w->ts);
        return 2;
    }
    es_ring_init(&w->ring, (size_t)w->memory);
    es_triggers_want(&w->ts, w->want);
    w->ses.opt.window = true; /* the program's window, when it keeps one, fills the ring */
    struct es_conn_callbacks cb = {.on_header = on_header,
                                   .on_event = on_event,
                                   .on_bytes = on_bytes,
                                   .on_end = on_end,
                                   .want = w->want,
                                   .on_skip = on_skip,
                                   .ctx = w};
    if (es_session_start(&w->ses, NULL, addr, &cb, true, on_signal) != 0) {
        es_triggers_free(&w->ts);
        return 2;
    }
    uv_timer_init(w->ses.loop, &w->after_timer);
    w->after_timer.data = w;
    es_session_run(&w->ses);
    es_ring_destroy(&w->ring);
    es_triggers_free(&w->ts);
    return w->status;
}
