#!/usr/bin/env bash
# make install, as a packager stages it: install into a temporary DESTDIR,
# build examples/fibber-c-main from a copy of its sources against the
# installed header, archive and eventlog-socket.pc only (nothing from the
# repository), stream its eventlog to an `nc -U` client and judge the stream
# with the checker; then make uninstall must leave no file behind.
# Prints TAP. Usage: tests/install.sh [BUILD]
set -u
build=${1:-build}
repo=$(cd "$(dirname "$0")/.." && pwd)
checker=$repo/$build/eventlog-check
case $build in /*) checker=$build/eventlog-check ;; esac
prefix=/opt/eventlog-socket-test

tmp=$(mktemp -d /tmp/es-install-test.XXXXXX)
fibber_pid=
cleanup() {
    if [ -n "$fibber_pid" ]; then kill "$fibber_pid" 2>/dev/null; wait "$fibber_pid" 2>/dev/null; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
dest=$tmp/dest

n=0 failed=0
ok() { # ok STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
        echo "not ok $n - $2"
        failed=$((failed + 1))
    fi
}
show() { sed 's/^/#   /' "$@"; }
bail() {
    echo "Bail out! $*"
    exit 1
}

make_in_repo() {
    timeout 600 make -C "$repo" --no-print-directory ES_DEPS_CHECKED=1 BUILD="$build" \
        PREFIX="$prefix" DESTDIR="$dest" "$@" >"$tmp/make.log" 2>&1
}

make_in_repo install
rc=$?
ok $rc "make install PREFIX=$prefix DESTDIR=(temporary directory)"
[ $rc -eq 0 ] || { show "$tmp/make.log"; bail "make install failed"; }
files=$(cd "$dest" && find . ! -type d | sort | tr '\n' ' ')
expected="./opt/eventlog-socket-test/bin/eventlog-socket ./opt/eventlog-socket-test/include/eventlog_socket.h ./opt/eventlog-socket-test/lib/libeventlog-socket.a ./opt/eventlog-socket-test/lib/pkgconfig/eventlog-socket.pc ./opt/eventlog-socket-test/share/man/man1/eventlog-socket.1 ./opt/eventlog-socket-test/share/man/man7/eventlog-socket.7 "
[ "$files" = "$expected" ]
ok $? "installed exactly the command, the header, the archive, the .pc file and the manual pages (got: $files)"
# man finds the installed pages by name, in their sections.
if command -v man >/dev/null 2>&1; then
    for sec in 1 7; do
        found=$(MANPATH=$dest$prefix/share/man man -w "$sec" eventlog-socket 2>&1)
        [ "$found" = "$dest$prefix/share/man/man$sec/eventlog-socket.$sec" ]
        ok $? "man -w $sec eventlog-socket finds the installed page (got: $found)"
    done
fi
version=$(sed -n 's/^version:[[:space:]]*//p' "$repo/eventlog-socket.cabal")
installed_version=$("$dest$prefix/bin/eventlog-socket" --version 2>&1)
[ "$installed_version" = "eventlog-socket $version" ]
ok $? "the installed command runs: --version says \"$installed_version\" (the cabal file: $version)"
"$dest$prefix/bin/eventlog-socket" --help 2>&1 | grep -q "record ADDR"
ok $? "the installed command's --help lists the subcommands"

# pkg-config as a user of the staged tree runs it: the .pc names the final
# prefix, and the sysroot maps it into DESTDIR (libuv's directories too,
# which then do not exist: the linker finds -luv in its default ones).
export PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs eventlog-socket 2>"$tmp/pc.err")
rc=$?
ok $rc "pkg-config --cflags --libs eventlog-socket: $flags"
[ "$(pkg-config --modversion eventlog-socket)" = "$version" ]
ok $? "pkg-config --modversion says the cabal file's version ($version)"
[ $rc -eq 0 ] || { show "$tmp/pc.err"; bail "pkg-config failed"; }
case " $flags " in
*" -I$dest$prefix/include "*" -L$dest$prefix/lib -leventlog-socket "*"-luv "*) rc=0 ;;
*) rc=1 ;;
esac
ok $rc "the flags name the installed include and lib directories, then libuv"
case $flags in *"$repo"*) rc=1 ;; *) rc=0 ;; esac
ok $rc "no flag points into the repository"
static_flags=$(pkg-config --static --libs eventlog-socket)
case " $static_flags " in *" -leventlog-socket "*"-luv "*) rc=0 ;; *) rc=1 ;; esac
ok $rc "pkg-config --static --libs: $static_flags"
hc=${HC:-ghc}  # the Makefile's HC
ghc_version=$("$hc" --numeric-version)
[ "$(pkg-config --variable=ghc_version eventlog-socket)" = "$ghc_version" ]
ok $? "the .pc records the GHC the archive was built with ($ghc_version)"

