#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The cabal package as a user meets it, from its release tarball: `cabal
# sdist` of ghc-eventlog-socket, unpacked into an empty directory (nothing else of
# this tree), is what every build below uses, offline, with a fresh cabal
# directory (no ~/.cabal, no package index) and only GHC's boot packages.
# Its modules build without a warning (-Werror, for the C sources too) and
# haddock documents every exported name. A tiny project (tests/cabal/tiny)
# depends on ghc-eventlog-socket; the programs of tests/cabal/upstream-compat,
# written against upstream eventlog-socket 0.1.3's API only, keep
# upstream's README bounds (eventlog-socket >=0.1 && <0.2) and build with
# the cabal.project lines of docs/upstream.md, copied out of
# it. They run with reading clients; the streams are judged by the checker
# (ghc-events), and the upstream programs' hooks must fire when upstream's
# would (tests/cabal/upstream_hooks.py, HOOK_RUNS runs of each, default 20).
# Prints TAP.
#
#   tests/cabal-package.sh BUILD     (BUILD holds eventlog-check)
set -u
build=${1:-build}
# The Haskell compiler (the Makefile's HC), for cabal too (-w).
hc=${HC:-ghc}
repo=$(cd "$(dirname "$0")/.." && pwd)
checker=$(cd "$build" 2>/dev/null && pwd)/eventlog-check
step_timeout=60
build_timeout=900
hook_runs=${HOOK_RUNS:-20}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/es-cabal.XXXXXX")
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1))
    echo "not ok $n - $1"
    [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/#   /' "$2" | tail -n 20
}
expect() { # expect DESCRIPTION LOG COMMAND...
    local what=$1 log=$2
    shift 2
    if "$@"; then ok "$what"; else not_ok "$what" "$log"; fi
}

echo "1..36"
if ! command -v cabal >/dev/null 2>&1; then
    not_ok "cabal is installed (apt-get install cabal-install)"
    exit 1
fi
if [ ! -x "$checker" ]; then
    not_ok "the checker $checker is built (make check builds it)"
    exit 1
fi

# No user configuration and no package index: an empty config file (without
# it cabal would try to download Hackage's root.json), a cabal directory of
# our own, --offline.
export CABAL_DIR="$tmp/cabal-dir"
version=$(sed -n 's/^version:[[:space:]]*//p' "$repo/ghc-eventlog-socket.cabal")

# The release tarball, made as a maintainer makes it, then unpacked where
# the docs' lines expect this repository: ../eventlog-socket of the project.
(cd "$repo" && timeout "$build_timeout" cabal --config-file=/dev/null sdist --ignore-project \
    --builddir="$tmp/dist-sdist" -o "$tmp/sdist") >"$tmp/sdist.log" 2>&1
tarball=$tmp/sdist/ghc-eventlog-socket-$version.tar.gz
mkdir -p "$tmp/eventlog-socket"
tar -xzf "$tarball" -C "$tmp/eventlog-socket" --strip-components=1 >>"$tmp/sdist.log" 2>&1
expect "cabal sdist makes ghc-eventlog-socket-$version.tar.gz; unpacked into an empty directory" "$tmp/sdist.log" \
    [ -f "$tmp/eventlog-socket/ghc-eventlog-socket.cabal" ]
missing=
for f in LICENSE README.md CHANGELOG.md protocol.md include/eventlog_socket.h \
    compat/eventlog-socket/eventlog-socket.cabal; do
    [ -f "$tmp/eventlog-socket/$f" ] || missing="$missing $f"
done
expect "the tarball holds the licence, README, CHANGELOG, protocol, the header and the drop-in package${missing:+ (missing:$missing)}" \
    /dev/null [ -z "$missing" ]

# A reader of the unpacked tarball follows README's and the docs' links:
# each relative link of every .md file in it names a file or folder in it.
python3 - "$tmp/eventlog-socket" >"$tmp/links.log" 2>&1 <<'PY'
import os, re, sys
root = sys.argv[1]
bad = []
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".md"):
            continue
        path = os.path.join(d, f)
        for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)", open(path, encoding="utf-8").read()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(d, target))):
                bad.append("%s: %s" % (os.path.relpath(path, root), target))
