/* SPDX-License-Identifier: BSD-3-Clause */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_instance.h"

#include "base/es_config.h"
#include "base/es_log.h"
#include "es_dump.h"

#include <assert.h>
#include <stdatomic.h>
#include <string.h>

/* The one server, and the configuration the next init_* starts it with
 * (the defaults until set_options or the environment change them). */
static struct {
    _Atomic(struct es_server *) server;
    struct es_config cfg;
    bool cfg_set;
} instance;

struct es_server *es_instance_server(void) {
    return atomic_load_explicit(&instance.server, memory_order_acquire);
}

struct es_server *es_instance_detach(void) {
    return atomic_exchange(&instance.server, NULL);
}

void eventlog_socket_options_init(struct eventlog_socket_options *opts) {
    struct es_config d;
    es_config_defaults(&d);
    es_config_to_options(&d, opts);
}

/* The configuration init_* uses: the defaults until set_options. */
static struct es_config *config(void) {
    if (!instance.cfg_set) {
        es_config_defaults(&instance.cfg);
        instance.cfg_set = true;
    }
    return &instance.cfg;
}

int eventlog_socket_set_options(const struct eventlog_socket_options *opts) {
    if (atomic_load(&instance.server) != NULL)
        return EVENTLOG_SOCKET_EALREADY;
    return es_config_from_options(config(), opts);
}

int eventlog_socket_stats(struct eventlog_socket_stats *out) {
    memset(out, 0, sizeof *out);
    struct es_server *s = atomic_load(&instance.server);
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    const struct es_counters *k = es_server_counters(s);
    out->clients_connected = atomic_load(&k->clients_connected);
    out->clients_accepted = atomic_load(&k->clients_accepted);
    out->clients_lagged = atomic_load(&k->clients_lagged);
    out->clients_refused = atomic_load(&k->clients_refused);
    es_server_cpu(s, &out->cpu_ns_writer, &out->cpu_ns_walker, &out->cpu_ns_loop);
    out->bytes_sent = atomic_load(&k->bytes_sent);
    out->chunks_dropped = atomic_load(&k->chunks_dropped);
    out->bytes_dropped = atomic_load(&k->bytes_dropped);
    out->bytes_held = atomic_load(&k->bytes_held);
    out->bytes_held_peak = atomic_load(&k->bytes_held_peak);
    out->flushes = atomic_load(&k->flushes);
    out->flush_us = atomic_load(&k->flush_us);
    out->bytes_received = es_server_bytes_received(s);
    es_server_lost(s, &out->chunks_lost, &out->bytes_lost);
    out->clients_lossless = atomic_load(&k->clients_lossless);
    out->window_bytes = atomic_load(&k->window_bytes);
    out->windows_sent = atomic_load(&k->windows_sent);
    es_server_wait_stats(s, &out->lossless_waits, &out->lossless_wait_ns,
                         &out->lossless_wait_max_ns);
    return 0;
}

/* Publish a started server, unless one exists already. */
/* How long a failed start waits for its log lines to reach stderr. */
#define FAIL_LOG_DRAIN_MS 1000

static int install(int r, struct es_server *s) {
    if (r < 0) {
        /* The lines that say why (the path, the variable, what to do) go
         * out before the caller prints its own one-line error. */
        es_log_drain(FAIL_LOG_DRAIN_MS);
        return r;
    }
    assert(r == 0 && s != NULL); /* a start that succeeded gave its server */
    struct es_server *none = NULL;
    if (!atomic_compare_exchange_strong(&instance.server, &none, s)) {
        es_server_stop(s);
        es_server_free(s);
        return EVENTLOG_SOCKET_EALREADY;
    }
    return 0;
}

/* An RTS without event logging (GHC < 9.4 linked without -eventlog) would
 * refuse -l after the socket is up: refuse before listening instead. */
static bool rts_can_log(void) {
    return es_instance_hooks.rts_can_log == NULL || es_instance_hooks.rts_can_log();
}

/* What can be refused before the server starts: an RTS that cannot log,
 * a dump file that could not be written at the exit that needs it. */
static int check_start(void) {
    if (atomic_load(&instance.server) != NULL)
        return EVENTLOG_SOCKET_EALREADY;
    if (!rts_can_log())
        return EVENTLOG_SOCKET_ENOEVENTLOG;
    const char *dump = config()->dump_on_failure;
    int r = dump[0] != '\0' ? es_dump_check(dump) : 0;
    config()->event_classes = es_instance_hooks.event_classes;
    return r < 0 ? install(r, NULL) : 0;
}

int eventlog_socket_init_unix(const char *path) {
    int r = check_start();
    if (r != 0)
        return r;
    struct es_server *s = NULL;
    r = es_server_start_unix(&s, path, config(), es_instance_hooks.on_command, NULL);
    return install(r, s);
}

int eventlog_socket_init_tcp(const char *host, const char *port) {
    int r = check_start();
    if (r != 0)
        return r;
    struct es_server *s = NULL;
    r = es_server_start_tcp(&s, host, port, config(), es_instance_hooks.on_command, NULL);
    return install(r, s);
}

int es_instance_apply_env(const struct es_config **out) {
    struct es_config *cfg = config();
    int r = es_config_from_env(cfg);
    if (r < 0)
        return r;
    es_instance_hooks.set_graceful_sigterm(cfg->graceful_sigterm);
    if (cfg->flush_ms >= 0 &&
        (r = es_instance_hooks.set_flush_interval_ms((unsigned)cfg->flush_ms)) < 0)
        return r;
    *out = cfg;
    return 0;
}

int es_instance_set_linger_ms(unsigned ms) {
    if (atomic_load(&instance.server) != NULL)
        return EVENTLOG_SOCKET_EALREADY;
    struct eventlog_socket_options opts;
    es_config_to_options(config(), &opts);
    opts.linger_ms = ms;
    return es_config_from_options(config(), &opts);
}

int eventlog_socket_init_from_env(void) {
    const struct es_config *cfg;
    int r = es_instance_apply_env(&cfg);
    if (r < 0)
        return install(r, NULL); /* its line out before the caller's */
    r = cfg->unix_path ? eventlog_socket_init_unix(cfg->unix_path)
                       : eventlog_socket_init_tcp(cfg->inet_host, cfg->inet_port);
    if (r == 0 && cfg->wait) {
        es_log("waiting for a client to connect");
        r = eventlog_socket_wait_for_client();
    }
    return r;
}

int eventlog_socket_tcp_port(void) {
    struct es_server *s = atomic_load(&instance.server);
    int port = s ? es_server_tcp_port(s) : -1;
    return port < 0 ? EVENTLOG_SOCKET_ENOTCONFIGURED : port;
}

int eventlog_socket_wait_for_client(void) {
    struct es_server *s = atomic_load(&instance.server);
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    return es_server_wait_client(s);
}

int eventlog_socket_last_error(void) {
    struct es_server *s = atomic_load(&instance.server);
    return s ? es_server_last_error(s) : 0;
}
