/* SPDX-License-Identifier: BSD-3-Clause */
/* For pthread_timedjoin_np-free waits with clock_gettime. */
#define _GNU_SOURCE
#include "es_registry.h"

#include "format/es_control.h"
#include "es_gate.h"
#include "base/es_log.h"
#include "base/es_queue.h"
#include "base/es_time.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A handler: this library's (fn, with a mutable pointer) or upstream's
 * (ufn, const), never both. */
struct command {
    eventlog_socket_command_fn fn;
    EventlogSocketControlCommandHandler *ufn;
    const void *data;
};

/* A namespace's commands act like the built-in costly ones (es_gate.h): one
 * command at a time, not sooner than the interval after the previous one
 * began, nor sooner than ES_GATE_COST_FACTOR times the CPU time it took; a
 * command requested again while one request for it waits is folded into
 * that one (a command running does not count: one more run is queued). So
 * a client flooding a command whose handler forces a GC (the example
 * of docs/haskell.md) gets one GC a second, and the queue never overflows. */
struct limit {
    bool pending[256]; /* a run of this id is queued, not yet begun */
    bool acted;        /* a command has run */
    uint64_t last_ms;  /* when the last one began (es_time_monotonic_ms) */
    uint64_t gap_ms;   /* the wait after it: the interval, or the cost factor
                        * times its CPU time */
};

/* A queue of work for one thread: commands of one namespace, or hooks. */
struct worker {
    pthread_cond_t cond;
    uint8_t items[ES_REGISTRY_QUEUE]; /* command ids (for hooks: the hook) */
    unsigned head, count;
    bool started, busy;
    pthread_t thread;
};

struct EventlogSocketControlNamespace {
    char name[256]; /* NUL-terminated */
    uint8_t len;
    struct command cmds[256];
    struct worker worker;
    struct es_queue_node node; /* in reg.namespaces */
    struct limit limit;        /* the rate limit on its commands */
};

/* What the hook thread's queue holds: a hook (all its handlers), or
 * HOOK_ONE + k: only the k-th POST_START handler. */
#define HOOK_ONE 2
_Static_assert(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING < HOOK_ONE &&
                   EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING < HOOK_ONE,
               "a hook is its own queue item, below HOOK_ONE");

/* As struct command: this library's handler or upstream's. */
struct hook {
    eventlog_socket_hook_fn fn;
    EventlogSocketHookHandler *ufn;
    const void *data;
    struct hook *next;
};

static void call_hook(const struct hook *h) {
    assert((h->fn == NULL) != (h->ufn == NULL)); /* one handler, never both */
    if (h->fn != NULL)
        h->fn((void *)h->data);
    else
        h->ufn(h->data);
}

/* One lock for everything: registrations are rare, dispatch is a lookup. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t idle;        /* a handler finished */
    struct es_queue namespaces; /* eventlog_socket_namespace, newest first; never shrinks */
    /* Each hook's handlers, in registration order, linked by `next`: not an
     * es_queue, since they are walked without the lock while a
     * registration may append (es_registry_post_start, es_registry_quiesce),
     * which a singly linked list that only grows at its end allows and a
     * circular one, whose last node points back at the head, does not. */
    struct hook *hooks[2];
    struct worker hook_worker;
    bool running, quiesced;
    /* es_registry_post_start has run the POST_START hooks registered by
     * then (or is running them); hooks registered later run at
     * registration instead. */
    bool started;
    unsigned post_start_count; /* POST_START hooks registered */
    uint64_t run, dropped, folded;
    unsigned fail_starts;          /* tests: thread starts still to fail */
    unsigned interval_ms;          /* the rate limit (es_registry_set_interval) */
    uint64_t (*collections)(void); /* es_registry_set_rts */
    unsigned (*capabilities)(void);
} reg = {
    .interval_ms = ES_GATE_DEFAULT_MS,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
    .hook_worker = {.cond = PTHREAD_COND_INITIALIZER},
    .namespaces = {.head = {&reg.namespaces.head, &reg.namespaces.head, &reg.namespaces}},
};

/* The namespace whose list node is `e`. */
#define NAMESPACE(e) ES_QUEUE_DATA(e, eventlog_socket_namespace, node)

