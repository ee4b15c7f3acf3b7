/* SPDX-License-Identifier: BSD-3-Clause */
/* What `serve`'s loop thread (client/web/serve.c) hands libmicrohttpd's
 * threads (client/web/http.c), under one mutex: the messages of the event
 * stream (the latest whole state and the deltas after it, numbered), the
 * recording to download, whether the buttons may send commands, and the
 * commands they sent, which the loop thread takes when the uv_async it
 * gave the share wakes it (es_webshare_take_commands). The loop thread
 * writes, the HTTP threads read; each side only through these functions. The messages kept are
 * bounded: a whole state and at most ES_WEBSHARE_MAX_DELTAS deltas, no larger than it in all
 * (es_webshare_wants_full). Readers share them (one copy whatever the
 * number of tabs); messages no longer kept that slow readers still send
 * are bounded too (es_webshare_msg_stale). */
#ifndef ES_WEBSHARE_H
#define ES_WEBSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Messages kept after the last whole state; a tab further behind gets a
 * new whole state. */
#define ES_WEBSHARE_MAX_DELTAS 64
/* Commands waiting for the loop thread, at most (more: ES_WEBSHARE_BUSY). */
#define ES_WEBSHARE_COMMANDS 16

struct es_webshare;

/* ---- The loop thread. */

/* A share that wakes the loop thread through `commands` (the loop
 * thread's uv_async, initialised, outliving the HTTP server) when a
 * button sent a command; NULL when out of memory. */
struct es_webshare *es_webshare_new(uv_async_t *commands);
/* The commands the buttons sent since the last call, oldest first, into
 * out[0..ES_WEBSHARE_COMMANDS); returns how many. */
size_t es_webshare_take_commands(struct es_webshare *sh, uint8_t out[ES_WEBSHARE_COMMANDS]);
/* Whether the next message must be a whole state (none yet, or the deltas
 * after the last one are too many or too large). */
bool es_webshare_wants_full(struct es_webshare *sh);
/* The next message (`msg`, malloc'd, taken over): a whole state (`full`)
 * replaces every message before it. Also whether the buttons may send
 * commands now, and how much of the recording is whole blocks so far. */
void es_webshare_publish(struct es_webshare *sh, char *msg, size_t len, bool full, bool can_control,
                         uint64_t rec_len);
/* A new recording in `fd` (-1: none), nothing of it whole yet. */
void es_webshare_new_recording(struct es_webshare *sh, int fd);
/* The recording ended whole at `len` bytes (its end marker included). */
void es_webshare_recording_ended(struct es_webshare *sh, uint64_t len);
/* The file name the download suggests. */
void es_webshare_recording_name(struct es_webshare *sh, const char *name);
/* The program's Prometheus exposition (`text`, malloc'd, taken over). */
void es_webshare_publish_metrics(struct es_webshare *sh, char *text, size_t len);
/* Closing: every event stream ends (es_webshare_next returns 0). */
void es_webshare_close(struct es_webshare *sh);
/* Free the share once no HTTP thread uses it any more (the server has
 * stopped). */
void es_webshare_free(struct es_webshare *sh);

/* ---- The HTTP threads. */

/* One message of the event stream, shared by its readers (never copied
 * per connection). */
struct es_webshare_msg;

/* The next message for a reader that needs message `*next` (a whole state
 * if it is further behind), waiting for it: *msg (the reader's until it
 * releases it), *next advanced; a keepalive comment after a few seconds
 * without one. Returns 1, or 0 when closing. */
int es_webshare_next(struct es_webshare *sh, uint64_t *next, const struct es_webshare_msg **msg);
/* Its bytes. */
const char *es_webshare_msg_data(const struct es_webshare_msg *m, size_t *len);
/* Whether a reader still sending `m` should stop: `m` is no longer kept,
 * and slow readers hold too much of such messages (the browser reconnects
 * and gets the latest whole state). */
bool es_webshare_msg_stale(struct es_webshare *sh, const struct es_webshare_msg *m);
/* The reader is done with `m` (NULL: nothing). */
void es_webshare_release(struct es_webshare *sh, const struct es_webshare_msg *m);

/* A download of the recording so far: a descriptor of its own (-1: none),
 * the bytes of whole blocks in it, whether an end marker must follow
 * them, and the file name. */
struct es_webshare_download {
    int fd;
    uint64_t len;
    bool marker;
    char name[300];
};
void es_webshare_download(struct es_webshare *sh, struct es_webshare_download *d);

/* A copy of the latest exposition in *buf (malloc'd) and *len. Returns 0,
 * -1 when out of memory. */
int es_webshare_metrics(struct es_webshare *sh, char **buf, size_t *len);

/* A button's command for the loop thread (its uv_async woken). */
enum es_webshare_sent { ES_WEBSHARE_SENT, ES_WEBSHARE_NOT_CONNECTED, ES_WEBSHARE_BUSY };
enum es_webshare_sent es_webshare_command(struct es_webshare *sh, uint8_t cmd);

#endif
