/* The public configuration API: starting the server, readiness, waiting,
 * and switching a running RTS over to this library's writer. */
#include "es_rts.h"

#include "es_config.h"
#include "es_log.h"
#include "es_registry.h"

#include <string.h>

struct es_rts es_rts = {
    .control_lock = PTHREAD_MUTEX_INITIALIZER,
    .flush_lock = PTHREAD_MUTEX_INITIALIZER,
    .flush_ms = -1,
};

void es_rts_on_command(uint8_t cmd, void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&es_rts.control_lock);
    if (es_rts.ready) {
        es_rts_control(cmd);
    } else if (cmd == EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS) {
        es_rts.pending_census = true;
    } else if (cmd == EVENTLOG_SOCKET_CMD_START_COST_CENTRE_PROFILING ||
               cmd == EVENTLOG_SOCKET_CMD_STOP_COST_CENTRE_PROFILING) {
        es_rts.pending_cost_centre = cmd;
    } else {
        es_rts.pending_profiling = cmd;
    }
    pthread_mutex_unlock(&es_rts.control_lock);
}

void eventlog_socket_ready(void) {
    pthread_mutex_lock(&es_rts.control_lock);
    if (!es_rts.ready) {
        es_rts.ready = true;
        if (es_rts.pending_profiling)
            es_rts_control(es_rts.pending_profiling);
        if (es_rts.pending_census)
            es_rts_control(EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS);
        if (es_rts.pending_cost_centre)
            es_rts_control(es_rts.pending_cost_centre);
        es_rts.pending_profiling = 0;
        es_rts.pending_census = false;
        es_rts.pending_cost_centre = 0;
    }
    pthread_mutex_unlock(&es_rts.control_lock);
    /* Custom command handlers and hooks may run from now on. */
    es_registry_set_running(true);
}

void eventlog_socket_options_init(struct eventlog_socket_options *opts) {
    struct es_server_config d;
    es_server_config_defaults(&d);
    opts->max_buffer = d.max_buffer;
    opts->client_buffer = d.client_limit;
    opts->slow_client =
        d.drop_slow ? EVENTLOG_SOCKET_SLOW_CLIENT_DROP : EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT;
    opts->linger_ms = d.linger_ms;
    opts->control_interval_ms = d.control_interval_ms;
    opts->max_clients = d.max_clients;
    opts->allow_other_users = d.allow_other_users;
}

/* The configuration init_* uses: the defaults until set_options. */
static struct es_server_config *config(void) {
    if (!es_rts.cfg_set) {
        es_server_config_defaults(&es_rts.cfg);
        es_rts.cfg_set = true;
    }
    return &es_rts.cfg;
}

int eventlog_socket_set_options(const struct eventlog_socket_options *opts) {
    if (atomic_load(&es_rts.server) != NULL)
        return EVENTLOG_SOCKET_EALREADY;
    if (opts == NULL || opts->max_buffer < ES_MIN_BUFFER || opts->client_buffer < ES_MIN_BUFFER ||
        (opts->slow_client != EVENTLOG_SOCKET_SLOW_CLIENT_DROP &&
         opts->slow_client != EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT) ||
        opts->control_interval_ms > 60000 || opts->max_clients == 0)
        return EVENTLOG_SOCKET_EINVAL;
    struct es_server_config *cfg = config();
    cfg->max_buffer = opts->max_buffer;
    cfg->client_limit = opts->client_buffer;
    cfg->drop_slow = opts->slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DROP;
    cfg->linger_ms = opts->linger_ms;
    cfg->control_interval_ms = opts->control_interval_ms;
    cfg->max_clients = opts->max_clients;
    cfg->allow_other_users = opts->allow_other_users != 0;
    return 0;
}

int eventlog_socket_stats(struct eventlog_socket_stats *out) {
    memset(out, 0, sizeof *out);
    struct es_server *s = atomic_load(&es_rts.server);
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    const struct es_counters *k = &s->counters;
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
    out->bytes_received = es_inbox_bytes_in(&s->inbox);
    return 0;
}

/* Publish a started server, unless one exists already. */
static int install(int r, struct es_server *s) {
    if (r < 0)
        return r;
    struct es_server *none = NULL;
    if (!atomic_compare_exchange_strong(&es_rts.server, &none, s)) {
        es_server_stop(s);
        es_server_free(s);
        return EVENTLOG_SOCKET_EALREADY;
    }
    return 0;
}

int eventlog_socket_init_unix(const char *path) {
    if (atomic_load(&es_rts.server) != NULL)
        return EVENTLOG_SOCKET_EALREADY;
    struct es_server *s = NULL;
    int r = es_server_start_unix(&s, path, config(), es_rts_on_command, NULL);
    return install(r, s);
}

int eventlog_socket_init_tcp(const char *host, const char *port) {
    if (atomic_load(&es_rts.server) != NULL)
        return EVENTLOG_SOCKET_EALREADY;
    struct es_server *s = NULL;
    int r = es_server_start_tcp(&s, host, port, config(), es_rts_on_command, NULL);
    return install(r, s);
}

