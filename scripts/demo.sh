#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make demo: stream fibber-c-main's eventlog over a Unix socket to `nc`,
# ask for a heap census through the control channel, and show what arrived
# with `ghc-events show`.
set -euo pipefail
build=${1:-build}
dir=$(mktemp -d /tmp/eventlog-socket-demo.XXXXXX)
fibber_pid=
cleanup() {
    [ -n "$fibber_pid" ] && kill "$fibber_pid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
sock=$dir/fibber.sock
log=$dir/fibber.eventlog

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }

say "1. Start fibber-c-main, streaming its eventlog to $sock (it waits for a client):"
echo "   GHC_EVENTLOG_UNIX_PATH=$sock GHC_EVENTLOG_WAIT=1 $build/fibber-c-main 27 28 29 +RTS -hT -i0.5 -RTS"
GHC_EVENTLOG_UNIX_PATH=$sock GHC_EVENTLOG_WAIT=1 \
    timeout 120 "$build/fibber-c-main" 27 28 29 +RTS -hT -i0.5 -RTS &
fibber_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

say "2. Connect with nc; stop timed heap sampling (GCTL 0x02) and request one census (GCTL 0x03):"
echo "   printf 'GCTL\\x02GCTL\\x03' | nc -U $sock > fibber.eventlog"
printf 'GCTL\002GCTL\003' | timeout 120 nc -U "$sock" > "$log"
wait "$fibber_pid"
fibber_pid=

say "3. What arrived ($(wc -c < "$log") bytes), as ghc-events reads it:"
# Only the events, not the table of event types that precedes them.
ghc-events show "$log" | awk 'found; /^Events:/ { found = 1 }' > "$dir/events.txt"
grep -m 2 -E 'RTS version|args:' "$dir/events.txt" | sed 's/^/   /' || true
grep -E 'marker' "$dir/events.txt" | sed 's/^/   /' || true
grep -m 4 -E 'heap prof sample' "$dir/events.txt" | sed 's/^/   /' || true
events=$(grep -cE '^ *[0-9]+: ' "$dir/events.txt" || true)
samples=$(grep -c 'start heap prof sample' "$dir/events.txt" || true)
say "$events events; $samples heap profile sample(s): the census the client asked for (it stopped the 0.5 s timer first)."
