/* SPDX-License-Identifier: BSD-3-Clause */
/* es_signal: the counting SIGINT handler chained in front of the one that
 * is installed keeps that one's behaviour (its handler runs; SA_RESETHAND
 * still makes the next SIGINT the default one, which kills); a handler
 * installed later replaces the chain until es_signal_chain renews it; an
 * ignored SIGINT is left ignored; the guard removes the socket file (its
 * cleanup runs) before a SIGTERM or SIGINT with the default action ends
 * the process, and leaves a program's own handler alone. */
#define _GNU_SOURCE
#include "base/es_signal.h"
#include "../unit.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int first_calls, second_calls;

static void first(int sig) {
    (void)sig;
    atomic_fetch_add(&first_calls, 1);
}

static void second(int sig) {
    (void)sig;
    atomic_fetch_add(&second_calls, 1);
}

static void install(void (*fn)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    sigaction(SIGINT, &sa, NULL);
}

/* Run `fn` in a child; its wait status. */
static int in_child(void (*fn)(void)) {
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

static void second_sigint(void) {
    raise(SIGINT);
}

static int cleanup_pipe[2];

static void cleanup(void *ctx) {
    (void)ctx;
    if (write(cleanup_pipe[1], "x", 1) != 1)
        _exit(3);
}

static void guarded_sigterm(void) {
    es_signal_guard(cleanup, NULL);
    raise(SIGTERM);
}

static void guarded_handled(void) {
    atomic_store(&first_calls, 0);
    signal(SIGTERM, first);
    es_signal_guard(cleanup, NULL);
    raise(SIGTERM);
    es_signal_unguard();
    _exit(atomic_load(&first_calls) == 1 ? 0 : 4);
}

static bool cleaned(void) {
    char x;
    return read(cleanup_pipe[0], &x, 1) == 1;
}

/* GHC's main's handler, reset to the default after one signal, with the
 * counting handler chained in front of it, and one SIGINT. */
static void chained_once(void) {
    install(first, SA_RESETHAND);
    es_signal_chain();
    raise(SIGINT);
}

UNIT_CASE(signal_chain_keeps_behaviour) {
    chained_once();
    ok(es_signal_count() == 1 && atomic_load(&first_calls) == 1,
       "a SIGINT is counted, and the handler it was chained to runs");
    int status = in_child(second_sigint);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT,
       "after it, as SA_RESETHAND says, a second SIGINT kills");
}

UNIT_CASE(signal_chain_replaced_and_renewed) {
    chained_once();
    install(second, 0);
    raise(SIGINT);
    ok(es_signal_count() == 1 && atomic_load(&second_calls) == 1,
       "a handler installed later replaces the chain");
    es_signal_chain();
    es_signal_chain(); /* twice: not chained in front of itself */
    raise(SIGINT);
    raise(SIGINT);
    ok(es_signal_count() == 3 && atomic_load(&second_calls) == 3,
       "renewed, the chain counts again, and the program's handler still runs (%u, %d)",
       es_signal_count(), atomic_load(&second_calls));

    signal(SIGINT, SIG_IGN);
    es_signal_chain();
    raise(SIGINT);
    ok(es_signal_count() == 3, "an ignored SIGINT stays ignored");
    signal(SIGINT, SIG_DFL);
}

UNIT_CASE(signal_guard) {
    ok(pipe(cleanup_pipe) == 0, "a pipe");
    int status = in_child(guarded_sigterm);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && cleaned(),
       "guarded, a SIGTERM cleans up, then ends the process as it would have");
    status = in_child(guarded_handled);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "a program's own SIGTERM handler is left alone by the guard");
    es_signal_guard(cleanup, NULL);
    es_signal_unguard();
    status = in_child(guarded_sigterm);
    ok(WIFSIGNALED(status) && cleaned(), "a guard after an unguard works again");
}

/* Two threads waiting for a client at once take the guard twice: the
 * second must not take the first's handler for the program's (a SIGTERM
 * would then call it over and over), and the program's default action
 * comes back only when both are done. */
static void sigterm_twice_guarded(void) {
    es_signal_guard(cleanup, NULL);
    es_signal_guard(cleanup, NULL);
    es_signal_unguard();
    raise(SIGTERM); /* one guard is still in force */
}

UNIT_CASE(signal_guard_taken_twice) {
    ok(pipe(cleanup_pipe) == 0, "a pipe");
    int status = in_child(sigterm_twice_guarded);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && cleaned(),
       "guarded twice, unguarded once: a SIGTERM cleans up, then ends the process");
    es_signal_guard(cleanup, NULL);
    es_signal_guard(cleanup, NULL);
    es_signal_unguard();
    es_signal_unguard();
    struct sigaction now;
    ok(sigaction(SIGTERM, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
           now.sa_handler == SIG_DFL,
       "after both, SIGTERM's action is the default again");
}
