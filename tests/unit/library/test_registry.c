/* SPDX-License-Identifier: BSD-3-Clause */
/* Custom commands and hooks without the RTS: registration rules (the
 * reserved namespace, duplicates, many commands), commands waiting until
 * the RTS is up, a slow handler holding up only its own namespace,
 * repeated requests folded into one, the rate limit per namespace (the
 * interval, and fifty times a handler's CPU time, times the capabilities
 * when the RTS collected while it ran), hooks (POST_START on
 * the thread that declares the RTS ready, once; then per later client;
 * both handler types), a quiesce that runs PRE_END and stops all, and
 * what happens when no thread can be started for handlers or hooks. */
#define _GNU_SOURCE
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "format/es_control.h"
#include "base/es_log.h"
#include "control/es_registry.h"
#include "server_util.h"
#include "../unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

static atomic_int ran[4][256];
static atomic_int slow_started, hooks_post, hooks_pre;
static atomic_bool release_slow;

static void count(const eventlog_socket_namespace *ns, uint8_t id, void *data) {
    (void)ns;
    atomic_fetch_add(&ran[(intptr_t)data][id], 1);
}

static void slow(const eventlog_socket_namespace *ns, uint8_t id, void *data) {
    atomic_store(&slow_started, 1);
    while (!atomic_load(&release_slow))
        sleep_ms(5);
    count(ns, id, data);
}

/* Runs of lim/1, lim/2 and lim/3; lim/2 and lim/3 burn CPU, and lim/3
 * "collects": it moves the collection count the registry is given in
 * place of the RTS's (four capabilities). */
static atomic_int lim_runs;
static atomic_uint_fast64_t fake_gcs;
/* When the first lim/1 run began (CLOCK_MONOTONIC ms, the registry's
 * clock), or 0 before it. */
static atomic_uint_fast64_t lim1_began;

static uint64_t fake_collections(void) {
    return atomic_load(&fake_gcs);
}

static unsigned fake_capabilities(void) {
    return 4;
}

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void timed(const eventlog_socket_namespace *ns, uint8_t id, void *data) {
    (void)ns;
    (void)data;
    uint_fast64_t none = 0;
    if (id == 1)
        atomic_compare_exchange_strong(&lim1_began, &none, now_ms());
    if (id == 2 || id == 3) { /* 20 or 10 ms of CPU */
        long cpu_ns = id == 2 ? 20000000L : 10000000L;
        struct timespec t0, t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        do
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < cpu_ns);
    }
    if (id == 3)
        atomic_fetch_add(&fake_gcs, 1);
    atomic_fetch_add(&lim_runs, 1);
}

static atomic_int hooks_post_upstream, hooks_late, post_thread_is_caller;
static pthread_t main_thread;
static const int upstream_data = 42;

static void post(void *data) {
    (void)data;
    atomic_fetch_add(&hooks_post, 1);
    if (pthread_equal(pthread_self(), main_thread) && atomic_load(&hooks_post_upstream) == 0)
        atomic_fetch_add(&post_thread_is_caller, 1);
}

/* Upstream's handler type: a const pointer. */
static void post_upstream(const void *data) {
    atomic_fetch_add(&hooks_post_upstream, 1);
    if (pthread_equal(pthread_self(), main_thread) && data == &upstream_data &&
        atomic_load(&hooks_post) == 1)
        atomic_fetch_add(&post_thread_is_caller, 1);
}

static void late(void *data) {
    (void)data;
    atomic_fetch_add(&hooks_late, 1);
}

static void pre(void *data) {
    (void)data;
    atomic_fetch_add(&hooks_pre, 1);
}

/* Wait (at most 5 s) until *v reaches n. */
static int wait_for(atomic_int *v, int n) {
    for (int i = 0; i < 1000 && atomic_load(v) < n; i++)
        sleep_ms(5);
    return atomic_load(v);
}

static size_t feed(const char *ns, uint8_t id) {
    uint8_t frame[300] = {0xF0, 0x9E, 0x97, 0x8C, 0x00};
    size_t len = strlen(ns);
    frame[5] = (uint8_t)len;
    memcpy(frame + 6, ns, len);
    frame[6 + len] = id;
    struct es_control_parser p;
    es_control_init(&p);
    p.custom = es_registry_dispatch;
    return es_control_feed(&p, frame, len + 7, NULL, NULL);
}

/* The namespaces most cases use: app, with commands 1 to 255 (7 slow),
 * and other, with other/1; a short interval, so that the test does not
 * wait seconds. */
