/* `serve`'s state, shared by its two files: serve.c (the connection, the
 * run, the recording, the command's main) and serve_page.c (what the page
 * is sent: the status, the messages of changes, the Prometheus exposition,
 * the download's name). Loop thread only. */
#ifndef ES_SERVE_H
#define ES_SERVE_H

#include "source/blocks.h"
#include "model/model.h"
#include "source/session.h"
#include "http.h"
#include "json.h"
#include "share.h"

#include <stdbool.h>
#include <stdint.h>

struct serve {
    struct es_session ses; /* with --retry, a new connection after each end */
    unsigned run;          /* runs shown so far (sessions with a header, not ignored) */
    int run_pid;           /* the shown run's server process (SO_PEERCRED), 0: unknown */
    bool run_exited;       /* the shown run ended with its end marker */
    uint64_t run_bytes;    /* bytes of the shown run, once it ended */
    char run_source[300];
    bool ignoring;   /* this session reached the exited run's program again */
    bool said_retry; /* a session without a header was reported on stderr */
    struct es_model *model;
    struct es_blocks blocks;
    struct es_webjson_cursor cursor;
    const char *source;
    const char *http;     /* --http HOST:PORT */
    const char *rec_path; /* --record FILE, or NULL for a temporary file */
    char tmp_path[512];
    int rec_fd;
    const char *state;
    char error[600];
    char peer_program[256]; /* from /proc, for GHC 9.0 */
    bool peer_looked;
    bool header;
    bool ended;
    uint64_t last_events; /* at the last message */
    const char *last_state;
    uv_timer_t tick;
    struct es_webshare *sh;
    struct es_webhttp *http_server;
    int status;
};

/* Write what changed as the next message to the page's tabs (or a whole
 * state, when they would otherwise need too many deltas); `force`: even
 * when nothing did. */
void es_serve_publish(struct serve *s, bool force);

/* The program's Prometheus exposition for GET /metrics (client/prom/text.h). */
void es_serve_publish_metrics(struct serve *s);

/* The file name the download suggests: the program's and its pid. */
void es_serve_name_recording(struct serve *s);

#endif
