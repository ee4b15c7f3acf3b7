/* The threads lines of `eventlog-socket top` (client/top/draw.h): live,
 * created and finished threads, and the three that ran most, with their
 * labels, running time, share and state now (client/model/threads.c).
 * Loop thread only, between initscr and endwin. */
#include "draw.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#define TOP_THREADS 3

int es_top_draw_threads(const struct es_top_view *v, int y) {
    const struct es_model *m = v->model;
    uint64_t all = es_model_threads_run_ns(m);
    char line[1024];
    snprintf(line, sizeof line, "live %zu   created %llu   finished %llu   ran %.2f s in all",
             es_model_threads(m), (unsigned long long)m->threads_created,
             (unsigned long long)m->thr.finished, (double)all / 1e9);
    attron(A_BOLD);
    mvaddnstr(y, 0, "Thrd", COLS);
    attroff(A_BOLD);
    if (COLS > 6)
        mvaddnstr(y, 6, line, COLS - 6);
    y++;
    const struct es_model_thread *top[TOP_THREADS];
    size_t n = es_model_threads_top(m, top, TOP_THREADS);
    size_t len = 0;
    line[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof line; i++) {
        uint64_t ns = es_model_thread_run_ns(m, top[i]);
        int k =
            snprintf(line + len, sizeof line - len, "%s%s #%u %.3f s %.0f%% %s", i ? "  |  " : "",
                     top[i]->label[0] ? top[i]->label : "(no label)", top[i]->id, (double)ns / 1e9,
                     all ? 100.0 * (double)ns / (double)all : 0, es_model_thread_state(top[i]));
        if (k < 0)
            break;
        len += (size_t)k;
    }
    if (n > 0 && COLS > 6)
        mvaddnstr(y, 6, line, COLS - 6);
    return n > 0 ? y + 1 : y;
}
