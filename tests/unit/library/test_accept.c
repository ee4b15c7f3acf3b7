/* SPDX-License-Identifier: BSD-3-Clause */
/* es_accept on a real Unix listener, its loop on a thread of the test's:
 * admitted connections reach on_client; refused ones are closed and
 * counted and never reach it; when refusals take more than their time
 * budget (lowered here to 300 us, which 1000 refusals exceed) accepting
 * pauses, and the connections that wait meanwhile are all taken in
 * later, in order: a client that is to be admitted, queued behind a
 * flood of refused ones, is admitted. Threaded: runs under TSan too. */
#define _GNU_SOURCE
#include "net/es_accept.h"
#include "base/es_listen.h"
#include "server_util.h"
#include "../unit.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

static char path[256];
static uv_loop_t loop;
static uv_async_t quit;
static pthread_t loop_tid;
static struct es_accept acc;
static struct es_counters counters;
static atomic_uint served;       /* clients said to be connected (es_admit's view) */
static atomic_uint admitted;     /* connections that reached on_client */
static atomic_int admitted_last; /* the byte the last admitted client sent */
static atomic_int admitted_fd;   /* its descriptor's number */

static void on_client(int fd, void *ctx) {
    (void)ctx;
    atomic_store(&admitted_fd, fd);
    char b = 0;
    /* Each of the test's clients writes one byte once it has connected. */
    for (int i = 0; i < 200 && read(fd, &b, 1) != 1; i++)
        sleep_ms(1);
    atomic_store(&admitted_last, b);
    atomic_fetch_add(&admitted, 1);
    close(fd);
}

static unsigned nclients(void *ctx) {
    (void)ctx;
    return atomic_load(&served);
}

static void on_error(int err, const char *what, void *ctx) {
    (void)ctx;
    printf("# error while %s: %d\n", what, err);
}

static void on_quit(uv_async_t *h) {
    es_accept_close(&acc, NULL);
    uv_close((uv_handle_t *)h, NULL);
}

static void *loop_thread(void *arg) {
    (void)arg;
    uv_run(&loop, UV_RUN_DEFAULT);
    return NULL;
}

/* Connect, write `tag`, close. */
static void knock(char tag) {
    int fd = connect_unix(path);
    if (fd >= 0) {
        if (write(fd, &tag, 1) != 1 && tag != 'r')
            printf("# write failed\n");
        close(fd);
    }
}

#define WAIT_FOR(cond)                                                                             \
    do {                                                                                           \
        for (int i_ = 0; i_ < 3000 && !(cond); i_++)                                               \
            sleep_ms(10);                                                                          \
    } while (0)

static uint64_t refused(void) {
    return atomic_load(&counters.clients_refused);
}

/* Listening and accepting on a loop thread; the checks that it started. */
static void start(void) {
    signal(SIGPIPE, SIG_IGN); /* a knock on a connection refused already */
    snprintf(path, sizeof path, "%s/accept.sock", unit_tmpdir());
    struct es_listen_result res;
    ok(es_listen_unix(path, &res) == 0, "listening");
    uv_loop_init(&loop);
    uv_async_init(&loop, &quit, on_quit);
    struct es_admit_rules rules = {.max_clients = 4, .is_unix = true};
    struct es_accept_env env = {
        .on_client = on_client, .nclients = nclients, .on_error = on_error, .ctx = NULL};
    ok(es_accept_start(&acc, &loop, res.fd, &rules, &counters, &env) == 0, "accepting");
    acc.budget_ns = 300000;
    pthread_create(&loop_tid, NULL, loop_thread, NULL);
}

/* The loop thread told to close everything, and ended. */
static void finish(void) {
    uv_async_send(&quit);
    pthread_join(loop_tid, NULL);
    ok(uv_loop_close(&loop) == 0, "every handle closed");
    unlink(path);
}

/* At the limit: `n` connections, each refused. */
static void flood(int n) {
    atomic_store(&served, 4);
    for (int i = 0; i < n; i++)
        knock('r');
}

UNIT_CASE(accept_under_the_limit) {
    start();
    for (int i = 0; i < 5; i++)
        knock('a');
    WAIT_FOR(atomic_load(&admitted) == 5);
    ok(atomic_load(&admitted) == 5 && refused() == 0, "under the limit: 5 of 5 admitted");
    finish();
}

/* At the limit: every connection is refused, none reaches on_client, and
 * the refusals, over their budget, pause accepting. */
UNIT_CASE(accept_refused_at_the_limit) {
    start();
    flood(1000);
    WAIT_FOR(refused() == 1000);
    ok(refused() == 1000 && atomic_load(&admitted) == 0,
       "at the limit: 1000 of 1000 refused, none admitted");
    finish();
    ok(acc.pauses > 0, "refusals over their budget paused accepting (%llu times)",
       (unsigned long long)acc.pauses);
}

/* One that is to be admitted comes behind a flood, which refusals over
 * their budget keep waiting. */
UNIT_CASE(accept_queued_behind_a_flood) {
    start();
    flood(500);
    atomic_store(&served, 0); /* a slot frees up while the flood waits */
    knock('o');
    WAIT_FOR(atomic_load(&admitted_last) == 'o');
    ok(atomic_load(&admitted_last) == 'o',
       "a client queued behind a paused flood is taken in (%llu refused, %u admitted)",
       (unsigned long long)refused(), atomic_load(&admitted));
    finish();
}

/* A program that closed its stderr after the library started: the next
 * client's socket does not take descriptor 2, where the program's output
 * and the library's log lines would go into its stream; nor does the
 * listening socket of a library started with stderr closed. */
UNIT_CASE(accept_never_takes_a_standard_stream) {
    start();
    int saved = dup(STDERR_FILENO);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); /* the test's own, before */
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    close(STDERR_FILENO);
    bool sent = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && write(fd, "s", 1) == 1;
    WAIT_FOR(atomic_load(&admitted) == 1);
    int got = atomic_load(&admitted_fd);
    struct es_listen_result res;
    char other[300];
    snprintf(other, sizeof other, "%s/closed-stderr.sock", unit_tmpdir());
    int listened = es_listen_unix(other, &res);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    ok(sent && atomic_load(&admitted) == 1, "a client connected while stderr was closed");
    ok(got > 2, "its socket is descriptor %d, not a standard stream's", got);
    ok(listened == 0 && res.fd > 2, "a socket made while stderr was closed is descriptor %d",
       listened == 0 ? res.fd : -1);
    if (listened == 0)
        close(res.fd);
    finish();
}
