#!/usr/bin/env bash
# The archive must export the public API and nothing else: every internal
# name is local after `objcopy --localize-hidden`, so a program linking the
# library cannot clash with it. Prints TAP.
set -u
lib=${1:?usage: check-symbols.sh LIB}
exported=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort)
bad=$(printf '%s\n' "$exported" | grep -Ev '^(eventlog_socket_[a-z_]+|SocketEventLogWriter)$' | grep -v '^$')
expected="SocketEventLogWriter eventlog_socket_hs_main eventlog_socket_init_from_env
eventlog_socket_init_tcp eventlog_socket_init_unix eventlog_socket_last_error
eventlog_socket_ready eventlog_socket_set_flush_interval_ms eventlog_socket_start_tcp
eventlog_socket_options_init eventlog_socket_set_options eventlog_socket_stats eventlog_socket_start_unix
eventlog_socket_strerror eventlog_socket_tcp_port eventlog_socket_wait"
missing=$(for s in $expected; do printf '%s\n' "$exported" | grep -qx "$s" || echo "$s"; done)
echo "1..2"
if [ -z "$bad" ]; then echo "ok 1 - only public names are exported"; else
    echo "not ok 1 - internal names are exported:"; printf '#   %s\n' $bad; fi
if [ -z "$missing" ]; then echo "ok 2 - every public function is exported"; else
    echo "not ok 2 - public names missing:"; printf '#   %s\n' $missing; fi
[ -z "$bad" ] && [ -z "$missing" ]
