/* SPDX-License-Identifier: BSD-3-Clause */
/* es_wait: RTS threads waiting for lossless clients, and everything that
 * must release them (room, the client leaving, a call into the RTS, exit,
 * stop). A thread plays the RTS thread; the test plays the loop thread. */
#include "policy/es_wait.h"
#include "server_util.h"
#include "../unit.h"

#include <pthread.h>

static struct es_wait w;
static atomic_size_t in_flight;
static atomic_int done;

static void *writer(void *arg) {
    (void)arg;
    es_wait_for_room(&w, 1000, &in_flight);
    atomic_store(&done, 1);
    return NULL;
}

static bool waiting(void) {
    uv_mutex_lock(&w.lock);
    bool any = w.waiters > 0;
    uv_mutex_unlock(&w.lock);
    return any;
}

/* Start a writer. When it should wait, return once it waits (or has
 * finished, or 10 s passed: the checks that follow then fail), since a
 * fixed pause let a busy machine (ASan, two cores) reach the next step
 * before the thread had even begun; otherwise after a while, the only way
 * to give a thread that wrongly blocks the time to do so. */
static pthread_t start_writer(bool should_wait) {
    pthread_t t;
    atomic_store(&done, 0);
    pthread_create(&t, NULL, writer, NULL);
    if (!should_wait) {
        sleep_ms(100);
        return t;
    }
    for (int i = 0; i < 1000 && !waiting() && !atomic_load(&done); i++)
        sleep_ms(10);
    return t;
}

static bool released(pthread_t t) {
    for (int i = 0; i < 500 && !atomic_load(&done); i++)
        sleep_ms(10);
    bool ok = atomic_load(&done);
    if (ok)
        pthread_join(t, NULL);
    return ok;
}

/* A wait with a 10000-byte limit. */
static void start(void) {
    if (es_wait_init(&w, 10000) != 0)
        unit_bail("es_wait_init");
}

/* A writer left waiting at the end of a case is released and joined. */
static void finish(pthread_t t) {
    es_wait_shutdown(&w);
    released(t);
    es_wait_destroy(&w);
}

UNIT_CASE(wait_room) {
    ok(es_wait_init(&w, 10000) == 0, "init");
    ok(!es_wait_for_room(&w, 1000000, &in_flight),
       "no lossless client: no wait, and drops allowed");
    es_wait_publish(&w, true, 5000);
    ok(es_wait_for_room(&w, 1000, &in_flight), "room left: no wait, and no drops");
    es_wait_destroy(&w);
}

UNIT_CASE(wait_until_the_client_takes) {
    start();
    es_wait_publish(&w, true, 9500);
    pthread_t t = start_writer(true);
    ok(!atomic_load(&done), "a lossless client at its limit: the writer waits");
    es_wait_publish(&w, true, 8000);
    ok(released(t), "the client took enough: the writer goes on");
    ok(atomic_load(&w.waits) == 1 && atomic_load(&w.wait_ns) > 0 &&
           atomic_load(&w.wait_max_ns) == atomic_load(&w.wait_ns),
       "the wait is counted, with its time");
    es_wait_destroy(&w);
}

UNIT_CASE(wait_bytes_in_flight) {
    start();
    atomic_store(&in_flight, 9500);
    es_wait_publish(&w, true, 0);
    pthread_t t = start_writer(true);
    ok(!atomic_load(&done), "bytes in flight count too");
    atomic_store(&in_flight, 0);
    es_wait_publish(&w, true, 0);
    ok(released(t), "and when they arrive the writer goes on");
    es_wait_destroy(&w);
}

UNIT_CASE(wait_client_left) {
    start();
    es_wait_publish(&w, true, 20000);
    pthread_t t = start_writer(true);
    es_wait_publish(&w, false, 0);
    ok(released(t), "the lossless client left: the writer goes on at once");
    es_wait_destroy(&w);
}

UNIT_CASE(wait_rts_call) {
    start();
    es_wait_publish(&w, true, 20000);
    pthread_t t = start_writer(true);
    es_wait_rts_call(&w, true);
    ok(released(t), "the loop thread calls into the RTS: every waiter is released");
    t = start_writer(false);
    ok(released(t), "and nobody waits during the call");
    es_wait_rts_call(&w, false);
    t = start_writer(true);
    ok(!atomic_load(&done), "after the call, waiting resumes");
    finish(t);
}

UNIT_CASE(wait_exit) {
    start();
    es_wait_publish(&w, true, 20000);
    pthread_t t = start_writer(true);
    es_wait_exiting(&w, 300);
    ok(released(t), "exit: a wait ends within the linger time even if the client never reads");
    t = start_writer(false);
    ok(released(t), "and after the linger time nobody waits");
    es_wait_destroy(&w);
}

UNIT_CASE(wait_stop) {
    start();
    es_wait_destroy(&w);
    ok(es_wait_init(&w, 10000) == 0, "a second instance");
    es_wait_publish(&w, true, 20000);
    pthread_t t = start_writer(true);
    es_wait_shutdown(&w);
    ok(released(t), "stop releases every waiter");
    t = start_writer(false);
    ok(released(t), "a writer after stop passes");
    es_wait_destroy(&w);
}
