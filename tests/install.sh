#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make install, three ways: staged as a packager does (a temporary DESTDIR)
# with the default PREFIX and with PREFIX=/opt/..., and a real install
# under a temporary PREFIX. Each time: exactly the four files; pkg-config's
# flags name the installed copy and GHC's RTS headers, so a plain C compiler
# compiles a file that includes eventlog_socket.h; README's C main, built
# with the two build blocks of README and docs/c.md exactly as written
# (ghc driving it all, or cc compiling and ghc linking) against the
# installed header, archive and .pc only, streams its eventlog to an
# `nc -U` client, judged by the checker; then make uninstall must leave no
# file behind. Prints TAP.
# Usage: tests/install.sh [BUILD]
set -u
build=${1:-build}
repo=$(cd "$(dirname "$0")/.." && pwd)
checker=$repo/$build/eventlog-check
case $build in /*) checker=$build/eventlog-check ;; esac
hc=${HC:-ghc} # the Makefile's HC
ghc_version=$("$hc" --numeric-version)
version=$(sed -n 's/^version:[[:space:]]*//p' "$repo/ghc-eventlog-socket.cabal")

tmp=$(mktemp -d /tmp/es-install-test.XXXXXX)
app_pid=
cleanup() {
    if [ -n "$app_pid" ]; then kill "$app_pid" 2>/dev/null; wait "$app_pid" 2>/dev/null; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

n=0 failed=0
ok() { # ok STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
        echo "not ok $n - $2"
        failed=$((failed + 1))
    fi
}
show() { sed 's/^/#   /' "$@" | tail -n 30; }
bail() {
    echo "Bail out! $*"
    exit 1
}

# README's C main (its first ```c block, which run-all.sh holds equal to
# fibber-c-main.c) and the two build blocks of README and docs/c.md
# (ghc driving it all; cc, then ghc for the link), as a user copies them.
python3 - "$repo/README.md" "$repo/docs/c.md" "$tmp/readme" <<'PY' || bail "README's C main or the build blocks of README and docs/c.md not found"
import os, re, sys, textwrap
out = sys.argv[-1]
os.makedirs(out)
blocks = []
for path in sys.argv[1:-1]:
    text = open(path).read()
    blocks += [(lang, textwrap.dedent(body)) for lang, body in
               re.findall(r"^ *```(\w+)\n(.*?)^ *```", text, re.S | re.M)]
c_main = next(body for lang, body in blocks if lang == "c")
open(os.path.join(out, "main.c"), "w").write(c_main)
builds = []
for lang, body in blocks:
    if lang == "sh" and "pkg-config" in body and "-o app Main.hs main." in body \
            and "path/to" not in body and body not in builds:
        builds.append(body)
if len(builds) != 2:
    sys.exit("expected 2 build blocks with pkg-config, found %d" % len(builds))
for i, body in enumerate(builds):
    open(os.path.join(out, "build%d.sh" % (i + 1)), "w").write(body)
PY
# The docs write `ghc`: let it be the Makefile's HC.
mkdir -p "$tmp/bin"
if [ "$hc" != ghc ]; then
    printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$hc")" >"$tmp/bin/ghc"
    chmod 755 "$tmp/bin/ghc"
fi

make_in_repo() { # make_in_repo PREFIX DESTDIR TARGET (an empty PREFIX: the default)
    timeout 600 make -C "$repo" --no-print-directory ES_DEPS_CHECKED=1 BUILD="$build" \
        ${1:+PREFIX="$1"} DESTDIR="$2" "$3" >"$tmp/make.log" 2>&1
}

# Run an app built from the docs' blocks: it waits for the client, the
# client reads to the end, the checker judges the stream.
run_app() { # run_app LABEL EXE
    local label=$1 exe=$2 sock=$tmp/app.sock rc
    # A fresh log: the previous run's "listening" line must not be read as
    # this one's.
    rm -f "$sock" "$tmp/app.err"
    : >"$tmp/app.err"
    GHC_EVENTLOG_UNIX_PATH=$sock GHC_EVENTLOG_WAIT=1 timeout 120 "$exe" 20 25 \
        >"$tmp/app.out" 2>"$tmp/app.err" &
    app_pid=$!
    # Wait for the library's "listening on unix:PATH" line, not for the
    # file: bind() creates it a moment before listen() lets clients in.
    for _ in $(seq 1200); do
        grep -qF "listening on unix:$sock" "$tmp/app.err" && break
        kill -0 "$app_pid" 2>/dev/null || break
        sleep 0.05
    done
    timeout 120 nc -d -U "$sock" >"$tmp/stream.eventlog" 2>/dev/null
    wait "$app_pid"
    rc=$?
    app_pid=
    timeout 120 "$checker" "$tmp/stream.eventlog" >"$tmp/check.out" 2>&1 &&
        grep -q '^marker [0-9]* fib 20 = 6765$' "$tmp/check.out" &&
        grep -q '^marker [0-9]* fib 25 = 75025$' "$tmp/check.out" && [ "$rc" -eq 0 ]
    local judged=$?
    ok $judged "$label: the program exits 0 (got $rc) and nc -U got a whole stream with its markers ($(wc -c <"$tmp/stream.eventlog") bytes)"
    [ $judged -eq 0 ] && return
    show "$tmp/app.err"
    show "$tmp/check.out"
}

one_install() { # one_install LABEL PREFIX DESTDIR
    local label=$1 prefix=$2 dest=$3 root rc files expected flags d
    local where=${prefix:-/usr/local}
    root=$dest$where
    make_in_repo "$prefix" "$dest" install
    rc=$?
    ok $rc "$label: make install ${prefix:+PREFIX=$prefix }${dest:+DESTDIR=(temporary directory)}"
    [ $rc -eq 0 ] || { show "$tmp/make.log"; bail "make install failed"; }
    files=$(cd "$root" && find . ! -type d | sort | tr '\n' ' ')
    expected="./bin/eventlog-socket ./include/eventlog_socket.h ./lib/libeventlog-socket.a ./lib/pkgconfig/eventlog-socket.pc ./share/man/man1/eventlog-socket.1 ./share/man/man7/eventlog-socket.7 "
    [ "$files" = "$expected" ]
    ok $? "$label: installed exactly the command, the header, the archive, the .pc file and the manual pages (got: $files)"
    # man finds the installed pages by name, in their sections.
    if command -v man >/dev/null 2>&1; then
        local sec found
        for sec in 1 7; do
            found=$(MANPATH=$root/share/man man -w "$sec" eventlog-socket 2>&1)
            [ "$found" = "$root/share/man/man$sec/eventlog-socket.$sec" ]
            ok $? "$label: man -w $sec eventlog-socket finds the installed page (got: $found)"
        done
    fi
    local installed_version
    installed_version=$("$root/bin/eventlog-socket" --version 2>&1)
    [ "$installed_version" = "eventlog-socket $version" ]
    ok $? "$label: the installed command runs: --version says \"$installed_version\" (the cabal file: $version)"

    # pkg-config as a user of this tree runs it. A staged tree is a
    # sysroot: its .pc names the final paths, PKG_CONFIG_SYSROOT_DIR maps
    # them into DESTDIR, and the sysroot holds GHC's RTS headers too, as a
    # real one would (linked in here).
    local -x PKG_CONFIG_PATH=$root/lib/pkgconfig
    local rts_dirs
    rts_dirs=$(pkg-config --variable=rts_includedir eventlog-socket)
    if [ -n "$dest" ]; then
        local -x PKG_CONFIG_SYSROOT_DIR=$dest
        for d in $rts_dirs; do
            mkdir -p "$(dirname "$dest$d")"
            if [ ! -e "$dest$d" ]; then ln -s "$d" "$dest$d"; fi
        done
    fi
    flags=$(pkg-config --cflags --libs eventlog-socket 2>"$tmp/pc.err")
    rc=$?
    ok $rc "$label: pkg-config --cflags --libs eventlog-socket: $flags"
    [ $rc -eq 0 ] || { show "$tmp/pc.err"; bail "pkg-config failed"; }
    [ "$(pkg-config --modversion eventlog-socket)" = "$version" ]
    ok $? "$label: pkg-config --modversion says the cabal file's version ($version)"
    case " $flags " in
    *" -I$root/include "*" -L$root/lib -leventlog-socket "*"-luv "*) rc=0 ;;
    *) rc=1 ;;
    esac
    ok $rc "$label: the flags name the installed include and lib directories, then libuv"
    rc=0
    for d in $rts_dirs; do case " $flags " in *" -I$dest$d "*) ;; *) rc=1 ;; esac; done
    if [ -z "$rts_dirs" ] ||
        [ "$rts_dirs" != "$("${HC_PKG:-ghc-pkg}" field rts include-dirs --simple-output | tr '\n' ' ' | sed 's/ $//')" ]; then
        rc=1
    fi
    ok $rc "$label: Cflags carry the RTS include directories of the GHC it was built with ($rts_dirs)"
    case $flags in *"$repo"*) rc=1 ;; *) rc=0 ;; esac
    ok $rc "$label: no flag points into the repository"
    [ "$(pkg-config --variable=ghc_version eventlog-socket)" = "$ghc_version" ]
    ok $? "$label: the .pc records the GHC the archive was built with ($ghc_version)"

    # A plain C compiler, not driven by ghc.
    mkdir -p "$tmp/cc"
    printf '#include <eventlog_socket.h>\nint f(void) { return eventlog_socket_error_message(0) != NULL; }\n' \
        >"$tmp/cc/t.c"
    # shellcheck disable=SC2046 # the flags are words
    (cd "$tmp/cc" && timeout 120 cc -c t.c $(pkg-config --cflags eventlog-socket)) >"$tmp/cc.log" 2>&1
    rc=$?
    ok $rc "$label: cc -c t.c \$(pkg-config --cflags eventlog-socket) compiles a file that includes eventlog_socket.h"
    [ $rc -eq 0 ] || show "$tmp/cc.log"

    # The docs' blocks, exactly as written, in a directory holding only
    # README's C main and the example's Main.hs: the only eventlog_socket.h
    # and libeventlog-socket.a within reach are the installed ones.
    local i
    for i in 1 2; do
        rm -rf "$tmp/src" && mkdir -p "$tmp/src"
        cp "$tmp/readme/main.c" "$repo/examples/fibber-c-main/app/Main.hs" "$tmp/src/"
        (cd "$tmp/src" && PATH=$tmp/bin:$PATH timeout 600 bash -e "$tmp/readme/build$i.sh") \
            >"$tmp/build.log" 2>&1
        rc=$?
        ok $rc "$label: the docs' build block $i ($(head -n 1 "$tmp/readme/build$i.sh" | cut -d' ' -f1)...) builds README's C main"
        if [ $rc -eq 0 ]; then run_app "$label, block $i" "$tmp/src/app"; else show "$tmp/build.log"; fi
    done

    make_in_repo "$prefix" "$dest" uninstall
    rc=$?
    ok $rc "$label: make uninstall with the same PREFIX and DESTDIR"
    [ $rc -eq 0 ] || show "$tmp/make.log"
    local left
    left=$(cd "$root" && find . ! -type d)
    [ -z "$left" ]
    ok $? "$label: make uninstall left no file behind${left:+ (left: $(echo "$left" | tr '\n' ' '))}"
}

one_install "staged, default prefix" "" "$tmp/dest-default"
one_install "staged, PREFIX=/opt/eventlog-socket-test" /opt/eventlog-socket-test "$tmp/dest-opt"
one_install "installed, PREFIX=(temporary directory)" "$tmp/prefix" ""

echo "1..$n"
[ "$failed" -eq 0 ]