static int init_and_wait(const char *path, const char *host, const char *port, bool wait) {
    int r = path ? eventlog_socket_init_unix(path) : eventlog_socket_init_tcp(host, port);
    if (r == 0 && wait) {
        es_log("waiting for a client to connect");
        r = eventlog_socket_wait();
    }
    return r;
}

int eventlog_socket_init_from_env(void) {
    struct es_env_config cfg;
    int r = es_config_from_env(&cfg);
    if (r < 0)
        return r;
    struct es_server_config *sc = config();
    if (cfg.max_buffer)
        sc->max_buffer = cfg.max_buffer;
    if (cfg.client_buffer)
        sc->client_limit = cfg.client_buffer;
    if (cfg.slow_client >= 0)
        sc->drop_slow = cfg.slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DROP;
    if (cfg.control_ms >= 0)
        sc->control_interval_ms = (unsigned)cfg.control_ms;
    es_rts.graceful_sigterm = cfg.graceful_sigterm;
    if (cfg.allow_other_users >= 0)
        sc->allow_other_users = cfg.allow_other_users;
    if (cfg.max_clients > 0)
        sc->max_clients = cfg.max_clients;
    if (cfg.flush_ms >= 0 &&
        (r = eventlog_socket_set_flush_interval_ms((unsigned)cfg.flush_ms)) < 0)
        return r;
    return init_and_wait(cfg.unix_path, cfg.inet_host, cfg.inet_port, cfg.wait);
}

int eventlog_socket_tcp_port(void) {
    struct es_server *s = atomic_load(&es_rts.server);
    if (s == NULL || s->is_unix)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    return s->addr.port;
}

int eventlog_socket_wait(void) {
    struct es_server *s = atomic_load(&es_rts.server);
    if (s == NULL)
        return EVENTLOG_SOCKET_ENOTCONFIGURED;
    return es_server_wait_client(s);
}

int eventlog_socket_last_error(void) {
    struct es_server *s = atomic_load(&es_rts.server);
    return s ? atomic_load(&s->last_error) : 0;
}

int eventlog_socket_set_flush_interval_ms(unsigned ms) {
    if (ms > 60000)
        return EVENTLOG_SOCKET_EINVAL;
#if __GLASGOW_HASKELL__ < 902
    if (ms > 0) {
        es_log("GHC %d.%d cannot flush its eventlog buffers; events arrive when a buffer "
               "fills and at exit",
               __GLASGOW_HASKELL__ / 100, __GLASGOW_HASKELL__ % 100);
        return EVENTLOG_SOCKET_ENOTSUP;
    }
#endif
    pthread_mutex_lock(&es_rts.flush_lock);
    es_rts.flush_ms = (int)ms;
    pthread_mutex_unlock(&es_rts.flush_lock);
    es_rts_flush_update();
    return 0;
}

/* Switch a running RTS from its current writer (if any) to ours. */
static int switch_writer(int r, bool wait) {
    if (r < 0)
        return r;
    /* No periodic flush may run while event logging stops and starts. */
    pthread_mutex_lock(&es_rts.flush_lock);
    if (eventLogStatus() == EVENTLOG_NOT_SUPPORTED) {
        r = EVENTLOG_SOCKET_ENOEVENTLOG;
    } else if (eventLogStatus() != EVENTLOG_RUNNING &&
               RtsFlags.TraceFlags.tracing != TRACE_EVENTLOG) {
        /* Without -l no event class is enabled (they are chosen once, at
         * start-up): startEventLogging would succeed and the clients would
         * get a header and nothing else. A log stopped by the program
         * itself after starting with -l may be restarted. */
        r = EVENTLOG_SOCKET_EEVENTLOGOFF;
    } else {
        if (eventLogStatus() == EVENTLOG_RUNNING)
            endEventLogging();
        if (!startEventLogging(&SocketEventLogWriter))
            r = EVENTLOG_SOCKET_ENOEVENTLOG;
    }
    pthread_mutex_unlock(&es_rts.flush_lock);
    if (r < 0) {
        struct es_server *s = atomic_exchange(&es_rts.server, NULL);
        es_server_stop(s);
        es_server_free(s);
        return r;
    }
    eventlog_socket_ready();
    /* Live streaming needs periodic flushes, which must stop before hs_exit
     * shuts the RTS down: with GHC's own main that takes an exit hook put in
     * after the fact. */
    if (es_rts_install_exit_hook())
        es_rts_flush_enable();
    return wait ? eventlog_socket_wait() : 0;
}

int eventlog_socket_start_unix(const char *path, bool wait) {
    return switch_writer(eventlog_socket_init_unix(path), wait);
}

int eventlog_socket_start_tcp(const char *host, const char *port, bool wait) {
    return switch_writer(eventlog_socket_init_tcp(host, port), wait);
}
