/* SPDX-License-Identifier: BSD-3-Clause */
/* For SA_RESTART and friends. */
#define _GNU_SOURCE
#include "es_signal.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

static atomic_uint interrupts;
/* The handler ours calls on, in two slots: a new one is written into the
 * slot the handler does not read, then published, so that a handler
 * running meanwhile on another thread never reads a half-written one. */
static struct sigaction chained_prev[2];
static atomic_int chained_slot;

/* Call the handler `prev` as the kernel would have. The default action of
 * SIGINT ends the process: it is restored and the signal raised again, to
 * be taken once this handler returns. */
static void call_previous(const struct sigaction *prev, int sig, siginfo_t *info, void *uctx) {
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction != NULL)
            prev->sa_sigaction(sig, info, uctx);
    } else if (prev->sa_handler == SIG_DFL) {
        sigaction(sig, prev, NULL);
        raise(sig);
    } else if (prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
    }
}

static void on_sigint(int sig, siginfo_t *info, void *uctx) {
    int saved = errno;
    atomic_fetch_add(&interrupts, 1);
    call_previous(&chained_prev[atomic_load(&chained_slot)], sig, info, uctx);
    errno = saved;
}

/* Our handler in front of `prev`, with its mask and flags: SA_RESETHAND
 * included, so that a handler the kernel would have reset after one
 * signal (GHC's main thread's interrupt handler, after which a second
 * Ctrl-C kills) still is. */
static struct sigaction in_front_of(const struct sigaction *prev,
                                    void (*fn)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_mask = prev->sa_mask;
    sa.sa_flags = SA_SIGINFO | (prev->sa_flags & (SA_RESTART | SA_ONSTACK | SA_RESETHAND));
    return sa;
}

/* Serialises es_signal_chain's callers (RTS threads may race). */
static atomic_flag chaining = ATOMIC_FLAG_INIT;

void es_signal_chain(void) {
    if (atomic_flag_test_and_set(&chaining))
        return; /* another thread is at it */
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) == 0 &&
        !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigint) &&
        ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_IGN)) {
        int next = 1 - atomic_load(&chained_slot);
        chained_prev[next] = cur;
        atomic_store(&chained_slot, next);
        struct sigaction sa = in_front_of(&cur, on_sigint);
        sigaction(SIGINT, &sa, NULL);
    }
    atomic_flag_clear(&chaining);
}

unsigned es_signal_count(void) {
    return atomic_load(&interrupts);
}

void es_signal_note(void) {
    atomic_fetch_add(&interrupts, 1);
}

/* ---- the guard ----------------------------------------------------------- */

static const int guarded[2] = {SIGINT, SIGTERM};
static struct sigaction guard_prev[2];
static bool guard_set[2];
static void (*_Atomic guard_cleanup)(void *);
static void *_Atomic guard_ctx;

static void on_guarded(int sig, siginfo_t *info, void *uctx) {
    int saved = errno;
    void (*fn)(void *) = atomic_load(&guard_cleanup);
    if (fn != NULL)
        fn(atomic_load(&guard_ctx));
    for (int i = 0; i < 2; i++)
        if (guarded[i] == sig)
            call_previous(&guard_prev[i], sig, info, uctx);
    errno = saved;
}

/* Guards in force (threads waiting at once), under guard_lock: the first
 * installs the handlers, the last one out restores the program's. A guard
 * taken while another is in force must not read our own handler as the
 * program's: on_guarded would then call itself. */
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned guard_depth;

void es_signal_guard(void (*cleanup)(void *), void *ctx) {
    assert(cleanup != NULL);
    pthread_mutex_lock(&guard_lock);
    if (guard_depth++ > 0) {
        pthread_mutex_unlock(&guard_lock);
        return;
    }
    atomic_store(&guard_ctx, ctx);
    atomic_store(&guard_cleanup, cleanup);
    for (int i = 0; i < 2; i++) {
        guard_set[i] = false;
        if (sigaction(guarded[i], NULL, &guard_prev[i]) != 0 ||
            (guard_prev[i].sa_flags & SA_SIGINFO) || guard_prev[i].sa_handler != SIG_DFL)
            continue; /* the program handles it, or ignores it: not ours */
        struct sigaction sa = in_front_of(&guard_prev[i], on_guarded);
        guard_set[i] = sigaction(guarded[i], &sa, NULL) == 0;
    }
    pthread_mutex_unlock(&guard_lock);
}

void es_signal_unguard(void) {
    pthread_mutex_lock(&guard_lock);
    assert(guard_depth > 0);
    if (guard_depth > 0 && --guard_depth == 0) {
        for (int i = 0; i < 2; i++)
            if (guard_set[i])
                sigaction(guarded[i], &guard_prev[i], NULL);
        atomic_store(&guard_cleanup, NULL);
    }
    pthread_mutex_unlock(&guard_lock);
}
