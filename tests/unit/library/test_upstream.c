/* SPDX-License-Identifier: BSD-3-Clause */
/* Upstream eventlog-socket 0.1.3's C API without the RTS
 * (cbits/es_upstream*.c): the status made from the library's error codes
 * and its descriptions, addresses and options, eventlog_socket_from_env
 * (upstream's outcomes, and the library's other variables applied),
 * eventlog_socket_init, wait and thread status, custom commands by
 * upstream's names; and when the POST_START hooks run for clients: not for
 * the first client, which gets the stream from its start, but for every
 * later one, and for a first client that missed the start. A real server
 * on real sockets; the RTS side is this file's hooks. */
#define _GNU_SOURCE
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "base/es_config.h"
#include "format/es_control.h"
#include "server/es_instance.h"
#include "control/es_registry.h"
#include "server/es_server.h"
#include "upstream/es_upstream.h"
#include "server_util.h"
#include "../unit.h"

#include <errno.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>

static void on_command(uint8_t cmd, void *ctx) {
    (void)cmd;
    (void)ctx;
}
static int set_flush(unsigned ms) {
    (void)ms;
    return 0;
}
static void set_sigterm(bool on) {
    (void)on;
}
const struct es_instance_hooks es_instance_hooks = {on_command, set_flush, set_sigterm, NULL, NULL};

/* The socket's path, in the case's own directory. */
static const char *sock_path(void) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/u.sock", unit_tmpdir());
    return path;
}

/* Wait (at most 5 s) until *v reaches n. */
static int wait_for(atomic_int *v, int n) {
    for (int i = 0; i < 1000 && atomic_load(v) < n; i++)
        sleep_ms(5);
    return atomic_load(v);
}

static bool is(EventlogSocketStatus st, EventlogSocketStatusCode code, int error) {
    return st.ess_status_code == code && st.ess_error_code == error;
}

/* strerror(status) contains `part` (and was malloc'd: freed here). */
static bool says(EventlogSocketStatus st, const char *part) {
    char *text = eventlog_socket_strerror(st);
    bool r = text != NULL && strstr(text, part) != NULL;
    free(text);
    return r;
}