# Build the example from a copy of its sources: the only eventlog_socket.h
# and libeventlog-socket.a within reach are the installed ones.
mkdir -p "$tmp/src" "$tmp/obj"
cp "$repo/examples/fibber-c-main/app/Main.hs" "$repo/examples/fibber-c-main/cbits/fibber-c-main.c" "$tmp/src/"
eventlog_flag=$(echo "$ghc_version" | awk -F. '{ if ($1 * 100 + $2 < 904) print "-eventlog" }')
# shellcheck disable=SC2086 # the flags are words
(cd "$tmp/src" && timeout 600 "$hc" -O -threaded $eventlog_flag -no-hs-main -outputdir "$tmp/obj" \
    -o "$tmp/fibber" Main.hs fibber-c-main.c $flags) >"$tmp/ghc.log" 2>&1
rc=$?
ok $rc "ghc builds fibber-c-main with \$(pkg-config --cflags --libs eventlog-socket)"
[ $rc -eq 0 ] || { show "$tmp/ghc.log"; bail "the example did not build"; }

# Stream it: the program waits for the client, the client reads to the end.
sock=$tmp/fibber.sock
GHC_EVENTLOG_UNIX_PATH=$sock GHC_EVENTLOG_WAIT=1 timeout 120 "$tmp/fibber" 20 25 \
    >"$tmp/fibber.out" 2>"$tmp/fibber.err" &
fibber_pid=$!
# Wait for the library's "listening on unix:PATH" line, not for the file:
# bind() creates the socket file a moment before listen() lets clients in,
# and an nc that connects in between is refused (seen under load).
for _ in $(seq 1200); do
    grep -qF "listening on unix:$sock" "$tmp/fibber.err" && break
    kill -0 "$fibber_pid" 2>/dev/null || break
    sleep 0.05
done
grep -qF "listening on unix:$sock" "$tmp/fibber.err" && [ -S "$sock" ]
rc=$?
ok $rc "the installed build listens on GHC_EVENTLOG_UNIX_PATH"
[ $rc -eq 0 ] || { show "$tmp/fibber.err"; bail "no socket"; }
timeout 120 nc -d -U "$sock" >"$tmp/stream.eventlog"
ok $? "nc -U read the stream to its end"
wait "$fibber_pid"
rc=$?
fibber_pid=
ok $rc "fibber-c-main exited with status 0 (got $rc)"
[ $rc -eq 0 ] || show "$tmp/fibber.err"
timeout 120 "$checker" "$tmp/stream.eventlog" >"$tmp/check.out" 2>&1
rc=$?
ok $rc "the checker parses the whole stream ($(wc -c <"$tmp/stream.eventlog") bytes)"
[ $rc -eq 0 ] || show "$tmp/check.out"
grep -q '^marker [0-9]* fib 20 = 6765$' "$tmp/check.out" &&
    grep -q '^marker [0-9]* fib 25 = 75025$' "$tmp/check.out"
ok $? "the stream holds the program's markers (fib 20 = 6765, fib 25 = 75025)"

make_in_repo uninstall
rc=$?
ok $rc "make uninstall with the same PREFIX and DESTDIR"
[ $rc -eq 0 ] || show "$tmp/make.log"
left=$(cd "$dest" && find . ! -type d)
[ -z "$left" ]
ok $? "make uninstall left no file behind${left:+ (left: $(echo $left))}"

echo "1..$n"
[ "$failed" -eq 0 ]