static eventlog_socket_namespace *find(const uint8_t *name, size_t len) {
    ES_QUEUE_FOREACH(e, &reg.namespaces) {
        const eventlog_socket_namespace *n = NAMESPACE(e);
        if (n->len == len && memcmp(n->name, name, len) == 0)
            return NAMESPACE(e);
    }
    return NULL;
}

int eventlog_socket_register_namespace(const char *name, size_t len,
                                       eventlog_socket_namespace **out) {
    if (name == NULL || out == NULL || len == 0 || len > 255 ||
        (len == strlen(ES_CONTROL_UPSTREAM_NAMESPACE) &&
         memcmp(name, ES_CONTROL_UPSTREAM_NAMESPACE, len) == 0))
        return EVENTLOG_SOCKET_EINVAL;
    pthread_mutex_lock(&reg.lock);
    int r = 0;
    if (find((const uint8_t *)name, len) != NULL) {
        r = EVENTLOG_SOCKET_EEXIST;
    } else {
        eventlog_socket_namespace *n = calloc(1, sizeof *n);
        if (n == NULL) {
            r = EVENTLOG_SOCKET_ENOMEM;
        } else {
            memcpy(n->name, name, len);
            n->len = (uint8_t)len;
            pthread_cond_init(&n->worker.cond, NULL);
            es_queue_insert_head(&reg.namespaces, &n->node);
            *out = n;
        }
    }
    pthread_mutex_unlock(&reg.lock);
    return r;
}

int es_registry_add_command(eventlog_socket_namespace *ns, uint8_t id,
                            eventlog_socket_command_fn fn, EventlogSocketControlCommandHandler *ufn,
                            const void *data) {
    if (ns == NULL || id == 0 || (fn == NULL) == (ufn == NULL))
        return EVENTLOG_SOCKET_EINVAL;
    pthread_mutex_lock(&reg.lock);
    int r = 0;
    if (ns->cmds[id].fn != NULL || ns->cmds[id].ufn != NULL)
        r = EVENTLOG_SOCKET_EEXIST;
    else
        ns->cmds[id] = (struct command){fn, ufn, data};
    pthread_mutex_unlock(&reg.lock);
    return r;
}

int eventlog_socket_register_command(eventlog_socket_namespace *ns, uint8_t id,
                                     eventlog_socket_command_fn fn, void *data) {
    if (fn == NULL)
        return EVENTLOG_SOCKET_EINVAL;
    return es_registry_add_command(ns, id, fn, NULL, data);
}

const char *eventlog_socket_namespace_name(const eventlog_socket_namespace *ns) {
    return ns ? ns->name : "";
}

static int enqueue(struct worker *w, uint8_t item, void *(*run)(void *), void *arg);
static void hooks_not_queued(int err, bool late);
static void *hook_thread(void *arg);

int es_registry_add_hook(int hook, eventlog_socket_hook_fn fn, EventlogSocketHookHandler *ufn,
                         const void *data) {
    if ((hook != EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING &&
         hook != EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING) ||
        (fn == NULL) == (ufn == NULL))
        return EVENTLOG_SOCKET_EINVAL;
    struct hook *h = malloc(sizeof *h);
    if (h == NULL)
        return EVENTLOG_SOCKET_ENOMEM;
    *h = (struct hook){.fn = fn, .ufn = ufn, .data = data, .next = NULL};
    pthread_mutex_lock(&reg.lock);
    /* In registration order. */
    struct hook **link = &reg.hooks[hook];
    unsigned index = 0;
    while (*link != NULL) {
        link = &(*link)->next;
        index++;
    }
    *link = h;
    if (hook == EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING) {
        reg.post_start_count++;
        /* Registered once event logging runs (from Haskell's main,
         * typically): the start has passed, so this hook runs for it now,
         * alone, on the hook thread. */
        if (reg.started && index < 256 - HOOK_ONE)
            hooks_not_queued(
                enqueue(&reg.hook_worker, (uint8_t)(HOOK_ONE + index), hook_thread, NULL), true);
    }
    pthread_mutex_unlock(&reg.lock);
    return 0;
}

int eventlog_socket_add_hook(EventlogSocketHook hook, eventlog_socket_hook_fn fn, void *data) {
    if (fn == NULL)
        return EVENTLOG_SOCKET_EINVAL;
    return es_registry_add_hook((int)hook, fn, NULL, data);
}

