/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "who the program is" (client/model/impl.h): its name
 * and arguments, its RTS and GHC version, its pid and when it started. */
#include "impl.h"

#include <stdio.h>
#include <string.h>

/* The basename of argv[0], `len` bytes at `p`, as the program's name. */
static void program_name(struct es_model *m, const uint8_t *p, size_t len) {
    const uint8_t *base = es_payload_basename(p, len);
    es_utf8_copy(m->program, sizeof m->program, base, (size_t)(p + len - base));
    clean_text(m->program);
}

void es_model_on_program_args(struct es_model *m, struct es_model_ev *e) {
    struct es_payload r = e->r; /* a copy the calls below cannot touch */
    es_payload_skip(&r, 4);     /* capset */
    if (!es_payload_ok(&r))
        return;
    /* NUL-terminated arguments, argv[0] first. */
    size_t k = 0;
    bool first = true;
    while (es_payload_left(&r) > 0) {
        size_t len;
        const uint8_t *p = es_payload_str(&r, &len);
        if (first)
            program_name(m, p, len);
        if (k + (first ? 0 : 1) + len < sizeof m->args) {
            if (!first)
                m->args[k++] = ' ';
            k += es_utf8_copy(m->args + k, sizeof m->args - k, p, len);
        }
        first = false;
    }
    m->args[k] = '\0';
    clean_text(m->args);
}

void es_model_on_rts_identifier(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 4); /* capset */
    es_payload_text(&e->r, m->rts_id, sizeof m->rts_id);
    clean_text(m->rts_id);
    /* "GHC-9.6.6 rts_thr": the version is what follows "GHC-". */
    const char *v = strstr(m->rts_id, "GHC-");
    m->ghc_version[0] = '\0';
    if (v) {
        v += 4;
        size_t len = strcspn(v, " ");
        if (len >= sizeof m->ghc_version)
            len = sizeof m->ghc_version - 1;
        memcpy(m->ghc_version, v, len);
        m->ghc_version[len] = '\0';
    }
}

/* The RTS posts it once, at its start, before RTS_IDENTIFIER; a restart
 * of event logging (a start from Haskell) never posts it again. */
void es_model_on_capset_create(struct es_model *m, struct es_model_ev *e) {
    (void)e;
    m->rts_started = true;
}

bool es_model_late_start(const struct es_model *m) {
    return !m->rts_started && (m->ended || m->rts_id[0] != '\0');
}

void es_model_on_pid(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 4); /* capset */
    uint32_t pid = es_payload_u32(&e->r);
    if (es_payload_ok(&e->r))
        m->pid = pid;
}

void es_model_on_wall_clock(struct es_model *m, struct es_model_ev *e) {
    es_payload_skip(&e->r, 4); /* capset */
    uint64_t sec = es_payload_u64(&e->r);
    uint32_t nsec = es_payload_u32(&e->r);
    /* The wall clock at time t: the RTS started t ns earlier. */
    if (es_payload_ok(&e->r)) {
        uint64_t wall_ns = sec * NS_PER_S + nsec;
        m->wall_start_s = wall_ns > e->t ? (wall_ns - e->t) / NS_PER_S : 0;
    }
}

/* ---- What the views say (model.h). */

bool es_model_rts_profiled(const char *rts_id) {
    const char *way = strchr(rts_id, ' ');
    for (const char *p = way ? strstr(way, "_p") : NULL; p != NULL; p = strstr(p + 2, "_p"))
        if (p[2] == '\0' || p[2] == '_')
            return true;
    return false;
}

const char *es_model_profile_kind(const struct es_model *m, bool over) {
    if (m->heap_prof)
        return es_model_breakdown_name(m->breakdown);
    if (m->censuses > 0)
        return es_model_late_start(m) ? "its kind was not streamed: started from Haskell"
                                      : "its kind was not streamed";
    if (m->no_flush && !m->ended)
        return over ? "no heap profile: GHC 9.0 sends it at exit, and the eventlog ends before"
                    : "no heap profile seen yet: GHC 9.0 sends it at exit (with +RTS -hT)";
    /* The program's arguments came without a heap profiling mode. */
    bool none = over || (m->rts_id[0] != '\0' && strstr(m->args, " -h") == NULL);
    return none ? "no heap profile: run the program with +RTS -hT"
                : "no heap profile seen yet: run the program with +RTS -hT";
}

void es_model_threads_before_note(const struct es_model *m, char *buf, size_t size) {
    uint64_t before = es_model_threads_before(m), gaps = es_model_threads_in_gaps(m);
    if (size > 0)
        buf[0] = '\0';
    int k = 0;
    if (before > 0)
        k = snprintf(buf, size, " (and %llu begun before the stream)", (unsigned long long)before);
    if (gaps > 0 && k >= 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k,
                 " (and %llu first seen after scheduler events were off)",
                 (unsigned long long)gaps);
}

uint64_t es_model_counted_from(const struct es_model *m) {
    if (!es_model_late_start(m) && es_model_threads_before(m) == 0)
        return 0;
    uint64_t from = m->cap_blocks_from ? m->cap_blocks_from : m->first_time;
    /* A tenth of a second in: the program's own start, for all it says. */
    return from >= NS_PER_S / 10 ? from : 0;
}

void es_model_counted_since(const struct es_model *m, char *buf, size_t size) {
    uint64_t from = es_model_counted_from(m);
    if (from == 0)
        snprintf(buf, size, "since start");
    else
        snprintf(buf, size, "since %.1f s", (double)from / 1e9);
}