print("\n".join(bad) if bad else "every link resolves")
sys.exit(1 if bad else 0)
PY
links_rc=$?
expect "every relative link of the tarball's .md files resolves inside it ($(tail -n 1 "$tmp/links.log"))" \
    "$tmp/links.log" [ $links_rc -eq 0 ]

# A reader of the unpacked tarball follows README's Install section: the
# `make` lines there need files the tarball lacks (the Makefile, the
# command's sources, the demo), so the section must say so before them.
python3 - "$tmp/eventlog-socket" >"$tmp/readme-make.log" 2>&1 <<'PY'
import os, re, sys
root = sys.argv[1]
text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
section = re.search(r"^## Install\n(.*?)^## ", text, re.S | re.M).group(1)
before = section.split("```sh", 1)[0]
runs_make = re.search(r"^(sudo )?make\b", section.split("```sh", 1)[-1], re.M)
has_makefile = os.path.exists(os.path.join(root, "Makefile"))
said = "git repository" in before and "tarball" in before
print("Makefile in the tarball: %s; Install runs make: %s; says it needs the repository first: %s"
      % (has_makefile, bool(runs_make), said))
sys.exit(0 if has_makefile or not runs_make or said else 1)
PY
readme_make_rc=$?
expect "README's Install section, read from the tarball, says its make lines need the git repository ($(tail -n 1 "$tmp/readme-make.log"))" \
    "$tmp/readme-make.log" [ $readme_make_rc -eq 0 ]

# cabal check, as Hackage would run it on the upload: nothing for
# ghc-eventlog-socket; for the drop-in package (never uploaded) only the warning
# CONTRIBUTING.md gives the reason for: upstream's flags change nothing.
(cd "$tmp/eventlog-socket" && timeout 120 cabal --config-file=/dev/null check) >"$tmp/check.log" 2>&1
check_rc=$?
expect "cabal check on the unpacked tarball: no error, no warning" "$tmp/check.log" \
    bash -c "[ $check_rc -eq 0 ] && grep -q 'No errors or warnings could be found' '$tmp/check.log'"
(cd "$tmp/eventlog-socket/compat/eventlog-socket" && timeout 120 cabal --config-file=/dev/null check) \
    >"$tmp/check-compat.log" 2>&1
python3 - "$tmp/check-compat.log" >>"$tmp/check-compat.log" 2>&1 <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# One warning, wrapped over lines: the flags are declared and never used.
warnings = re.split(r"\nWarning: ", "\n" + text)[1:]
real = [w for w in warnings if not w.startswith("These warnings")]
ok = len(real) == 1 and "Declared and used flag sets differ" in real[0]
print("warnings: %d, %s" % (len(real), "only the unused flags" if ok else "unexpected"))
sys.exit(0 if ok else 1)
PY
expect "cabal check on compat/eventlog-socket: only the unused-flags warning CONTRIBUTING.md explains" \
    "$tmp/check-compat.log" [ $? -eq 0 ]

# The docs' cabal.project for a project that keeps upstream's bounds: the
# ```cabal block (README.md, or a page of docs/) that relaxes them.
python3 - "$repo" >"$tmp/readme-project" 2>"$tmp/readme-project.err" <<'PY'
import glob, re, sys, textwrap
repo = sys.argv[1]
for path in [repo + "/README.md"] + sorted(glob.glob(repo + "/docs/*.md")):
    text = open(path).read()
    for indent, block in re.findall(r"^( *)```cabal\n(.*?)^ *```", text, re.S | re.M):
        if "allow-newer: eventlog-socket" in block:
            print(textwrap.dedent(block), end="")
            sys.exit(0)
sys.exit("no ```cabal block with allow-newer: eventlog-socket in README.md or docs/")
PY
readme_rc=$?
expect "the docs give the cabal.project lines for upstream's bounds: $(grep -v '^--' "$tmp/readme-project" | tr -s '\n ' '  ')" \
    "$tmp/readme-project.err" [ "$readme_rc" -eq 0 ]
grep -q '^    , eventlog-socket  >=0.1 && <0.2$' "$repo/tests/cabal/upstream-compat/upstream-compat.cabal"
expect "upstream-compat.cabal keeps upstream README's dependency line verbatim (eventlog-socket  >=0.1 && <0.2)" \
    /dev/null [ $? -eq 0 ]