static void clear_env(void) {
    const char *vars[] = {"GHC_EVENTLOG_UNIX_PATH", "GHC_EVENTLOG_INET_HOST",
                          "GHC_EVENTLOG_INET_PORT", "GHC_EVENTLOG_WAIT",
                          "GHC_EVENTLOG_MAX_CLIENTS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

UNIT_CASE(upstream_status_and_strerror) {
    ok(is(es_upstream_status(0), EVENTLOG_SOCKET_OK, 0) &&
           is(es_upstream_status(EVENTLOG_SOCKET_EADDRINUSE), EVENTLOG_SOCKET_ERR_SYS,
              EADDRINUSE) &&
           is(es_upstream_status(EVENTLOG_SOCKET_ENOTSOCKET), EVENTLOG_SOCKET_ERR_SYS, ENOTSOCK) &&
           is(es_upstream_status(EVENTLOG_SOCKET_ESTOPPED), EVENTLOG_SOCKET_ERR_SYS, ESHUTDOWN) &&
           is(es_upstream_status(EVENTLOG_SOCKET_EEVENTLOGOFF), EVENTLOG_SOCKET_ERR_RTS_FAIL,
              EVENTLOG_SOCKET_EEVENTLOGOFF),
       "the library's codes become upstream's statuses as the header's table says");
    ok(says(es_upstream_status(EVENTLOG_SOCKET_EEVENTLOGOFF), "+RTS -l") &&
           says(es_upstream_status(EVENTLOG_SOCKET_ENOTSOCKET), "not a socket") &&
           says(es_upstream_code(EVENTLOG_SOCKET_ERR_GAI, EAI_NONAME), gai_strerror(EAI_NONAME)) &&
           says(es_upstream_code(EVENTLOG_SOCKET_ERR_ENV_NOPORT, 0), "GHC_EVENTLOG_INET_PORT") &&
           says(es_upstream_code(EVENTLOG_SOCKET_ERR_CTL_EXISTS, 0), "registered already"),
       "eventlog_socket_strerror describes them, in memory the caller frees");
    errno = 0;
    char *none = eventlog_socket_strerror(es_upstream_code((EventlogSocketStatusCode)99, 0));
    ok(none == NULL && errno == EINVAL, "a status code that does not exist: NULL, EINVAL");
    ok(strcmp(eventlog_socket_error_message(EVENTLOG_SOCKET_EALREADY),
              "eventlog-socket is already serving; it can be started only once") == 0,
       "the int codes' descriptions are eventlog_socket_error_message's");

    EventlogSocketOpts o = {.eso_wait = true, .eso_sndbuf = 5, .eso_linger = 6};
    eventlog_socket_opts_init(&o);
    ok(!o.eso_wait && o.eso_sndbuf == 0 && o.eso_linger == 0, "opts_init: the defaults");
    eventlog_socket_opts_free(&o);
    eventlog_socket_opts_init(NULL);
    eventlog_socket_addr_free(NULL);
}

UNIT_CASE(upstream_from_env) {
    const char *sock = sock_path();
    EventlogSocketAddr a = {.esa_tag = EVENTLOG_SOCKET_INET};
    EventlogSocketOpts o;
    clear_env();
    ok(is(eventlog_socket_from_env(&a, &o), EVENTLOG_SOCKET_ERR_ENV_NOADDR, 0) &&
           a.esa_tag == EVENTLOG_SOCKET_INET && a.esa_inet_addr.esa_inet_host == NULL,
       "nothing set: ERR_ENV_NOADDR, the address untouched");
    ok(is(eventlog_socket_from_env(NULL, &o), EVENTLOG_SOCKET_ERR_SYS, EINVAL),
       "a NULL address: ERR_SYS, EINVAL");

    char longpath[200];
    memset(longpath, 'p', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    setenv("GHC_EVENTLOG_UNIX_PATH", longpath, 1);
    ok(is(eventlog_socket_from_env(&a, &o), EVENTLOG_SOCKET_ERR_ENV_TOOLONG, 0) &&
           a.esa_tag == EVENTLOG_SOCKET_UNIX &&
           strcmp(a.esa_unix_addr.esa_unix_path, longpath) == 0,
       "a path over 107 bytes: ERR_ENV_TOOLONG, with the path for the message");
    eventlog_socket_addr_free(&a);
    ok(a.esa_unix_addr.esa_unix_path == NULL, "addr_free frees the path");
    clear_env();

    setenv("GHC_EVENTLOG_INET_HOST", "localhost", 1);
    ok(is(eventlog_socket_from_env(&a, &o), EVENTLOG_SOCKET_ERR_ENV_NOPORT, 0) &&
           a.esa_tag == EVENTLOG_SOCKET_INET &&
           strcmp(a.esa_inet_addr.esa_inet_host, "localhost") == 0 &&
           strcmp(a.esa_inet_addr.esa_inet_port, "") == 0,
       "a host without a port: ERR_ENV_NOPORT, with the host for the message");
    eventlog_socket_addr_free(&a);
    clear_env();

    setenv("GHC_EVENTLOG_INET_PORT", "0", 1);
    setenv("GHC_EVENTLOG_WAIT", "yes", 1);
    ok(is(eventlog_socket_from_env(&a, &o), EVENTLOG_SOCKET_OK, 0) &&
           a.esa_tag == EVENTLOG_SOCKET_INET &&
           strcmp(a.esa_inet_addr.esa_inet_host, "127.0.0.1") == 0 &&
           strcmp(a.esa_inet_addr.esa_inet_port, "0") == 0 && o.eso_wait,
       "a port alone: OK on 127.0.0.1 (upstream: ERR_ENV_NOHOST), GHC_EVENTLOG_WAIT=yes waits");
    eventlog_socket_addr_free(&a);
    setenv("GHC_EVENTLOG_WAIT", "maybe", 1);
    ok(is(eventlog_socket_from_env(&a, &o), EVENTLOG_SOCKET_ERR_SYS, EINVAL),
       "GHC_EVENTLOG_WAIT=maybe is refused (ERR_SYS, EINVAL, a log line names it)");
    clear_env();
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    setenv("GHC_EVENTLOG_INET_PORT", "0", 1);
    ok(is(eventlog_socket_from_env(&a, &o), EVENTLOG_SOCKET_ERR_SYS, EINVAL),
       "a path and a port: refused (upstream takes the path)");
    clear_env();
}

/* eventlog_socket_init on what from_env read, its wait and its status. */
UNIT_CASE(upstream_init_and_wait) {
    const char *sock = sock_path();
    EventlogSocketAddr a;
    clear_env();
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    setenv("GHC_EVENTLOG_MAX_CLIENTS", "1", 1);
    ok(is(eventlog_socket_from_env(&a, NULL), EVENTLOG_SOCKET_OK, 0) &&
           a.esa_tag == EVENTLOG_SOCKET_UNIX && strcmp(a.esa_unix_addr.esa_unix_path, sock) == 0,
       "a path: OK, the options may be NULL");
    clear_env();
    ok(is(eventlog_socket_init(&a, NULL), EVENTLOG_SOCKET_OK, 0), "eventlog_socket_init starts it");
    ok(is(eventlog_socket_init(&a, NULL), EVENTLOG_SOCKET_ERR_SYS, EALREADY),
       "a second init: ERR_SYS, EALREADY");
    eventlog_socket_addr_free(&a);
    int c1 = connect_unix(sock), c2 = connect_unix(sock);
    ok(c1 >= 0 && is(eventlog_socket_wait(), EVENTLOG_SOCKET_OK, 0),
       "eventlog_socket_wait returns OK once a client connected");
    struct eventlog_socket_stats st = {0};
    for (int i = 0; i < 500 && st.clients_refused == 0; i++) {
        sleep_ms(10);
        eventlog_socket_stats(&st);
    }
    ok(st.clients_accepted == 1 && st.clients_refused == 1,
       "GHC_EVENTLOG_MAX_CLIENTS=1, read by from_env, holds for the server init started");
    ok(is(eventlog_socket_worker_status(), EVENTLOG_SOCKET_OK, 0) &&
           is(eventlog_socket_control_status(), EVENTLOG_SOCKET_OK, 0),
       "worker and control status: OK");
    close(c1);
    close(c2);
    /* A client that closed is noticed at the next write: the header. */
    size_t len;
    unsigned char *log = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    struct es_header h;
    es_header_parse(log, len, &h);
    es_server_submit(es_instance_server(), log, h.len);
    free(log);
    for (int i = 0; i < 500 && (eventlog_socket_stats(&st), st.clients_connected > 0); i++)
        sleep_ms(10);
    ok(st.clients_connected == 0 && is(eventlog_socket_wait(), EVENTLOG_SOCKET_OK, 0),
       "with the first client gone, wait still returns OK at once (upstream waits for a client "
       "connected now)");
    struct es_server *s = es_instance_detach();
    es_server_stop(s);
    es_server_free(s);
    ok(is(eventlog_socket_wait(), EVENTLOG_SOCKET_ERR_SYS, EINVAL),
       "wait with no server: ERR_SYS, EINVAL (not configured)");
}

static atomic_int upstream_ran;
static const char *const upstream_label = "label";

static void upstream_command(const EventlogSocketControlNamespace *const ns,
                             const EventlogSocketControlCommandId id, const void *data) {
    if (strcmp(eventlog_socket_namespace_name(ns), "up") == 0 && id == 3 && data == upstream_label)
        atomic_fetch_add(&upstream_ran, 1);
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

UNIT_CASE(upstream_commands) {
    EventlogSocketControlNamespace *ns = NULL, *again = NULL;
    ok(is(eventlog_socket_control_register_namespace(2, "up", &ns), EVENTLOG_SOCKET_OK, 0) &&
           strcmp(eventlog_socket_control_strnamespace(ns), "up") == 0,
       "a namespace by upstream's name, length first");
    ok(is(eventlog_socket_control_register_namespace(2, "up", &again),
          EVENTLOG_SOCKET_ERR_CTL_EXISTS, 0) &&
           is(eventlog_socket_control_register_namespace(15, "eventlog-socket", &again),
              EVENTLOG_SOCKET_ERR_CTL_EXISTS, 0) &&
           is(eventlog_socket_control_register_namespace(0, "", &again), EVENTLOG_SOCKET_ERR_SYS,
              EINVAL) &&
           again == NULL && eventlog_socket_control_strnamespace(NULL) == NULL,
       "taken, built-in and empty names refused as upstream says");
    ok(is(eventlog_socket_control_register_command(ns, 3, upstream_command, upstream_label),
          EVENTLOG_SOCKET_OK, 0) &&
           is(eventlog_socket_control_register_command(ns, 3, upstream_command, NULL),
              EVENTLOG_SOCKET_ERR_CTL_EXISTS, 0) &&
           is(eventlog_socket_control_register_command(ns, 0, upstream_command, NULL),
              EVENTLOG_SOCKET_ERR_SYS, EINVAL) &&
           is(eventlog_socket_control_register_command(NULL, 4, upstream_command, NULL),
              EVENTLOG_SOCKET_ERR_SYS, EINVAL),
       "a command of upstream's handler type; a taken id, id 0, no namespace refused");
    es_registry_set_running(true);
    ok(feed("up", 3) == 1 && wait_for(&upstream_ran, 1) == 1,
       "the command runs with its namespace, id and const data");
}

static atomic_int post_start;

static void count_post_start(const void *data) {
    (void)data;
    atomic_fetch_add(&post_start, 1);
}

/* Clients `n` of a server with a retention limit of `max_buffer`, after
 * `blocks` blocks of 1 KiB: returns how many POST_START runs each client
 * connecting brought about (in order, into runs[]). */
static void connect_clients(const char *sock, size_t max_buffer, int blocks, int n, int *runs) {
    struct es_config cfg;
    es_config_defaults(&cfg);
    cfg.max_buffer = max_buffer;
    cfg.linger_ms = 200;
    struct es_server *s = NULL;
    es_server_start_unix(&s, sock, &cfg, on_command, NULL);
    size_t len;
    unsigned char *log = unit_read_fixture("ghc-9.0.2.eventlog", &len);
    struct es_header h;
    es_header_parse(log, len, &h);
    es_server_submit(s, log, h.len);
    size_t blen;
    unsigned char *block = make_block(64, 4, 1000, &blen);
    for (int i = 0; i < blocks; i++)
        es_server_submit(s, block, blen);
    /* The first client comes only once what it would miss has been
     * dropped (the server takes chunks in on its own threads). */
    bool drops = (size_t)blocks * blen > max_buffer;
    for (int i = 0; i < 1000 && drops && atomic_load(&es_server_counters(s)->chunks_dropped) == 0;
         i++)
        sleep_ms(5);
    int fds[4];
    for (int i = 0; i < n; i++) {
        int before = atomic_load(&post_start);
        fds[i] = connect_unix(sock);
        while (atomic_load(&es_server_counters(s)->clients_accepted) < (uint64_t)i + 1)
            sleep_ms(5);
        /* A run comes from the hook thread soon after the client joined;
         * then a second one would come. */
        for (int k = 0; k < 200 && atomic_load(&post_start) == before; k++)
            sleep_ms(5);
        sleep_ms(100);
        runs[i] = atomic_load(&post_start) - before;
    }
    es_server_stop(s);
    es_server_free(s);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    free(block);
    free(log);
}

UNIT_CASE(upstream_hooks_per_client) {
    const char *sock = sock_path();
    es_registry_set_running(true); /* the RTS is up */
    ok(is(eventlog_socket_register_hook(EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING,
                                        count_post_start, NULL),
          EVENTLOG_SOCKET_OK, 0) &&
           is(eventlog_socket_register_hook(EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING, NULL, NULL),
              EVENTLOG_SOCKET_ERR_SYS, EINVAL) &&
           is(eventlog_socket_register_hook((EventlogSocketHook)7, count_post_start, NULL),
              EVENTLOG_SOCKET_ERR_SYS, EINVAL),
       "a hook by upstream's name; no handler, an unknown hook refused");
    es_registry_post_start();
    ok(atomic_load(&post_start) == 1, "POST_START ran for the start, before post_start returned");
    int runs[3];
    connect_clients(sock, 64u << 20, 4, 3, runs);
    ok(runs[0] == 0 && runs[1] == 1 && runs[2] == 1,
       "the first client (which gets the start's events) brings no run, each later client "
       "one (%d, %d, %d)",
       runs[0], runs[1], runs[2]);
    connect_clients(sock, 64u << 10, 200, 2, runs);
    ok(runs[0] == 1 && runs[1] == 1,
       "a first client that missed the start (200 KiB before it, a 64 KiB limit) brings a run "
       "too (%d, %d)",
       runs[0], runs[1]);
}
