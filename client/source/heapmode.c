/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a program has a heap profiling mode (client/source/heapmode.h):
 * an RTS -h option in its arguments or GHCRTS (from the stream, or from
 * /proc for GHC 9.0), and the verdict from its stream's events. */
#include "heapmode.h"

#include "format/es_payload.h"
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_heap_option(const char *w, size_t n) {
    /* -h, -hT, -hc, ... (-H is the heap size suggestion, not a mode). */
    return n >= 2 && w[0] == '-' && w[1] == 'h';
}

static bool is_time_option(const char *w, size_t n) {
    /* -p, -pa, -pj, -P (-po only names the file). */
    return n >= 2 && w[0] == '-' && (w[1] == 'P' || (w[1] == 'p' && (n == 2 || w[2] != 'o')));
}

static bool is_option(enum es_heapmode_opt which, const char *w, size_t n) {
    return which == ES_HEAPMODE_TIME ? is_time_option(w, n) : is_heap_option(w, n);
}

static bool word_is(const char *w, size_t n, const char *s) {
    return n == strlen(s) && memcmp(w, s, n) == 0;
}

bool es_heapmode_in_args(const char *args, size_t len) {
    return es_heapmode_opt_in_args(ES_HEAPMODE_HEAP, args, len);
}

bool es_heapmode_opt_in_args(enum es_heapmode_opt which, const char *args, size_t len) {
    bool rts = false, first = true;
    const char *p = args, *end = args + len;
    while (p < end) {
        const char *nul = memchr(p, 0, (size_t)(end - p));
        size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
        if (first)
            first = false; /* argv[0] */
        else if (word_is(p, n, "--RTS"))
            return false; /* the rest is the program's */
        else if (word_is(p, n, "+RTS"))
            rts = true;
        else if (word_is(p, n, "-RTS"))
            rts = false;
        else if (rts && is_option(which, p, n))
            return true;
        p += n + 1;
    }
    return false;
}

static bool ghcrts_has(enum es_heapmode_opt which, const char *v, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t'))
            i++;
        size_t j = i;
        while (j < n && v[j] != ' ' && v[j] != '\t')
            j++;
        if (is_option(which, v + i, j - i))
            return true;
        i = j;
    }
    return false;
}

bool es_heapmode_in_env(const char *env, size_t len) {
    return es_heapmode_opt_in_env(ES_HEAPMODE_HEAP, env, len);
}

bool es_heapmode_opt_in_env(enum es_heapmode_opt which, const char *env, size_t len) {
    const char *p = env, *end = env + len;
    while (p < end) {
        const char *nul = memchr(p, 0, (size_t)(end - p));
        size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
        if (n > 7 && memcmp(p, "GHCRTS=", 7) == 0)
            return ghcrts_has(which, p + 7, n - 7);
        p += n + 1;
    }
    return false;
}

/* /proc/PID/NAME whole (at most 1 MiB) into a malloc'd buffer; NULL when
 * it cannot be read. */
static char *slurp(int pid, const char *name, size_t *len) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    if (buf != NULL)
        *len = fread(buf, 1, cap, f);
    fclose(f);
    return buf;
}

int es_heapmode_of_pid(int pid) {
    return es_heapmode_opt_of_pid(ES_HEAPMODE_HEAP, pid);
}

int es_heapmode_opt_of_pid(enum es_heapmode_opt which, int pid) {
    if (pid <= 0)
        return -1;
    size_t len = 0;
    char *args = slurp(pid, "cmdline", &len);
    if (args == NULL || len == 0) {
        free(args);
        return -1;
    }
    bool on = es_heapmode_opt_in_args(which, args, len);
    free(args);
    if (!on) {
        char *env = slurp(pid, "environ", &len);
        if (env != NULL)
            on = es_heapmode_opt_in_env(which, env, len);
        free(env);
    }
    return on ? 1 : 0;
}

void es_heapmode_header(struct es_heapmode *hm, const struct es_header *hdr, int peer_pid) {
    *hm = (struct es_heapmode){0};
    hm->no_flush = es_model_header_no_flush(hdr);
    hm->proc = hm->no_flush ? es_heapmode_of_pid(peer_pid) : -1;
}

void es_heapmode_event(struct es_heapmode *hm, const struct es_event *ev) {
    /* PROGRAM_ARGS, PROGRAM_ENV: u32 capset, then NUL-terminated strings. */
    struct es_payload r = es_payload_of(ev);
    es_payload_skip(&r, 4);
    size_t n;
    const char *strs = (const char *)es_payload_rest(&r, &n);
    switch (ev->type) {
    case ES_EVENT_HEAP_PROF_BEGIN:
    case ES_EVENT_HEAP_PROF_SAMPLE_BEGIN:
        hm->on = true;
        break;
    case ES_EVENT_HEAP_INFO_GHC:
        hm->heap_info = true;
        break;
    case ES_EVENT_CAPSET_CREATE:
    case ES_EVENT_CAP_CREATE:
        hm->capsets = true;
        break;
    case ES_EVENT_PROGRAM_ARGS:
        hm->args = true;
        if (es_heapmode_in_args(strs, n))
            hm->on = true;
        break;
    case ES_EVENT_PROGRAM_ENV:
        if (es_heapmode_in_env(strs, n))
            hm->on = true;
        break;
    default:
        break;
    }
}

enum es_heapmode_verdict es_heapmode_verdict(const struct es_heapmode *hm) {
    if (hm->on)
        return ES_HEAPMODE_ON;
    if (hm->args && hm->heap_info && hm->capsets)
        return ES_HEAPMODE_OFF;
    if (hm->no_flush && hm->proc >= 0)
        return hm->proc ? ES_HEAPMODE_ON : ES_HEAPMODE_OFF;
    return ES_HEAPMODE_UNKNOWN;
}