# The project: upstream-compat with README's lines as its cabal.project,
# and, appended, the tiny project and CI's -Werror for the package.
cp -r "$repo/tests/cabal/tiny" "$tmp/tiny"
cp -r "$repo/tests/cabal/upstream-compat" "$tmp/upstream-compat"
proj=$tmp/upstream-compat
{
    cat "$tmp/readme-project"
    echo
    echo "-- Added by tests/cabal-package.sh:"
    echo "packages: ../tiny"
    echo "package ghc-eventlog-socket"
    echo "  ghc-options: -Werror -optc-Werror"
} >"$proj/cabal.project"

cabal_build() {
    (cd "$proj" && timeout "$build_timeout" cabal --config-file=/dev/null build --offline \
        -w "$hc" --builddir="$tmp/dist" "$@")
}
started=$(date +%s)
if cabal_build all >"$tmp/build.log" 2>&1; then
    ok "cabal build --offline, from the tarball, of a project depending on ghc-eventlog-socket, and of programs written against upstream 0.1.3's Haskell and C API with upstream's bounds (tests/cabal/upstream-compat) ($(($(date +%s) - started)) s, $(cabal --numeric-version), GHC $("$hc" --numeric-version))"
else
    not_ok "cabal build --offline, from the tarball, of a project depending on ghc-eventlog-socket, and of programs written against upstream 0.1.3's API with upstream's bounds" "$tmp/build.log"
    exit 1
fi
# The package's own test-suite, as a Hackage user runs it from the tarball.
(cd "$proj" && timeout "$build_timeout" cabal --config-file=/dev/null test --offline -w "$hc" \
    --builddir="$tmp/dist" --test-show-details=direct ghc-eventlog-socket) >"$tmp/test.log" 2>&1
test_rc=$?
test_summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/test.log" | tail -n 1)
expect "cabal test ghc-eventlog-socket, from the tarball: its test-suite passes (${test_summary:-no summary})" \
    "$tmp/test.log" bash -c "[ $test_rc -eq 0 ] && echo '$test_summary' | grep -q ' 0 failed$'"
# -Werror made any warning fail the build; say so, and that the package was
# compiled in this run (not taken from a store).
grep -q "Building library for ghc-eventlog-socket-$version" "$tmp/build.log"
expect "ghc-eventlog-socket's Haskell modules and C sources compile without a warning (-Werror -optc-Werror)" \
    "$tmp/build.log" [ $? -eq 0 ]
(cd "$proj" && timeout "$build_timeout" cabal --config-file=/dev/null haddock --offline -w "$hc" \
    --builddir="$tmp/dist" ghc-eventlog-socket) >"$tmp/haddock.log" 2>&1
haddock_rc=$?
coverage=$(grep -E "^ *[0-9]+% \( *[0-9]+ / *[0-9]+\) in 'GHC.Eventlog.Socket'" "$tmp/haddock.log")
expect "cabal haddock: every exported name of GHC.Eventlog.Socket is documented (${coverage# *})" \
    "$tmp/haddock.log" bash -c "[ $haddock_rc -eq 0 ] && echo '$coverage' | grep -q '^ *100% '"
# Upstream's cabal flags: build scripts written for it pass
# --constraint=eventlog-socket+control and the like. cabal accepts a
# constraint on a flag that a package does not declare and ignores it, so
# the plan must show each flag set on the drop-in package.
(cd "$proj" && timeout "$build_timeout" cabal --config-file=/dev/null build --offline --dry-run \
    -w "$hc" --builddir="$tmp/dist-flags" \
    --constraint='eventlog-socket +control +debug +debug-verbosity-trace +debug-verbosity-quiet +optimise-heavily' \
    all) >"$tmp/flags.log" 2>&1
python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))
flags = [u.get("flags", {}) for u in plan["install-plan"] if u.get("pkg-name") == "eventlog-socket"]
want = ["control", "debug", "debug-verbosity-trace", "debug-verbosity-quiet", "optimise-heavily"]
print(flags)
sys.exit(0 if flags and all(f.get(w) is True for f in flags for w in want) else 1)
' "$tmp/dist-flags/cache/plan.json" >>"$tmp/flags.log" 2>&1
flags_rc=$?
expect "upstream 0.1.3's cabal flags (control, debug, debug-verbosity-trace, debug-verbosity-quiet, optimise-heavily) are declared, so --constraint=eventlog-socket+control resolves" \
    "$tmp/flags.log" [ "$flags_rc" -eq 0 ]