static void register_app(void) {
    es_registry_set_interval(100);
    eventlog_socket_namespace *a, *b;
    int fails = eventlog_socket_register_namespace("app", 3, &a) != 0 ||
                eventlog_socket_register_namespace("other", 5, &b) != 0 ||
                eventlog_socket_register_command(b, 1, count, (void *)1) != 0;
    for (int id = 1; id <= 255; id++)
        fails += eventlog_socket_register_command(a, (uint8_t)id, id == 7 ? slow : count,
                                                  (void *)0) != 0;
    if (fails)
        unit_bail("cannot register app and other");
}

/* The hooks: POST_START (ours, then upstream's type) and PRE_END. */
static void register_hooks(void) {
    main_thread = pthread_self();
    if (eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING, post, NULL) != 0 ||
        eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING, pre, NULL) != 0 ||
        eventlog_socket_register_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING, post_upstream,
                                      &upstream_data)
                .ess_status_code != EVENTLOG_SOCKET_OK)
        unit_bail("cannot register the hooks");
}

/* The namespace lim (lim/1, lim/2, lim/3), a short interval (so that the
 * test does not wait seconds), and the RTS up. */
static void register_lim(void) {
    eventlog_socket_namespace *lim;
    if (eventlog_socket_register_namespace("lim", 3, &lim) != 0 ||
        eventlog_socket_register_command(lim, 1, timed, NULL) != 0 ||
        eventlog_socket_register_command(lim, 2, timed, NULL) != 0 ||
        eventlog_socket_register_command(lim, 3, timed, NULL) != 0)
        unit_bail("cannot register lim");
    es_registry_set_interval(100);
    es_registry_set_running(true);
}

/* Requests for lim/1 every 5 ms for `ms` ms; returns how long it took. */
static uint64_t flood_lim(uint64_t ms) {
    uint64_t t0 = now_ms(), t1;
    while ((t1 = now_ms()) - t0 < ms) {
        feed("lim", 1);
        sleep_ms(5);
    }
    return t1 - t0;
}

UNIT_CASE(registry_registration) {
    main_thread = pthread_self();
    eventlog_socket_namespace *a, *b, *x;
    ok(eventlog_socket_register_namespace("eventlog-socket", 15, &x) == EVENTLOG_SOCKET_EINVAL,
       "the built-in namespace is reserved");
    ok(eventlog_socket_register_namespace("", 0, &x) == EVENTLOG_SOCKET_EINVAL &&
           eventlog_socket_register_namespace("x", 256, &x) == EVENTLOG_SOCKET_EINVAL,
       "empty and over-long names are refused");
    ok(eventlog_socket_register_namespace("app", 3, &a) == 0, "namespace app registered");
    ok(eventlog_socket_register_namespace("app", 3, &x) == EVENTLOG_SOCKET_EEXIST,
       "registering it again is refused with EEXIST");
    ok(strcmp(eventlog_socket_namespace_name(a), "app") == 0, "its name reads back");
    ok(eventlog_socket_register_namespace("other", 5, &b) == 0, "namespace other registered");
    int fails = 0;
    for (int id = 1; id <= 255; id++)
        fails += eventlog_socket_register_command(a, (uint8_t)id, id == 7 ? slow : count,
                                                  (void *)0) != 0;
    ok(fails == 0, "255 commands registered in one namespace (upstream hung on the third)");
    ok(eventlog_socket_register_command(a, 3, count, NULL) == EVENTLOG_SOCKET_EEXIST,
       "a duplicate command is refused with EEXIST");
    ok(eventlog_socket_register_command(a, 0, count, NULL) == EVENTLOG_SOCKET_EINVAL,
       "command id 0 is refused");
    fails = 0;
    for (int k = 0; k < 100; k++) {
        char name[16];
        int n = snprintf(name, sizeof name, "ns%d", k);
        fails += eventlog_socket_register_namespace(name, (size_t)n, &x) != 0;
    }
    ok(fails == 0, "100 more namespaces registered");
    ok(eventlog_socket_register_command(b, 1, count, (void *)1) == 0, "other/1 registered");
    ok(eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING, post, NULL) == 0 &&
           eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING, pre, NULL) == 0 &&
           eventlog_socket_add_hook((EventlogSocketHook)5, pre, NULL) == EVENTLOG_SOCKET_EINVAL &&
           eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING, NULL, NULL) ==
               EVENTLOG_SOCKET_EINVAL,
       "hooks registered; an unknown hook and a NULL handler refused");
    EventlogSocketStatus st = eventlog_socket_register_hook(
        EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING, post_upstream, &upstream_data);
    ok(st.ess_status_code == EVENTLOG_SOCKET_OK, "a hook of upstream's type registered");

    eventlog_socket_namespace *lim;
    ok(eventlog_socket_register_namespace("lim", 3, &lim) == 0 &&
           eventlog_socket_register_command(lim, 1, timed, NULL) == 0 &&
           eventlog_socket_register_command(lim, 2, timed, NULL) == 0 &&
           eventlog_socket_register_command(lim, 3, timed, NULL) == 0,
       "namespace lim registered");
}

