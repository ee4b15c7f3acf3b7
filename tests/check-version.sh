#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# One version everywhere: ghc-eventlog-socket.cabal holds it; the header's
# EVENTLOG_SOCKET_VERSION, `eventlog-socket --version`, the drop-in package
# under upstream's name (its version and its pin on ghc-eventlog-socket) and
# CHANGELOG.md's newest section must say the same (the .pc file is checked
# by tests/install.sh, where it is made). TAP.
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
cabal=$(sed -n 's/^version:[[:space:]]*//p' ghc-eventlog-socket.cabal)
header=$(sed -n 's/^#define EVENTLOG_SOCKET_VERSION "\(.*\)"$/\1/p' include/eventlog_socket.h)
command=$(timeout 10 "$build/eventlog-socket" --version 2>&1)
compat=compat/eventlog-socket/eventlog-socket.cabal
compat_version=$(sed -n 's/^version:[[:space:]]*//p' "$compat")
compat_pin=$(sed -n 's/^[[:space:]]*build-depends:[[:space:]]*ghc-eventlog-socket ==\([0-9.]*\)[[:space:]]*$/\1/p' "$compat")
changelog=$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' CHANGELOG.md | head -n 1)
echo "1..6"
[ -n "$cabal" ] && echo "ok 1 - ghc-eventlog-socket.cabal says $cabal" ||
    echo "not ok 1 - no version: line in ghc-eventlog-socket.cabal"
[ "$header" = "$cabal" ] && echo "ok 2 - include/eventlog_socket.h says $header" ||
    echo "not ok 2 - include/eventlog_socket.h says \"$header\", the cabal file $cabal"
[ "$command" = "eventlog-socket $cabal" ] && echo "ok 3 - eventlog-socket --version says \"$command\"" ||
    echo "not ok 3 - eventlog-socket --version says \"$command\", the cabal file $cabal"
[ "$compat_version" = "$cabal" ] && echo "ok 4 - $compat says $compat_version" ||
    echo "not ok 4 - $compat says \"$compat_version\", ghc-eventlog-socket.cabal $cabal"
[ "$compat_pin" = "$cabal" ] && echo "ok 5 - $compat depends on ghc-eventlog-socket ==$compat_pin" ||
    echo "not ok 5 - $compat depends on ghc-eventlog-socket ==\"$compat_pin\", not ==$cabal"
[ "$changelog" = "$cabal" ] && echo "ok 6 - CHANGELOG.md's newest section is $changelog" ||
    echo "not ok 6 - CHANGELOG.md's newest section is \"$changelog\", not $cabal"