bin() {
    (cd "$proj" && cabal --config-file=/dev/null list-bin --offline -w "$hc" --builddir="$tmp/dist" "exe:$1" 2>/dev/null | tail -n 1)
}
tiny=$(bin tiny)
tiny_c=$(bin tiny-c-main)

# Wait until the program listens on the socket: not only until the file
# exists, which bind() creates a moment before listen() lets clients in (an
# nc connecting in between is refused). /proc/net/unix lists each socket's
# path, with flags 00010000 once it listens.
await_socket() {
    local i _ flags path
    for ((i = 0; i < step_timeout * 10; i++)); do
        while read -r _ _ _ flags _ _ _ path; do
            [ "$flags" = 00010000 ] && [ "$path" = "$1" ] && return 0
        done </proc/net/unix
        sleep 0.1
    done
    return 1
}

# A Haskell main started through GHC.Eventlog.Socket.startWith (the
# upstream API), run with +RTS -l, read by nc -U.
sock=$tmp/tiny.sock
(cd "$tmp" && exec timeout "$step_timeout" "$tiny" stream "$sock" 500 +RTS -l -RTS \
    >"$tmp/tiny.out" 2>"$tmp/tiny.err") &
prog=$!
pids+=("$prog")
if await_socket "$sock"; then
    timeout "$step_timeout" nc -U "$sock" </dev/null >"$tmp/tiny.eventlog" 2>/dev/null &
    pids+=($!)
    client=$!
fi
wait "$prog"
rc=$?
[ -n "${client:-}" ] && wait "$client"
expect "the Haskell-started program runs and exits 0 (rc $rc)" "$tmp/tiny.err" [ "$rc" -eq 0 ]
"$checker" "$tmp/tiny.eventlog" >"$tmp/tiny.check" 2>&1
crc=$?
expect "its stream parses with ghc-events, whole blocks, end marker" "$tmp/tiny.check" \
    [ "$crc" -eq 0 ]
markers=$(grep -c '^marker [0-9]* tiny [0-9]*$' "$tmp/tiny.check")
expect "every marker posted after the start arrives ($markers of 500)" "$tmp/tiny.check" \
    [ "$markers" -eq 500 ]
expect "stats: Nothing before the start, one client accepted after" "$tmp/tiny.out" \
    grep -qz 'stats before start: none.*clients accepted: 1' "$tmp/tiny.out"

# Without +RTS -l there would be nothing to stream: a clear error instead.
(cd "$tmp" && timeout "$step_timeout" "$tiny" stream "$tmp/off.sock" 5 >"$tmp/off.out" 2>"$tmp/off.err")
rc=$?
expect "without +RTS -l, startWith fails saying to run with +RTS -l (rc $rc)" "$tmp/off.err" \
    bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'run the program with +RTS -l' '$tmp/off.err' && [ ! -e '$tmp/off.sock' ]"

# fromEnv reads the same variables as the C library.
(cd "$tmp" && GHC_EVENTLOG_UNIX_PATH=/tmp/x.sock GHC_EVENTLOG_WAIT=yes GHC_EVENTLOG_MAX_BUFFER=1M \
    GHC_EVENTLOG_SLOW_CLIENT=disconnect GHC_EVENTLOG_MAX_CLIENTS=3 GHC_EVENTLOG_ALLOW_OTHER_USERS=1 \
    GHC_EVENTLOG_CONTROL_INTERVAL_MS=250 timeout "$step_timeout" "$tiny" env >"$tmp/env.out" 2>&1)
(cd "$tmp" && GHC_EVENTLOG_INET_HOST=127.0.0.1 timeout "$step_timeout" "$tiny" env >>"$tmp/env.out" 2>&1)
expect "fromEnv: path, wait, buffer and policy from the environment; a host without a port is an error" \
    "$tmp/env.out" bash -c "grep -qx 'EventlogSocketUnixAddr {esaUnixPath = \"/tmp/x.sock\"} wait=True max=1048576 slow=SlowClientDisconnect clients=3 others=True control=250' '$tmp/env.out' &&
        grep -qx 'error: EventlogSocketAddrInetPortMissing \"127.0.0.1\"' '$tmp/env.out'"