/* Before the RTS is up: commands are known, and wait; then the
 * POST_START hooks, once, on the thread that says the RTS is up. */
UNIT_CASE(registry_rts_start) {
    register_app();
    register_hooks();
    ok(feed("app", 1) == 1 && feed("nope", 1) == 0 && feed("app", 0) == 0 &&
           feed("eventlog-socket", 200) == 0,
       "frames for registered commands are known, others not");
    sleep_ms(100);
    ok(atomic_load(&ran[0][1]) == 0 && atomic_load(&hooks_post) == 0,
       "nothing runs before the RTS is up");
    es_registry_set_running(true);
    ok(wait_for(&ran[0][1], 1) == 1, "app/1 ran once the RTS was up");
    sleep_ms(100);
    ok(atomic_load(&hooks_post) == 0 && atomic_load(&hooks_post_upstream) == 0,
       "POST_START does not run on a thread of the library's for the start");
    es_registry_post_start();
    ok(atomic_load(&hooks_post) == 1 && atomic_load(&hooks_post_upstream) == 1 &&
           atomic_load(&post_thread_is_caller) == 2,
       "es_registry_post_start ran both POST_START hooks on the calling thread, in order, "
       "before it returned, with upstream's data pointer");
    es_registry_post_start();
    sleep_ms(100);
    ok(atomic_load(&hooks_post) == 1, "and only the first time");
    ok(eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING, late, NULL) == 0 &&
           wait_for(&hooks_late, 1) == 1 && atomic_load(&hooks_post) == 1,
       "a hook registered after the start runs once then, alone");
}

/* A slow handler holds up its own namespace only; requests are folded. */
UNIT_CASE(registry_slow_handler) {
    register_app();
    es_registry_set_running(true);
    feed("app", 7);
    wait_for(&slow_started, 1);
    feed("app", 2);
    feed("other", 1);
    ok(wait_for(&ran[1][1], 1) == 1, "other/1 ran while app/7 was still running");
    sleep_ms(50);
    ok(atomic_load(&ran[0][2]) == 0, "app/2 waits behind app/7");
    for (int i = 0; i < 80; i++)
        feed("app", 9);
    uint64_t run, dropped;
    es_registry_counts(&run, &dropped);
    ok(dropped == 0 && es_registry_folded() == 79,
       "80 requests for app/9 while one waits: one queued, %llu folded, %llu dropped",
       (unsigned long long)es_registry_folded(), (unsigned long long)dropped);
    atomic_store(&release_slow, true);
    ok(wait_for(&ran[0][2], 1) == 1 && wait_for(&ran[0][9], 1) == 1,
       "once app/7 returns, app/2 and app/9 run");
    sleep_ms(300);
    ok(atomic_load(&ran[0][9]) == 1, "app/9 ran once for the 80 requests");
    atomic_store(&release_slow, false);
    atomic_store(&slow_started, 0);
    feed("app", 7);
    wait_for(&slow_started, 1);
    feed("app", 7);
    feed("app", 7);
    atomic_store(&release_slow, true);
    ok(wait_for(&ran[0][7], 3) == 3,
       "requests while the command runs are not folded into that run: it runs once more");
    sleep_ms(300);
    ok(atomic_load(&ran[0][7]) == 3, "and only once more");
}

/* The rate limit, as counts: the registry spaces its dispatches, and a
 * handler that starts late on a busy machine moves none of them, so the
 * start times a handler reads would show a gap shorter than the interval.
 * Requests every 5 ms for 600 ms: at most one run per 100 ms of the window
 * (and one at its start). */
UNIT_CASE(registry_rate_interval) {
    register_lim();
    int before = atomic_load(&lim_runs);
    uint64_t took = flood_lim(600);
    int runs = atomic_load(&lim_runs) - before;
    ok(runs >= 2 && (uint64_t)runs <= took / 100 + 1,
       "one command of a namespace per interval: %d runs in %llu ms of requests every 5 ms", runs,
       (unsigned long long)took);
}

/* After a command that took 20 ms of CPU, none for 50 times that: lim/1,
 * asked every 5 ms from when it returns, runs no sooner than 1000 ms after
 * lim/2 was asked (the registry starts its wait when it starts lim/2,
 * later still). A bound, not a window: on a busy machine lim/2's 20 ms of
 * CPU may take most of that second, but the wait never ends early. */
