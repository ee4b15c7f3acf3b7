/* What `serve`'s page is sent (serve.h): the run's status, each change as
 * one Server-Sent Event message into the share, the Prometheus exposition
 * and the download's file name. Loop thread. */
#include "serve.h"

#include "prom/text.h"

#include <stdio.h>

/* The server's process name on a Unix socket (SO_PEERCRED and /proc). */
static void peer_program(struct serve *s) {
    if (s->peer_looked || s->run_pid <= 0)
        return;
    s->peer_looked = true;
    es_session_program_of(s->run_pid, s->peer_program, sizeof s->peer_program);
}

static void status_of(struct serve *s, struct es_webjson_status *st) {
    peer_program(s);
    st->program = s->peer_program;
    st->pid = s->run_pid > 0 ? (uint32_t)s->run_pid : 0;
    st->state = s->state;
    st->source = s->run_source[0] ? s->run_source : s->source;
    st->error = s->error;
    st->bytes = s->ended || s->run == 0 ? s->run_bytes : s->ses.conn->info.bytes;
    st->recording = s->header;
    st->can_control = !s->ended && s->header;
    st->run = s->run;
    st->retry = s->ses.opt.retry;
}

/* Write what changed as the next message (or a whole state, when the tabs
 * would otherwise need too many deltas). */
void es_serve_publish(struct serve *s, bool force) {
    if (!force && s->model->events == s->last_events && s->last_state == s->state)
        return;
    s->last_events = s->model->events;
    s->last_state = s->state;
    if (es_webshare_wants_full(s->sh))
        s->cursor.started = false;
    struct es_webjson_status st;
    status_of(s, &st);
    es_model_extend_to_now(s->model);
    struct es_webbuf b = {0};
    bool full = !s->cursor.started || s->cursor.generation != s->model->h.generation;
    es_webbuf_printf(&b, "event: %s\ndata: ", full ? "state" : "delta");
    es_webjson_state(&b, s->model, &st, &s->cursor);
    ES_WEBBUF_ADD(&b, "\n\n");
    if (b.oom) {
        /* Try again with a whole state next time. */
        es_webbuf_free(&b);
        s->cursor.started = false;
        return;
    }
    es_webshare_publish(s->sh, b.p, b.len, full, st.can_control, es_blocks_file_len(&s->blocks));
}

/* The program's Prometheus exposition for GET /metrics (client/prom/text.h). */
void es_serve_publish_metrics(struct serve *s) {
    struct es_webjson_status st;
    status_of(s, &st);
    bool run = s->header && !s->ignoring;
    struct es_promtext_target t = {
        .m = run ? s->model : NULL,
        .program = s->model->program[0] ? s->model->program : st.program,
        .pid = s->model->pid ? s->model->pid : st.pid,
        .source = st.source,
        .connected = run && !s->ended,
        .received_bytes = st.bytes,
    };
    struct es_webbuf b = {0};
    es_promtext_write(&b, &t, 1, ES_PROMTEXT_TOP_LABELS);
    if (b.oom)
        es_webbuf_free(&b);
    else
        es_webshare_publish_metrics(s->sh, b.p, b.len);
}

/* The file name the download suggests: the program's and its pid. */
void es_serve_name_recording(struct serve *s) {
    const char *prog = s->model->program[0] ? s->model->program
                       : s->peer_program[0] ? s->peer_program
                                            : "eventlog";
    char safe[256], name[300];
    snprintf(safe, sizeof safe, "%s", prog);
    for (char *p = safe; *p; p++)
        if (*p == '"' || *p == '/' || *p == '\\' || (unsigned char)*p < 0x20 ||
            (unsigned char)*p >= 0x7f)
            *p = '_';
    uint32_t pid = s->model->pid ? s->model->pid : (uint32_t)(s->run_pid > 0 ? s->run_pid : 0);
    if (pid)
        snprintf(name, sizeof name, "%s-%u.eventlog", safe, pid);
    else
        snprintf(name, sizeof name, "%s.eventlog", safe);
    es_webshare_recording_name(s->sh, name);
}
