/* The model's family "markers, messages and the library's notices"
 * (client/model_impl.h): the program's markers and messages (a ring of the
 * newest), and the notices the library puts in the stream as messages
 * (cbits/es_notice.c, protocol.md 1.3), summed: drop notices (chunks
 * skipped), wait notices (the program waited for lossless clients) and
 * cost notices (what streaming costs the program). */
#include "model_impl.h"

#include <stdio.h>
#include <string.h>

static void note(struct es_model *m, enum es_model_note_kind kind, uint64_t t, const struct rd *r) {
    struct es_model_note *n = &m->notes[m->notes_n % ES_MODEL_NOTES];
    n->time = t;
    n->kind = kind;
    /* The text is the whole payload (no NUL in GHC's). */
    size_t k = r->left < ES_MODEL_NOTE_LEN - 1 ? r->left : ES_MODEL_NOTE_LEN - 1;
    for (size_t i = 0; i < k; i++) {
        uint8_t c = r->p[i];
        n->text[i] = (c < 0x20 && c != 0) || c == 0x7f ? ' ' : (char)c;
    }
    n->text[k] = '\0';
    m->notes_n++;
    if (kind == ES_NOTE_MARKER)
        es_model_hist_mark(m, t, n->text);
}

/* What every notice of the library starts with. */
#define NOTICE "eventlog-socket: "

/* The words after `prefix` (NOTICE and the notice's own words, `k`
 * bytes) when the message is the library's notice that starts so,
 * NUL-terminated in `buf` (no notice is `size` bytes long); NULL when it
 * is not that notice. */
static const char *notice_words(const struct rd *r, const char *prefix, size_t k, char *buf,
                                size_t size) {
    if (r->left >= size || r->left < k || memcmp(r->p, prefix, k) != 0)
        return NULL;
    memcpy(buf, r->p, r->left);
    buf[r->left] = '\0';
    return buf + k;
}
#define NOTICE_WORDS(r, words, buf)                                                                \
    notice_words(r, NOTICE words, sizeof NOTICE words - 1, buf, sizeof buf)

/* "eventlog-socket: dropped N chunks (X MiB)". */
static bool drop_notice(struct es_model *m, uint64_t t, const struct rd *r) {
    char text[128];
    const char *w = NOTICE_WORDS(r, "dropped ", text);
    unsigned long long chunks;
    double mib;
    if (w == NULL || sscanf(w, "%llu chunks (%lf MiB)", &chunks, &mib) != 2)
        return false;
    for (unsigned c = 0; c < ES_MODEL_MAX_CAPS; c++)
        m->caps[c].after_gap = true;
    m->drops++;
    m->dropped_chunks += chunks;
    m->dropped_mib += mib;
    m->last_drop_time = t;
    es_model_hist_drop(m, t, chunks, mib);
    return true;
}

/* "eventlog-socket: the program waited X ms (N times) for lossless clients
 * in the last S s". */
static bool wait_notice(struct es_model *m, uint64_t t, const struct rd *r) {
    char text[160];
    const char *w = NOTICE_WORDS(r, "the program waited ", text);
    double ms;
    unsigned long long times;
    if (w == NULL || sscanf(w, "%lf ms (%llu times)", &ms, &times) != 2 || ms < 0)
        return false;
    m->wait_notices++;
    m->lossless_waits += times;
    m->lossless_wait_ms += ms;
    m->last_wait_time = t;
    return true;
}

/* "eventlog-socket: streaming cost X ms of CPU in the last S s (RTS
 * threads W, walker K, loop L), M MiB sent". */
static bool cost_notice(struct es_model *m, const struct rd *r) {
    char text[200];
    const char *w = NOTICE_WORDS(r, "streaming cost ", text);
    double ms, secs, rts, walker, loop, mib;
    if (w == NULL ||
        sscanf(w,
               "%lf ms of CPU in the last %lf s (RTS threads %lf, walker %lf, loop %lf), %lf MiB "
               "sent",
               &ms, &secs, &rts, &walker, &loop, &mib) != 6 ||
        !(ms >= 0) || !(secs > 0) || !(mib >= 0))
        return false;
    m->cost_notices++;
    m->cost_ms_per_s = ms / secs;
    m->cost_rts_ms_per_s = rts / secs;
    m->cost_walker_ms_per_s = walker / secs;
    m->cost_loop_ms_per_s = loop / secs;
    m->cost_total_ms += ms;
    m->cost_total_mib += mib;
    return true;
}

double es_model_cost_s_per_gib(const struct es_model *m) {
    if (!(m->cost_total_mib > 0))
        return -1;
    return (m->cost_total_ms / 1000) / (m->cost_total_mib / 1024);
}

void es_model_on_user_marker(struct es_model *m, struct es_model_ev *e) {
    note(m, ES_NOTE_MARKER, e->t, &e->r);
}

void es_model_on_user_msg(struct es_model *m, struct es_model_ev *e) {
    const struct rd *r = &e->r;
    /* Most messages are the program's: one comparison tells. */
    bool notice = r->left >= sizeof NOTICE - 1 && memcmp(r->p, NOTICE, sizeof NOTICE - 1) == 0;
    /* A wait notice is also kept as a message: when and how long the
     * program waited is worth reading in the list. A cost notice, once a
     * second, would crowd the list out: it is only counted. */
    if (notice && (drop_notice(m, e->t, r) || cost_notice(m, r)))
        return;
    if (notice)
        wait_notice(m, e->t, r);
    note(m, ES_NOTE_MESSAGE, e->t, r);
}