# startFromEnv applies every variable: with GHC_EVENTLOG_MAX_CLIENTS=1 a
# second client is refused while the first is connected.
esock=$tmp/fromenv.sock
(cd "$tmp" && GHC_EVENTLOG_UNIX_PATH=$esock GHC_EVENTLOG_MAX_CLIENTS=1 exec timeout "$step_timeout" \
    "$tiny" fromenv "$tmp/envgo" +RTS -l -RTS >"$tmp/fromenv.out" 2>"$tmp/fromenv.err") &
prog=$!
pids+=("$prog")
second=-1
if await_socket "$esock"; then
    timeout "$step_timeout" nc -U "$esock" </dev/null >"$tmp/fromenv1.eventlog" 2>/dev/null &
    pids+=($!)
    for ((i = 0; i < step_timeout * 10; i++)); do
        grep -qa hdrb "$tmp/fromenv1.eventlog" && break
        sleep 0.1
    done
    timeout 10 nc -U "$esock" </dev/null >"$tmp/fromenv2.eventlog" 2>/dev/null
    second=$(wc -c <"$tmp/fromenv2.eventlog")
fi
touch "$tmp/envgo"
wait "$prog"
rc=$?
expect "startFromEnv applies GHC_EVENTLOG_MAX_CLIENTS=1: the second client is refused (got $second bytes; rc $rc)" \
    "$tmp/fromenv.err" bash -c "[ $rc -eq 0 ] && [ $second -eq 0 ] && grep -qa hdrb '$tmp/fromenv1.eventlog' &&
        grep -q 'refusing a client' '$tmp/fromenv.err'"

# A custom C main in the dependent project, against the installed header.
csock=$tmp/c.sock
(cd "$tmp" && GHC_EVENTLOG_UNIX_PATH=$csock GHC_EVENTLOG_WAIT=1 exec timeout "$step_timeout" \
    "$tiny_c" 300 >"$tmp/c.out" 2>"$tmp/c.err") &
prog=$!
pids+=("$prog")
client=
if await_socket "$csock"; then
    timeout "$step_timeout" nc -U "$csock" </dev/null >"$tmp/c.eventlog" 2>/dev/null &
    pids+=($!)
    client=$!
fi
wait "$prog"
rc=$?
[ -n "$client" ] && wait "$client"
"$checker" "$tmp/c.eventlog" >"$tmp/c.check" 2>&1
crc=$?
markers=$(grep -c '^marker [0-9]* c [0-9]*$' "$tmp/c.check")
expect "a C main built by cabal streams a whole eventlog (rc $rc, $markers of 300 markers)" \
    "$tmp/c.check" bash -c "[ $rc -eq 0 ] && [ $crc -eq 0 ] && [ $markers -eq 300 ]"

# Custom commands and hooks through the Haskell API (upstream's names): a
# client sends tiny/2 (its handler throws a long message of two lines),
# tiny/3 (one whose message is itself an error) and tiny/1 in upstream
# framing.
usock=$tmp/custom.sock
(cd "$tmp" && exec timeout "$step_timeout" "$tiny" custom "$usock" +RTS -l -RTS \
    >"$tmp/custom.out" 2>"$tmp/custom.err") &
prog=$!
pids+=("$prog")
client=
if await_socket "$usock"; then
    printf '\xf0\x9e\x97\x8c\x00\x04tiny\x02\xf0\x9e\x97\x8c\x00\x04tiny\x03\xf0\x9e\x97\x8c\x00\x04tiny\x01' |
        timeout "$step_timeout" nc -U "$usock" >"$tmp/custom.eventlog" 2>/dev/null &
    pids+=($!)
    client=$!
fi
wait "$prog"
rc=$?
[ -n "$client" ] && wait "$client"
"$checker" "$tmp/custom.eventlog" >"$tmp/custom.check" 2>&1
crc=$?
expect "custom commands: a handler that throws is reported, its message whole, and the next command still runs; the program exits cleanly (rc $rc)" \
    "$tmp/custom.out" bash -c "grep -qx 'command 1 ran' '$tmp/custom.out' && [ $rc -eq 0 ] && [ $crc -eq 0 ] &&
        python3 '$repo/tests/cabal/told_whole.py' '$tmp/custom.err' &&
        grep -q 'marker [0-9]* tiny custom 1' '$tmp/custom.check' &&
        grep -q 'marker [0-9]* tiny hook' '$tmp/custom.check' &&
        grep -q 'marker [0-9]* tiny pre-end' '$tmp/custom.check'"