/* ---- the threads -------------------------------------------------------- */

/* With the lock held: wait for work that may run now; false once quiesced. */
static bool next_item(struct worker *w, uint8_t *item) {
    while (!reg.quiesced && (w->count == 0 || !reg.running))
        pthread_cond_wait(&w->cond, &reg.lock);
    if (reg.quiesced)
        return false;
    /* One item at a time per thread; the queue within its bounds. */
    assert(!w->busy && w->started);
    assert(w->count <= ES_REGISTRY_QUEUE && w->head < ES_REGISTRY_QUEUE);
    *item = w->items[w->head];
    w->head = (w->head + 1) % ES_REGISTRY_QUEUE;
    w->count--;
    w->busy = true;
    return true;
}

static void done_item(struct worker *w) {
    assert(w->busy);
    w->busy = false;
    reg.run++;
    pthread_cond_broadcast(&reg.idle);
}

/* With the lock held: wait until the namespace's limit lets a command
 * run; false once quiesced. */
static bool wait_turn(eventlog_socket_namespace *n) {
    struct limit *l = &n->limit;
    while (!reg.quiesced && l->acted && reg.interval_ms > 0) {
        uint64_t gap = l->gap_ms > reg.interval_ms ? l->gap_ms : reg.interval_ms;
        uint64_t now = es_time_monotonic_ms();
        if (now >= l->last_ms + gap)
            break;
        struct timespec until = es_time_realtime_in_ms((unsigned)(l->last_ms + gap - now));
        pthread_cond_timedwait(&n->worker.cond, &reg.lock, &until);
    }
    return !reg.quiesced;
}

/* Run one handler; returns what it cost the program in nanoseconds (see
 * es_registry_set_interval): its thread's CPU time, not the time it slept
 * or waited, times the capabilities when the RTS collected meanwhile. */
static uint64_t run_command(eventlog_socket_namespace *n, uint8_t id, const struct command *c,
                            uint64_t (*collections)(void), unsigned (*capabilities)(void)) {
    bool rts = collections != NULL && capabilities != NULL;
    uint64_t gcs = rts ? collections() : 0;
    uint64_t cpu = es_time_thread_cpu_ns();
    assert((c->fn == NULL) != (c->ufn == NULL)); /* one handler, never both */
    if (c->fn != NULL)
        c->fn(n, id, (void *)c->data);
    else
        c->ufn(n, id, c->data);
    cpu = es_time_thread_cpu_ns() - cpu;
    unsigned caps = rts && collections() != gcs ? capabilities() : 1;
    return cpu * (caps > 0 ? caps : 1);
}

static void *namespace_thread(void *arg) {
    eventlog_socket_namespace *n = arg;
    pthread_mutex_lock(&reg.lock);
    uint8_t id;
    while (next_item(&n->worker, &id)) {
        if (!wait_turn(n)) {
            /* Quiesced while it waited for its turn: it never runs. */
            n->worker.busy = false;
            reg.dropped++;
            pthread_cond_broadcast(&reg.idle);
            break;
        }
        /* Queued only while no other run of it was (es_registry_dispatch),
         * and only once registered; commands are never unregistered. */
        assert(n->limit.pending[id]);
        assert(n->cmds[id].fn != NULL || n->cmds[id].ufn != NULL);
        n->limit.pending[id] = false; /* a request from now on runs again */
        n->limit.acted = true;
        n->limit.last_ms = es_time_monotonic_ms();
        struct command c = n->cmds[id];
        uint64_t (*collections)(void) = reg.collections;
        unsigned (*capabilities)(void) = reg.capabilities;
        pthread_mutex_unlock(&reg.lock);
        uint64_t cost = run_command(n, id, &c, collections, capabilities) / 1000000;
        pthread_mutex_lock(&reg.lock);
        n->limit.gap_ms = cost * ES_GATE_COST_FACTOR;
        done_item(&n->worker);
    }
    pthread_mutex_unlock(&reg.lock);
    return NULL;
}

