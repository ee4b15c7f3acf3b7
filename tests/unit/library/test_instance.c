/* SPDX-License-Identifier: BSD-3-Clause */
/* The public configuration API without the RTS (cbits/server/es_instance.c):
 * options before and after the server starts, the environment on top of
 * them, stats, the TCP port, waiting for a first client, and the command
 * hook. A real server on a real socket; the RTS side is this file's hooks. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "server/es_instance.h"
#include "server_util.h"
#include "../unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int commands, last_command;
static atomic_int flush_ms = -1;
static atomic_bool sigterm;

static void on_command(uint8_t cmd, void *ctx) {
    (void)ctx;
    atomic_store(&last_command, cmd);
    atomic_fetch_add(&commands, 1);
}
static int set_flush(unsigned ms) {
    atomic_store(&flush_ms, (int)ms);
    return 0;
}
static void set_sigterm(bool on) {
    atomic_store(&sigterm, on);
}
const struct es_instance_hooks es_instance_hooks = {on_command, set_flush, set_sigterm, NULL, NULL};

static void *waiter(void *arg) {
    *(int *)arg = eventlog_socket_wait_for_client();
    return NULL;
}

UNIT_CASE(instance_no_server) {
    struct eventlog_socket_stats st;
    ok(eventlog_socket_stats(&st) == EVENTLOG_SOCKET_ENOTCONFIGURED && st.bytes_sent == 0,
       "no server: stats say not configured, all zero");
    ok(eventlog_socket_tcp_port() == EVENTLOG_SOCKET_ENOTCONFIGURED &&
           eventlog_socket_wait_for_client() == EVENTLOG_SOCKET_ENOTCONFIGURED &&
           eventlog_socket_last_error() == 0,
       "no server: port, wait and last error");
}

UNIT_CASE(instance_options) {
    struct eventlog_socket_options o;
    eventlog_socket_options_init(&o);
    o.max_buffer = 1000;
    ok(eventlog_socket_set_options(&o) == EVENTLOG_SOCKET_EINVAL, "bad options refused");
    eventlog_socket_options_init(&o);
    o.max_clients = 1;
    ok(eventlog_socket_set_options(&o) == 0, "good options accepted");
}

/* The environment goes on top of the options, and reaches the hooks. */
UNIT_CASE(instance_from_env) {
    char sock[4096];
    snprintf(sock, sizeof sock, "%s/x.sock", unit_tmpdir());
    struct eventlog_socket_stats st;
    struct eventlog_socket_options o;
    eventlog_socket_options_init(&o);
    o.max_clients = 1;
    if (eventlog_socket_set_options(&o) != 0)
        unit_bail("options with max_clients 1 refused");
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    setenv("GHC_EVENTLOG_FLUSH_INTERVAL_MS", "250", 1);
    setenv("GHC_EVENTLOG_GRACEFUL_SIGTERM", "1", 1);
    setenv("GHC_EVENTLOG_MAX_CLIENTS", "2", 1);
    ok(eventlog_socket_init_from_env() == 0, "init_from_env starts the server");
    ok(atomic_load(&flush_ms) == 250 && atomic_load(&sigterm),
       "the flush interval and the SIGTERM setting reach the RTS side");
    ok(eventlog_socket_init_unix(sock) == EVENTLOG_SOCKET_EALREADY &&
           eventlog_socket_set_options(&o) == EVENTLOG_SOCKET_EALREADY,
       "a second init, and options once running, are refused");
    ok(eventlog_socket_tcp_port() == EVENTLOG_SOCKET_ENOTCONFIGURED, "a Unix socket has no port");

    int waited = 1;
    pthread_t t;
    pthread_create(&t, NULL, waiter, &waited);
    int a = connect_unix(sock), b = connect_unix(sock), c = connect_unix(sock);
    pthread_join(t, NULL);
    ok(a >= 0 && waited == 0, "wait returns once a client connected");
    ok(write(a, "GCTL\x03", 5) == 5, "a census request sent");
    for (int i = 0; i < 200 && atomic_load(&commands) == 0; i++)
        sleep_ms(10);
    ok(atomic_load(&commands) == 1 && atomic_load(&last_command) == 3,
       "the command reached the hook");
    char byte;
    for (int i = 0; i < 200; i++) {
        eventlog_socket_stats(&st);
        if (st.clients_refused > 0)
            break;
        sleep_ms(10);
    }
    ok(st.clients_accepted == 2 && st.clients_refused == 1 && read(c, &byte, 1) == 0,
       "GHC_EVENTLOG_MAX_CLIENTS=2 from the environment: the third client is refused "
       "(accepted %llu, refused %llu)",
       (unsigned long long)st.clients_accepted, (unsigned long long)st.clients_refused);

    struct es_server *s = es_instance_detach();
    ok(s != NULL && es_instance_server() == NULL, "detach leaves no server");
    ok(es_server_stop(s) == 0, "the server stops");
    es_server_free(s);
    ok(eventlog_socket_stats(&st) == EVENTLOG_SOCKET_ENOTCONFIGURED, "stats after detach");
    close(a);
    close(b);
    close(c);
    unlink(sock);
}
