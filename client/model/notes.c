/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "markers, messages and the library's notices"
 * (client/model/impl.h): the program's markers and messages (a ring of the
 * newest), and the notices the library puts in the stream as messages
 * (their text: cbits/format/es_notice_text.h, protocol.md 1.3), summed: drop notices (chunks
 * skipped), wait notices (the program waited for lossless clients) and
 * cost notices (what streaming costs the program). */
#include "impl.h"
#include "history.h"

#include "format/es_classes.h"
#include "format/es_notice_text.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

#include <stdio.h>
#include <string.h>

static void note(struct es_model *m, enum es_model_note_kind kind, uint64_t t,
                 const struct es_payload *r) {
    struct es_model_note *n = &m->notes[m->notes_n % ES_MODEL_NOTES];
    n->time = t;
    n->kind = kind;
    /* The text is the whole payload (no NUL in GHC's), as valid UTF-8. */
    size_t len;
    const uint8_t *s = es_payload_peek(r, &len);
    es_utf8_copy(n->text, ES_MODEL_NOTE_LEN, s, len);
    clean_text(n->text);
    m->notes_n++;
    if (kind == ES_NOTE_MARKER)
        es_model_hist_mark(m, t, n->text);
}

/* Class `i` (bit `bit`) off at `t`, or on again (a gap that ended). */
static void class_switch(struct es_model *m, unsigned i, unsigned bit, bool off, uint64_t t) {
    if (off == m->class_off[i])
        return;
    m->class_off[i] = off;
    if (off) {
        m->class_off_since[i] = t;
        return;
    }
    /* The classes switched together end together: one gap for them. */
    struct es_model_class_gap *last =
        m->class_gaps_n > 0 ? &m->class_gaps[(m->class_gaps_n - 1) % ES_MODEL_CLASS_GAPS] : NULL;
    if (last != NULL && last->from == m->class_off_since[i] && last->to == t) {
        last->classes |= bit;
        return;
    }
    m->class_gaps[m->class_gaps_n++ % ES_MODEL_CLASS_GAPS] =
        (struct es_model_class_gap){.classes = bit, .from = m->class_off_since[i], .to = t};
}

/* An event classes switch at `t`: the classes off before the first one
 * were off from the start; runs and GCs open across it are closed. */
static void classes_switched(struct es_model *m, uint64_t t, const struct es_notice_read *n) {
    unsigned now = n->classes_on;
    unsigned was = (now & ~n->classes_switched_on) | n->classes_switched_off;
    for (unsigned i = 0; i < ES_MODEL_CLASSES; i++) {
        unsigned bit = 1u << i;
        if (!m->classes_known && (was & bit) == 0)
            class_switch(m, i, bit, true, 0);
        class_switch(m, i, bit, (now & bit) == 0, t);
    }
    m->classes_known = true;
    m->classes_on = now;
    if ((n->classes_switched_off & EVENTLOG_SOCKET_EVENTS_SCHEDULER) != 0)
        es_model_threads_sched_off(m);
    unsigned changed = n->classes_switched_on | n->classes_switched_off;
    es_model_caps_classes_switched(m, t, (changed & EVENTLOG_SOCKET_EVENTS_SCHEDULER) != 0,
                                   (changed & EVENTLOG_SOCKET_EVENTS_GC) != 0);
}

static void when_words(char *buf, size_t size, uint64_t t) {
    if (t == 0)
        snprintf(buf, size, "the start");
    else
        snprintf(buf, size, "%.1f s", (double)t / 1e9);
}

