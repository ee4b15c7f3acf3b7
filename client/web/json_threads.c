/* The web view's threads (client/web/json.h): the model's threads
 * (client/model/threads.c) as the "threads" member of every state and
 * delta. Loop thread of serve, report's only thread. */
#include "json.h"

/* One thread: [id, label, state, cap (-1 unknown), running s, created s
 * (-1 unknown), running since s (-1 not running)]. */
static void row(struct es_webbuf *out, const struct es_model *m, const struct es_model_thread *th,
                bool comma) {
    es_webbuf_printf(out, "%s[%u,", comma ? "," : "", th->id);
    es_webbuf_json_str(out, th->label);
    ES_WEBBUF_ADD(out, ",");
    es_webbuf_json_str(out, es_model_thread_state(th));
    es_webbuf_printf(out, ",%d,%.6f,%.6f,%.6f]", th->cap == ES_GLOBAL_CAP ? -1 : (int)th->cap,
                     (double)es_model_thread_run_ns(m, th) / 1e9,
                     th->created ? (double)th->created / 1e9 : -1.0,
                     th->run_since ? (double)th->run_since / 1e9 : -1.0);
}

void es_webjson_threads(struct es_webbuf *out, const struct es_model *m, unsigned from) {
    const struct es_model_thread *top[ES_WEBJSON_THREAD_ROWS];
    size_t n = es_model_threads_top(m, top, ES_WEBJSON_THREAD_ROWS);
    uint64_t shown_ns = 0;
    for (size_t i = 0; i < n; i++)
        shown_ns += es_model_thread_run_ns(m, top[i]);
    uint64_t all_ns = es_model_threads_run_ns(m), known = es_model_threads_known(m);
    es_webbuf_printf(
        out,
        ",\"threads\":{\"created\":%llu,\"live\":%zu,\"finished\":%llu,"
        "\"kept\":%u,\"evicted\":%llu,\"untracked\":%llu,\"known\":%llu,\"run_s\":%.6f,"
        "\"more\":%llu,"
        "\"more_s\":%.6f,\"rows\":[",
        (unsigned long long)m->threads_created, es_model_threads(m),
        (unsigned long long)m->thr.finished, m->thr.kept, (unsigned long long)m->thr.evicted,
        (unsigned long long)m->thr.untracked, (unsigned long long)known, (double)all_ns / 1e9,
        (unsigned long long)(known > n ? known - n : 0),
        (double)(all_ns > shown_ns ? all_ns - shown_ns : 0) / 1e9);
    for (size_t i = 0; i < n; i++)
        row(out, m, top[i], i > 0);
    /* Live threads per timeline bucket from `from` on, as "tl" (null: no
     * thread yet). */
    const struct es_model_history *h = &m->h;
    es_webbuf_printf(out, "],\"live_from\":%u,\"live_tl\":[", from);
    long live[ES_MODEL_TL_BUCKETS];
    unsigned to = h->n;
    if (to > ES_MODEL_TL_BUCKETS)
        to = ES_MODEL_TL_BUCKETS;
    if (from < to)
        es_model_threads_live(m, h->width, from, to, live);
    for (unsigned i = from; i < to; i++) {
        if (live[i - from] < 0)
            es_webbuf_printf(out, "%snull", i > from ? "," : "");
        else
            es_webbuf_printf(out, "%s%ld", i > from ? "," : "", live[i - from]);
    }
    ES_WEBBUF_ADD(out, "]}");
}
