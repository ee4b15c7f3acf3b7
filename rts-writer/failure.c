/* SPDX-License-Identifier: BSD-3-Clause */
/* The program's failure, as the library sees it. The RTS's error messages
 * (errorBelch: an uncaught exception's, "Heap exhausted", ...) also go
 * into the stream, as a notice (protocol.md 1.3), before the program goes
 * on to exit: a client watching for a failure (`record --trigger
 * exit-failure`) can tell. And, for the flight recorder, with
 * GHC_EVENTLOG_DUMP_ON_FAILURE set, the RTS's exit function (exitFn, which
 * stg_exit calls with the exit status once hs_exit has ended event
 * logging: after main returns, exitWith, an uncaught exception, an
 * exhausted heap) writes the window to that file when the status is not 0
 * (cbits/server/es_dump.h). Exits that never reach stg_exit (Ctrl-C, which
 * the RTS ends by the signal again, a fatal signal, SIGKILL, the RTS's own
 * abort, C exit()) leave nothing. */
#include "es_rts.h"

#include "format/es_notice_text.h"
#include "server/es_dump.h"

#include <locale.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The exit function in place before ours (the program's, or none). */
static void (*previous_exit_fn)(int);
static atomic_bool installed;

/* The RTS's message function in place before ours. */
static RtsMsgFunction *previous_error_fn;
static atomic_bool watching_errors;

static void on_error_message(const char *fmt, va_list ap) {
    struct es_server *s = es_instance_server();
    if (s != NULL && !atomic_load(&es_rts.forked) && es_server_pid(s) == getpid()) {
        char text[1024];
        int k = snprintf(text, sizeof text, "%s", ES_NOTICE_PREFIX ES_NOTICE_ERROR_WORDS);
        va_list copy;
        va_copy(copy, ap);
        vsnprintf(text + k, sizeof text - (size_t)k, fmt, copy);
        va_end(copy);
        size_t n = strlen(text);
        while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
            text[--n] = '\0';
        es_server_post_text(s, text);
    }
    previous_error_fn(fmt, ap);
}

static void on_exit_status(int status) {
    /* The RTS may have left this thread in a locale it has freed since (a
     * heap profile whose .hp file could not be opened: GHC's census
     * formatting switches locales, and its shutdown frees its own), so
     * formatting a number here would read freed memory. The program's
     * global locale is always valid. */
    if (status != 0)
        uselocale(LC_GLOBAL_LOCALE);
    struct es_server *s = es_instance_server();
    const char *pattern = s != NULL ? es_server_dump_on_failure(s) : NULL;
    if (status != 0 && pattern != NULL && !atomic_load(&es_rts.forked) &&
        es_server_pid(s) == getpid())
        es_dump_window(s, pattern, status);
    if (previous_exit_fn != NULL)
        previous_exit_fn(status);
}

void es_rts_watch_failure(void) {
    struct es_server *s = es_instance_server();
    if (s != NULL && !atomic_exchange(&watching_errors, true)) {
        previous_error_fn = errorMsgFn;
        errorMsgFn = on_error_message;
    }
    if (s == NULL || es_server_dump_on_failure(s) == NULL || atomic_exchange(&installed, true))
        return;
    previous_exit_fn = exitFn;
    exitFn = on_exit_status;
}