bool es_model_classes_words(const struct es_model *m, char *buf, size_t size) {
    buf[0] = '\0';
    size_t k = 0;
    /* Those switched off now, grouped by when they went off (those off
     * from the start and never switched, as -l's defaults leave sparks-full
     * and nonmoving-gc, are how the program was started, not news). */
    unsigned done = 0;
    for (unsigned i = 0; i < ES_MODEL_CLASSES; i++) {
        if (!m->class_off[i] || m->class_off_since[i] == 0 || (done & (1u << i)) != 0)
            continue;
        unsigned group = 0;
        for (unsigned j = i; j < ES_MODEL_CLASSES; j++)
            if (m->class_off[j] && m->class_off_since[j] == m->class_off_since[i])
                group |= 1u << j;
        done |= group;
        char names[128], when[32];
        es_classes_words(names, sizeof names, group);
        when_words(when, sizeof when, m->class_off_since[i]);
        k += (size_t)snprintf(buf + k, k < size ? size - k : 0, "%s%s events off since %s",
                              k > 0 ? "; " : "", names, when);
    }
    if (m->class_gaps_n > 0) {
        const struct es_model_class_gap *g =
            &m->class_gaps[(m->class_gaps_n - 1) % ES_MODEL_CLASS_GAPS];
        char names[128], from[32], to[32], more[48] = "";
        es_classes_words(names, sizeof names, g->classes);
        when_words(from, sizeof from, g->from);
        when_words(to, sizeof to, g->to);
        if (m->class_gaps_n > 1)
            snprintf(more, sizeof more, " (and %llu gaps before)",
                     (unsigned long long)(m->class_gaps_n - 1));
        k += (size_t)snprintf(buf + k, k < size ? size - k : 0,
                              "%s%s events were off from %s to %s%s", k > 0 ? "; " : "", names,
                              from, to, more);
    }
    return k > 0;
}

bool es_model_class_switched_off(const struct es_model *m, unsigned bit) {
    for (unsigned i = 0; i < ES_MODEL_CLASSES; i++)
        if ((1u << i) == bit)
            return m->class_off[i] && m->class_off_since[i] > 0;
    return false;
}

/* The library's notice `n` (es_notice_text.h) summed into the model;
 * false when the message is not one the model counts. */
static bool count_notice(struct es_model *m, uint64_t t, const struct es_notice_read *n) {
    switch (n->kind) {
    case ES_NOTICE_CUT:
        m->cut = true;
        es_utf8_copy(m->cut_why, sizeof m->cut_why, (const uint8_t *)n->why, strlen(n->why));
        return true;
    case ES_NOTICE_DROP:
        for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++)
            m->caps[c].after_gap = true;
        m->drops++;
        m->dropped_chunks += n->chunks;
        m->dropped_mib += n->mib;
        m->last_drop_time = t;
        es_model_hist_drop(m, t, n->chunks, n->mib);
        return true;
    case ES_NOTICE_WAIT:
        m->wait_notices++;
        m->lossless_waits += n->times;
        m->lossless_wait_ms += n->ms;
        m->last_wait_time = t;
        return true;
    case ES_NOTICE_CLASSES:
        if (n->classes_switched)
            classes_switched(m, t, n);
        return true;
    case ES_NOTICE_COST:
        m->cost_notices++;
        m->cost_ms_per_s = n->ms / n->secs;
        m->cost_rts_ms_per_s = n->rts_ms / n->secs;
        m->cost_walker_ms_per_s = n->walker_ms / n->secs;
        m->cost_loop_ms_per_s = n->loop_ms / n->secs;
        m->cost_total_ms += n->ms;
        m->cost_total_mib += n->mib;
        return true;
    default:
        return false;
    }
}

double es_model_cost_s_per_gib(const struct es_model *m) {
    if (!(m->cost_total_mib > 0))
        return -1;
    return (m->cost_total_ms / 1000) / (m->cost_total_mib / 1024);
}

void es_model_on_user_marker(struct es_model *m, struct es_model_ev *e) {
    if (m->figures_only) /* read for the spans alone (spans.c) */
        return;
    note(m, ES_NOTE_MARKER, e->t, &e->r);
}

void es_model_on_user_msg(struct es_model *m, struct es_model_ev *e) {
    const struct es_payload *r = &e->r;
    struct es_notice_read n;
    size_t len;
    const uint8_t *s = es_payload_peek(r, &len);
    es_notice_text_parse(s, len, &n);
    /* Most messages are the program's (ES_NOTICE_NOT). A wait notice and
     * a cut notice are also kept as messages: worth reading in the list.
     * A drop notice is drawn as a gap, and a cost notice, once a second,
     * would crowd the list out: those are only counted. */
    if (count_notice(m, e->t, &n) && (n.kind == ES_NOTICE_DROP || n.kind == ES_NOTICE_COST))
        return;
    /* The views ask every program for its window: one that keeps none
     * says so, which is no news. */
    if (n.kind == ES_NOTICE_WINDOW_REFUSED)
        return;
    if (m->figures_only)
        return; /* the list of recent messages is history */
    note(m, ES_NOTE_MESSAGE, e->t, r);
}
