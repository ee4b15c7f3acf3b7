#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The archive must export the public API and nothing else: every internal
# name is local after `objcopy --localize-hidden`, so a program linking the
# library cannot clash with it. The public API is this library's own and
# upstream eventlog-socket 0.1.3's (include/eventlog_socket.h). Prints TAP.
set -u
lib=${1:?usage: check-symbols.sh LIB}
exported=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort)
bad=$(printf '%s\n' "$exported" | grep -Ev '^(eventlog_socket_[a-z_]+|SocketEventLogWriter|EventLogSocketWriter)$' | grep -v '^$')
# This library's API.
ours="SocketEventLogWriter eventlog_socket_hs_main eventlog_socket_init_from_env
eventlog_socket_init_tcp eventlog_socket_init_unix eventlog_socket_last_error
eventlog_socket_ready eventlog_socket_set_flush_interval_ms eventlog_socket_start_tcp
eventlog_socket_options_init eventlog_socket_set_options eventlog_socket_stats eventlog_socket_start_unix
eventlog_socket_error_message eventlog_socket_tcp_port eventlog_socket_wait_for_client
eventlog_socket_register_namespace eventlog_socket_register_command eventlog_socket_namespace_name
eventlog_socket_add_hook eventlog_socket_event_classes eventlog_socket_switch_event_classes
eventlog_socket_span_begin eventlog_socket_span_end"
# Upstream eventlog-socket 0.1.3's functions and writer, by its names.
upstream="EventLogSocketWriter eventlog_socket_strerror eventlog_socket_addr_free
eventlog_socket_opts_init eventlog_socket_opts_free eventlog_socket_start eventlog_socket_from_env
eventlog_socket_init eventlog_socket_wrap_hs_main eventlog_socket_signal_ghc_rts_ready
eventlog_socket_wait eventlog_socket_worker_status eventlog_socket_control_status
eventlog_socket_register_hook eventlog_socket_control_strnamespace
eventlog_socket_control_register_namespace eventlog_socket_control_register_command"
missing=$(for s in $ours $upstream; do printf '%s\n' "$exported" | grep -qx "$s" || echo "$s"; done)
extra=$(for s in $exported; do case " $(echo $ours $upstream) " in *" $s "*) ;; *) echo "$s" ;; esac; done)
addr() { nm -g --defined-only "$lib" | awk -v s="$1" 'NF == 3 && $3 == s { print $1 }'; }
echo "1..4"
if [ -z "$bad" ]; then echo "ok 1 - only public names are exported"; else
    echo "not ok 1 - internal names are exported:"; printf '#   %s\n' $bad; fi
if [ -z "$missing" ]; then echo "ok 2 - every public function is exported (ours and upstream 0.1.3's)"; else
    echo "not ok 2 - public names missing:"; printf '#   %s\n' $missing; fi
if [ -z "$extra" ]; then echo "ok 3 - nothing is exported that this list does not name"; else
    echo "not ok 3 - exported but not listed here (add it, or hide it):"; printf '#   %s\n' $extra; fi
a=$(addr SocketEventLogWriter) b=$(addr EventLogSocketWriter)
if [ -n "$a" ] && [ "$a" = "$b" ]; then
    echo "ok 4 - EventLogSocketWriter (upstream's name) is SocketEventLogWriter, one object"
else
    echo "not ok 4 - EventLogSocketWriter ($b) and SocketEventLogWriter ($a) differ"
fi
[ -z "$bad" ] && [ -z "$missing" ] && [ -z "$extra" ] && [ -n "$a" ] && [ "$a" = "$b" ]
