#!/bin/sh
# One version everywhere: the cabal file holds it; the header's
# EVENTLOG_SOCKET_VERSION and `eventlog-socket --version` must say the same
# (the .pc file is checked by tests/install.sh, where it is made). TAP.
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
cabal=$(sed -n 's/^version:[[:space:]]*//p' eventlog-socket.cabal)
header=$(sed -n 's/^#define EVENTLOG_SOCKET_VERSION "\(.*\)"$/\1/p' include/eventlog_socket.h)
command=$(timeout 10 "$build/eventlog-socket" --version 2>&1)
echo "1..3"
[ -n "$cabal" ] && echo "ok 1 - eventlog-socket.cabal says $cabal" ||
    echo "not ok 1 - no version: line in eventlog-socket.cabal"
[ "$header" = "$cabal" ] && echo "ok 2 - include/eventlog_socket.h says $header" ||
    echo "not ok 2 - include/eventlog_socket.h says \"$header\", the cabal file $cabal"
[ "$command" = "eventlog-socket $cabal" ] && echo "ok 3 - eventlog-socket --version says \"$command\"" ||
    echo "not ok 3 - eventlog-socket --version says \"$command\", the cabal file $cabal"