static void *hook_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&reg.lock);
    uint8_t item;
    while (next_item(&reg.hook_worker, &item)) {
        int hook = item < HOOK_ONE ? item : EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING;
        unsigned skip = item < HOOK_ONE ? 0 : item - HOOK_ONE;
        /* A single handler is queued only for one that exists. */
        assert(item < HOOK_ONE || skip < reg.post_start_count);
        for (struct hook *h = reg.hooks[hook]; h != NULL; h = h->next) {
            if (skip > 0) {
                skip--;
                continue;
            }
            pthread_mutex_unlock(&reg.lock);
            call_hook(h);
            pthread_mutex_lock(&reg.lock);
            if (reg.quiesced || item >= HOOK_ONE)
                break;
        }
        done_item(&reg.hook_worker);
    }
    pthread_mutex_unlock(&reg.lock);
    return NULL;
}

/* With the lock held: queue `item` for `w`, starting its thread the first
 * time (and again at the next item when no thread could be created).
 * Returns 0, or counts a drop and returns -ESHUTDOWN (quiesced), -ENOSPC
 * (the queue is full) or pthread_create's error, negated. */
static int enqueue(struct worker *w, uint8_t item, void *(*run)(void *), void *arg) {
    if (reg.quiesced || w->count == ES_REGISTRY_QUEUE) {
        reg.dropped++;
        return reg.quiesced ? -ESHUTDOWN : -ENOSPC;
    }
    if (!w->started) {
        /* The library's threads never take the program's signals. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int r = reg.fail_starts > 0 ? (reg.fail_starts--, EAGAIN)
                                    : pthread_create(&w->thread, &attr, run, arg);
        pthread_attr_destroy(&attr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
            reg.dropped++;
            return -r;
        }
        w->started = true;
    }
    w->items[(w->head + w->count) % ES_REGISTRY_QUEUE] = item;
    w->count++;
    pthread_cond_signal(&w->cond);
    return 0;
}

/* With the lock held: a run of hooks not queued (`err` from enqueue; 0:
 * it was) is logged, but for the quiesce, which ends them on purpose:
 * the run for a later client, or (`late`) a hook registered after the
 * start, for the start. */
static void hooks_not_queued(int err, bool late) {
    static struct es_log_limit log = {.what = "runs of hooks not made"};
    if (err == 0 || err == -ESHUTDOWN)
        return;
    const char *what = late ? "a POST_START hook registered after the start was not run for it"
                            : "POST_START hooks not run for a client";
    if (err == -ENOSPC)
        es_log_limited(&log, es_time_monotonic_ms(),
                       "%s: %d runs are waiting for them already (a slow hook?)", what,
                       ES_REGISTRY_QUEUE);
    else
        es_log_limited(&log, es_time_monotonic_ms(),
                       "%s: no thread could be started for %s (%s); %s", what, late ? "it" : "them",
                       strerror(-err),
                       late ? "it runs for the next client" : "the next client tries again");
}

bool es_registry_dispatch(const uint8_t *ns, size_t ns_len, uint8_t id) {
    static struct es_log_limit log_dropped = {.what = "custom commands dropped"};
    pthread_mutex_lock(&reg.lock);
    eventlog_socket_namespace *n = find(ns, ns_len);
    bool known = n != NULL && (n->cmds[id].fn != NULL || n->cmds[id].ufn != NULL);
    int err = 0;
    if (known && n->limit.pending[id]) {
        reg.folded++; /* one run of it is queued already */
    } else if (known) {
        err = enqueue(&n->worker, id, namespace_thread, n);
        n->limit.pending[id] = err == 0;
    }
    pthread_mutex_unlock(&reg.lock);
    /* The loop thread is the only caller: the limiter needs no lock. */
    if (err == -ENOSPC)
        es_log_limited(&log_dropped, es_time_monotonic_ms(),
                       "command %u of namespace \"%s\" dropped: %d are waiting for its handler "
                       "already (a slow handler?)",
                       (unsigned)id, n->name, ES_REGISTRY_QUEUE);
    else if (err != 0 && err != -ESHUTDOWN)
        es_log_limited(&log_dropped, es_time_monotonic_ms(),
                       "command %u of namespace \"%s\" dropped: no thread could be started "
                       "for its handlers (%s); the next command tries again",
                       (unsigned)id, n->name, strerror(-err));
    return known;
}

static void queue_hook(int hook) {
    if (reg.hooks[hook] != NULL)
        hooks_not_queued(enqueue(&reg.hook_worker, (uint8_t)hook, hook_thread, NULL), false);
}

void es_registry_client_connected(void) {
    pthread_mutex_lock(&reg.lock);
    queue_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING);
    pthread_mutex_unlock(&reg.lock);
}

void es_registry_post_start(void) {
    pthread_mutex_lock(&reg.lock);
    bool first = !reg.started && !reg.quiesced;
    reg.started = true;
    /* Hooks registered from now on run at registration instead. */
    unsigned n = reg.post_start_count;
    struct hook *h = reg.hooks[EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING];
    pthread_mutex_unlock(&reg.lock);
    if (!first)
        return;
    /* The list only grows at its end, so walking its first n unlocked is
     * safe, as long as the last one's link (which a registration may be
     * writing) is not read. */
    for (unsigned i = 0; i < n; i++) {
        assert(h != NULL);
        call_hook(h);
        if (i + 1 < n)
            h = h->next;
    }
}

void es_registry_set_running(bool running) {
    pthread_mutex_lock(&reg.lock);
    reg.running = running && !reg.quiesced;
    ES_QUEUE_FOREACH(e, &reg.namespaces) {
        pthread_cond_signal(&NAMESPACE(e)->worker.cond);
    }
    pthread_cond_signal(&reg.hook_worker.cond);
    pthread_mutex_unlock(&reg.lock);
}

static bool any_busy(void) {
    if (reg.hook_worker.busy)
        return true;
    ES_QUEUE_FOREACH(e, &reg.namespaces) {
        if (NAMESPACE(e)->worker.busy)
            return true;
    }
    return false;
}

void es_registry_quiesce(unsigned timeout_ms) {
    pthread_mutex_lock(&reg.lock);
    if (reg.quiesced) {
        pthread_mutex_unlock(&reg.lock);
        return;
    }
    struct hook *pre_end =
        reg.running ? reg.hooks[EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING] : NULL;
    pthread_mutex_unlock(&reg.lock);
    /* The list only grows at its end, so walking it unlocked is safe. */
    for (struct hook *h = pre_end; h != NULL; h = h->next)
        call_hook(h);
    pthread_mutex_lock(&reg.lock);
    reg.quiesced = true;
    reg.running = false;
    ES_QUEUE_FOREACH(e, &reg.namespaces) {
        eventlog_socket_namespace *n = NAMESPACE(e);
        reg.dropped += n->worker.count;
        n->worker.count = 0;
        pthread_cond_signal(&n->worker.cond);
    }
    reg.dropped += reg.hook_worker.count;
    reg.hook_worker.count = 0;
    pthread_cond_signal(&reg.hook_worker.cond);
    struct timespec until = es_time_realtime_in_ms(timeout_ms);
    while (any_busy())
        if (pthread_cond_timedwait(&reg.idle, &reg.lock, &until) != 0)
            break;
    bool stuck = any_busy();
    pthread_mutex_unlock(&reg.lock);
    if (stuck)
        es_log("a command handler is still running after %u ms; the program exits without "
               "waiting for it",
               timeout_ms);
}

void es_registry_counts(uint64_t *run, uint64_t *dropped) {
    pthread_mutex_lock(&reg.lock);
    *run = reg.run;
    *dropped = reg.dropped;
    pthread_mutex_unlock(&reg.lock);
}

void es_registry_fail_thread_starts(unsigned n) {
    pthread_mutex_lock(&reg.lock);
    reg.fail_starts = n;
    pthread_mutex_unlock(&reg.lock);
}

uint64_t es_registry_folded(void) {
    pthread_mutex_lock(&reg.lock);
    uint64_t n = reg.folded;
    pthread_mutex_unlock(&reg.lock);
    return n;
}

void es_registry_set_rts(uint64_t (*collections)(void), unsigned (*capabilities)(void)) {
    pthread_mutex_lock(&reg.lock);
    reg.collections = collections;
    reg.capabilities = capabilities;
    pthread_mutex_unlock(&reg.lock);
}

void es_registry_set_interval(unsigned ms) {
    pthread_mutex_lock(&reg.lock);
    reg.interval_ms = ms;
    pthread_mutex_unlock(&reg.lock);
}