expect "custom commands: 255 registered; a second namespace of the same name, the reserved namespace and a duplicate command are refused" \
    "$tmp/custom.out" bash -c "grep -qx '255 commands registered' '$tmp/custom.out' &&
        grep -q '^namespace again refused: EventlogSocketControlNamespaceExists' '$tmp/custom.out' &&
        grep -q '^reserved namespace refused: EventlogSocketControlNamespaceExists' '$tmp/custom.out' &&
        grep -q '^command again refused: EventlogSocketControlCommandExists' '$tmp/custom.out'"

# Live: on GHC >= 9.2 the library flushes the RTS's buffers while a client is
# connected, in a program that GHC's own main started too; the marker must
# reach the client while the program still runs (it waits for us).
if [ "$("$hc" --numeric-version | awk -F. '{ print $1 * 100 + $2 }')" -lt 902 ]; then
    ok "# SKIP GHC $("$hc" --numeric-version) cannot flush its eventlog buffers"
else
    lsock=$tmp/live.sock
    (cd "$tmp" && exec timeout "$step_timeout" "$tiny" live "$lsock" "$tmp/go" +RTS -l -RTS \
        >"$tmp/live.out" 2>"$tmp/live.err") &
    prog=$!
    pids+=("$prog")
    client=
    if await_socket "$lsock"; then
        timeout "$step_timeout" nc -U "$lsock" </dev/null >"$tmp/live.eventlog" 2>/dev/null &
        pids+=($!)
        client=$!
        for ((i = 0; i < step_timeout * 10; i++)); do
            grep -qa 'live 1' "$tmp/live.eventlog" && { touch "$tmp/go"; break; }
            kill -0 "$prog" 2>/dev/null || break
            sleep 0.1
        done
    fi
    wait "$prog"
    rc=$?
    [ -n "$client" ] && wait "$client"
    "$checker" "$tmp/live.eventlog" >"$tmp/live.check" 2>&1
    crc=$?
    expect "a quiet Haskell-started program's marker reaches the client while it runs, and it exits cleanly while flushing (rc $rc)" \
        "$tmp/live.err" bash -c "grep -qx go '$tmp/live.out' && [ $rc -eq 0 ] && [ $crc -eq 0 ]"
fi

# Programs written against upstream 0.1.3's API: their hooks, HOOK_RUNS runs
# of each entry point (tests/cabal/upstream_hooks.py prints "ok - ..." or
# "not ok - ..." per entry point, and "#" lines).
up_hs=$(bin upstream-hs)
up_c=$(bin upstream-c-main)
ours_c=$(bin ours-c-main)
timeout $((step_timeout * 10)) python3 "$repo/tests/cabal/upstream_hooks.py" --build "$build" \
    --runs "$hook_runs" "upstream-hs startWith=$up_hs:with" "upstream-hs startFromEnv=$up_hs:env" \
    "upstream-c-main eventlog_socket_wrap_hs_main=$up_c:wrap" \
    "upstream-c-main eventlog_socket_init and signal_ghc_rts_ready=$up_c:manual" \
    "ours-c-main eventlog_socket_hs_main=$ours_c" >"$tmp/hooks.tap" 2>&1
hooks_rc=$?
hooks_seen=0
while IFS= read -r line; do
    case $line in
    "ok - "*) ok "${line#ok - }"; hooks_seen=$((hooks_seen + 1)) ;;
    "not ok - "*) not_ok "${line#not ok - }"; hooks_seen=$((hooks_seen + 1)) ;;
    *) echo "#   $line" ;;
    esac
done <"$tmp/hooks.tap"
if [ "$hooks_seen" -ne 11 ]; then
    not_ok "upstream_hooks.py judged all 5 entry points, their reconnects and the failed start (status $hooks_rc)" "$tmp/hooks.tap"
else
    expect "upstream_hooks.py ran to its end (status $hooks_rc)" "$tmp/hooks.tap" [ "$hooks_rc" -eq 0 ]
fi
