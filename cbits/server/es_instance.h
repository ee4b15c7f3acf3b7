/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's one server and its configuration, behind the public
 * configuration API (eventlog_socket_set_options, _init_*, _stats, _wait,
 * ...), which is implemented here because it needs no RTS. What does need
 * it comes through a small hook struct that rts-writer/ defines
 * (es_instance_hooks): the command callback, the flush interval, and the
 * SIGTERM setting. Unit tests define their own.
 *
 * The server pointer may be read from any thread (es_instance_server); the
 * configuration is set before the server starts and not thread-safe, as
 * the public API says. */
#ifndef ES_INSTANCE_H
#define ES_INSTANCE_H

#include "es_server.h"

#include <stdbool.h>

struct es_instance_hooks {
    /* A control command from a client (the loop thread). */
    es_control_cb on_command;
    /* eventlog_socket_set_flush_interval_ms, for GHC_EVENTLOG_FLUSH_INTERVAL_MS. */
    int (*set_flush_interval_ms)(unsigned ms);
    /* GHC_EVENTLOG_GRACEFUL_SIGTERM was read. */
    void (*set_graceful_sigterm)(bool on);
    /* Whether the RTS can log events at all (before GHC 9.4 only when the
     * program was linked with -eventlog); asked before a server starts, so
     * that a program that could never stream creates no socket. NULL: yes. */
    bool (*rts_can_log)(void);
    /* Which event classes are on, which can be switched
     * (eventlog_socket_event_classes); NULL: none known. */
    es_classes_fn event_classes;
};

/* Defined by rts-writer/api.c (or a test). */
extern const struct es_instance_hooks es_instance_hooks;

/* The running server, or NULL. Any thread. */
struct es_server *es_instance_server(void);

/* Take the server out of the instance (to stop and free it after its
 * writer could not be installed); NULL when there is none. */
struct es_server *es_instance_detach(void);

struct es_config;

/* Apply the GHC_EVENTLOG_* environment to the configuration the next
 * init_* starts the server with (eventlog_socket_init_from_env, and
 * upstream's eventlog_socket_from_env), the flush interval and the SIGTERM
 * setting included; `*out` is that configuration, whose unix_path or
 * inet_host/_port say where to listen. Returns es_config_from_env's
 * errors. Not thread-safe. */
int es_instance_apply_env(const struct es_config **out);

/* How long exit waits for slow clients, for the server init_* starts next
 * (upstream's eso_linger). Returns 0, EVENTLOG_SOCKET_EINVAL or
 * EVENTLOG_SOCKET_EALREADY. Not thread-safe. */
int es_instance_set_linger_ms(unsigned ms);

#endif
