/* The public configuration API: starting the server, readiness, waiting,
 * and switching a running RTS over to this library's writer. */
#include "es_rts.h"

#include "es_config.h"
#include "es_log.h"

struct es_rts es_rts = {
    .control_lock = PTHREAD_MUTEX_INITIALIZER,
    .flush_lock = PTHREAD_MUTEX_INITIALIZER,
    .flush_ms = -1,
};

void es_rts_on_command(uint8_t cmd, void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&es_rts.control_lock);
    if (es_rts.ready) {
        es_rts_heap_control(cmd);
    } else if (cmd == EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS) {
        es_rts.pending_census = true;
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
            es_rts_heap_control(es_rts.pending_profiling);
        if (es_rts.pending_census)
            es_rts_heap_control(EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS);
        es_rts.pending_profiling = 0;
        es_rts.pending_census = false;
    }
    pthread_mutex_unlock(&es_rts.control_lock);
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
    int r = es_server_start_unix(&s, path, NULL, es_rts_on_command, NULL);
    return install(r, s);
}

int eventlog_socket_init_tcp(const char *host, const char *port) {
    if (atomic_load(&es_rts.server) != NULL)
        return EVENTLOG_SOCKET_EALREADY;
    struct es_server *s = NULL;
    int r = es_server_start_tcp(&s, host, port, NULL, es_rts_on_command, NULL);
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
    return wait ? eventlog_socket_wait() : 0;
}

int eventlog_socket_start_unix(const char *path, bool wait) {
    return switch_writer(eventlog_socket_init_unix(path), wait);
}

int eventlog_socket_start_tcp(const char *host, const char *port, bool wait) {
    return switch_writer(eventlog_socket_init_tcp(host, port), wait);
}