UNIT_CASE(registry_rate_cpu_time) {
    register_lim();
    int n2 = atomic_load(&lim_runs);
    uint64_t asked = now_ms();
    feed("lim", 2);
    ok(wait_for(&lim_runs, n2 + 1) == n2 + 1, "lim/2 ran");
    flood_lim(500);
    ok(wait_for(&lim_runs, n2 + 2) == n2 + 2, "and the waiting request runs later");
    uint64_t after = atomic_load(&lim1_began) - asked;
    ok(atomic_load(&lim1_began) >= asked + 1000,
       "after a command that took 20 ms of CPU, nothing for 1000 ms: the next began after "
       "%llu ms",
       (unsigned long long)after);
}

/* A command during which the RTS collected (the docs' example forces a
 * major GC) cost every capability its time: after 10 ms of CPU with four
 * capabilities, none for 50 times 40 ms (2000 ms from its start), where its
 * own thread's 10 ms alone would allow one after 500. */
UNIT_CASE(registry_rate_collections) {
    register_lim();
    es_registry_set_rts(fake_collections, fake_capabilities);
    int n3 = atomic_load(&lim_runs);
    uint64_t asked = now_ms();
    feed("lim", 3);
    ok(wait_for(&lim_runs, n3 + 1) == n3 + 1 && atomic_load(&fake_gcs) == 1, "lim/3 ran");
    flood_lim(1000);
    ok(wait_for(&lim_runs, n3 + 2) == n3 + 2, "and the waiting request runs later");
    uint64_t after = atomic_load(&lim1_began) - asked;
    ok(atomic_load(&lim1_began) >= asked + 2000,
       "after a command that took 10 ms of CPU while the RTS collected, on four capabilities, "
       "nothing for 2000 ms: the next began after %llu ms",
       (unsigned long long)after);
    es_registry_set_rts(NULL, NULL);
}

/* The POST_START hooks run for the start, then again for every client
 * that joins later (a hook registered after the start too). */
UNIT_CASE(registry_later_client) {
    register_hooks();
    es_registry_set_interval(100);
    es_registry_set_running(true);
    es_registry_post_start();
    if (eventlog_socket_add_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING, late, NULL) != 0 ||
        wait_for(&hooks_late, 1) != 1)
        unit_bail("a hook registered after the start did not run");
    es_registry_client_connected();
    ok(wait_for(&hooks_post, 2) == 2 && wait_for(&hooks_post_upstream, 2) == 2 &&
           wait_for(&hooks_late, 2) == 2,
       "every POST_START hook ran again for a client that joined later");
}

/* A quiesce runs PRE_END and stops every handler (app/1 had run once). */
UNIT_CASE(registry_quiesce) {
    register_app();
    register_hooks();
    es_registry_set_running(true);
    feed("app", 1);
    if (wait_for(&ran[0][1], 1) != 1)
        unit_bail("app/1 did not run");
    es_registry_quiesce(1000);
    ok(atomic_load(&hooks_pre) == 1, "quiesce ran PRE_END");
    ok(feed("app", 1) == 1, "after it, a frame is still recognised");
    sleep_ms(100);
    ok(atomic_load(&ran[0][1]) == 1, "but no handler runs any more");
}

/* When no thread can be started for a namespace's handlers or for the
 * hooks (RLIMIT_NPROC, a container's limit on processes), the command or
 * the run of hooks is dropped with a line that says so, and the next one
 * tries again and runs. */
UNIT_CASE(registry_no_thread_for_handlers) {
    register_app();
    register_hooks();
    es_registry_set_running(true);
    es_registry_post_start();
    char why[256];
    es_log_capture(why, sizeof why);
    es_registry_fail_thread_starts(1);
    ok(feed("other", 1) == 1, "other/1 is known");
    sleep_ms(100);
    ok(atomic_load(&ran[1][1]) == 0 &&
           strstr(why, "command 1 of namespace \"other\" dropped: no thread could be started") !=
               NULL,
       "with no thread for its handlers, it is dropped, and the log says why: %s", why);
    ok(feed("other", 1) == 1 && wait_for(&ran[1][1], 1) == 1,
       "the next request starts the thread, and runs");
    es_log_capture(why, sizeof why);
    es_registry_fail_thread_starts(1);
    es_registry_client_connected();
    sleep_ms(100);
    ok(atomic_load(&hooks_post) == 1 &&
           strstr(why, "POST_START hooks not run for a client: no thread could be started") != NULL,
       "with no thread for the hooks, a later client's run is not made, and the log says why: "
       "%s",
       why);
    es_registry_client_connected();
    ok(wait_for(&hooks_post, 2) == 2, "the next client's run starts the thread, and runs");
    es_log_capture(NULL, 0);
    es_log_drain(1000);
}
