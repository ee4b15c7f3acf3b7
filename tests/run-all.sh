#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make check: every suite, then one closing line with the total, so a run
# that executed nothing is visible.
set -u
build=${1:-build}
# The Haskell compiler: the Makefile passes its HC; the tests use it too.
export HC=${HC:-ghc}
ghc_version=$("$HC" --numeric-version)
pass=0 fail=0 skip=0
out=$(mktemp)
# The static checks' reports (clang --analyze, cppcheck: minutes of CPU)
# are made beside the suites before theirs, one job at low priority:
# those suites mostly wait on sockets and programs. Their suite below
# shows and counts the result. In a process group of its own, stopped
# however this script ends.
lint_log=$(mktemp)
lint_rc="$lint_log.rc" # written when the checks end: their exit status
lint_pid=""
if [ "${LINT_IN_CHECK:-yes}" != no ]; then
    LINT_JOBS=1 setsid nice -n 10 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
        bash -c 'tests/lint.sh "$1" >"$2" 2>&1 </dev/null; echo $? >"$3"' lint \
        "$build" "$lint_log" "$lint_rc" &
    lint_pid=$!
fi
trap '[ -z "$lint_pid" ] || kill -TERM -- "-$lint_pid" 2>/dev/null; rm -f "$out" "$lint_log" "$lint_rc"' EXIT
trap 'exit 130' INT TERM
static_checks() { # (in a subshell of suite's pipeline: it polls, not wait)
    if [ -z "$lint_pid" ]; then
        tests/lint.sh "$build"
        return
    fi
    while [ ! -s "$lint_rc" ] && kill -0 "$lint_pid" 2>/dev/null; do
        sleep 1
    done
    cat "$lint_log"
    if [ ! -s "$lint_rc" ]; then
        echo "not ok - the static checks ended without a result (killed?)"
        return 1
    fi
    return "$(cat "$lint_rc")"
}
times=""
suite() {
    local name=$1; shift
    local started=$SECONDS
    echo "=== $name"
    "$@" 2>&1 | tee "$out"
    local rc=${PIPESTATUS[0]}
    times="$times$(printf '%5d s  %s' $((SECONDS - started)) "$name")"$'\n'
    local p f k
    p=$(grep '^ok ' "$out" | grep -vc '# SKIP')
    k=$(grep '^ok ' "$out" | grep -c '# SKIP')
    f=$(grep -c '^not ok' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
}
# The unit tests need no GHC: the chroots leave them to the host's check
# (UNIT_IN_CHECK=no, scripts/ghc-chroot.sh).
unit_check() {
    if [ "${UNIT_IN_CHECK:-yes}" = no ]; then
        echo "ok 1 - # SKIP unit tests: they need no GHC, the host's make check runs them (UNIT_IN_CHECK=no)"
    else
        tests/run-unit.sh "$build"
    fi
}
suite "unit tests (plain and ASan/UBSan)" unit_check
suite "exported symbols" tests/check-symbols.sh "$build/libeventlog-socket.a"
# The libFuzzer targets (make fuzz) built and run briefly, so that they
# keep linking and a crash they find at once fails the check; the chroots
# leave them to the host's check (FUZZ_IN_CHECK=no).
fuzz_check() {
    if [ "${FUZZ_IN_CHECK:-yes}" = no ]; then
        echo "ok 1 - # SKIP libFuzzer targets: the host's make check runs them (FUZZ_IN_CHECK=no)"
    else
        scripts/fuzz.sh "$build" "${FUZZ_CHECK_SECONDS:-5}"
    fi
}
suite "fuzz targets (libFuzzer, ${FUZZ_CHECK_SECONDS:-5} s each)" fuzz_check
format_check() {
    # .clang-format's options and the code's constructs are chosen so that
    # Debian's clang-format 14 (bookworm), 19 (trixie) and 21 (sid) lay
    # the code out alike: whichever is installed judges it.
    if ! command -v clang-format >/dev/null 2>&1; then
        echo "ok 1 - # SKIP clang-format is not installed"
    elif make --no-print-directory ES_DEPS_CHECKED=1 format-check >/dev/null 2>&1; then
        echo "ok 1 - C sources follow .clang-format ($(clang-format --version))"
    else
        echo "not ok 1 - C sources differ from .clang-format ($(clang-format --version); run make format)"
    fi
}
suite "formatting" format_check
# README's C quick start says it is the example's C main: keep that true.
readme_example_check() {
    python3 - <<'PY'
import re, textwrap
readme = open("README.md").read()
blocks = re.findall(r"^ *```c\n(.*?)^ *```", readme, re.S | re.M)
code = open("examples/fibber-c-main/cbits/fibber-c-main.c").read()
code = code[code.index("#include <Rts.h>"):]
shown = [textwrap.dedent(b) for b in blocks]
if shown and shown[0].strip() == code.strip():
    print("ok 1 - README's C main is examples/fibber-c-main/cbits/fibber-c-main.c")
else:
    print("not ok 1 - README's first C block differs from fibber-c-main.c (after its comment)")
PY
}
suite "README example" readme_example_check
# The page's scripts are embedded as they are: each must be valid
# JavaScript on its own.
js_check() {
    local node f out n=0
    node=$(command -v node || command -v nodejs)
    if [ -z "$node" ]; then
        echo "ok 1 - # SKIP node is not installed: the page's scripts are not checked"
        return
    fi
    for f in $(find client tests bench scripts docs examples -name '*.js' | sort); do
        n=$((n + 1))
        if out=$("$node" --check "$f" 2>&1); then
            echo "ok $n - $f is valid JavaScript (node --check)"
        else
            echo "not ok $n - $f is not valid JavaScript on its own (node --check):"
            printf '%s\n' "$out" | sed 's/^/#   /'
        fi
    done
    [ "$n" -gt 0 ] || echo "not ok 1 - no .js file under client/: where did the page's scripts go?"
}
suite "JavaScript (node --check)" js_check
# The cabal package compiles the C sources it lists: every one of them.
cabal_sources_check() {
    local missing
    missing=$(for f in cbits/*/*.c rts-writer/*.c; do
        grep -qx "    $f" ghc-eventlog-socket.cabal || echo "$f"
    done
    # and names none that is gone
    sed -n 's/^    \(cbits\/[a-z]*\/[a-z_]*\.c\|rts-writer\/[a-z_]*\.c\)$/\1/p' ghc-eventlog-socket.cabal |
        while read -r f; do [ -f "$f" ] || echo "$f (listed, not in the tree)"; done)
    if [ -z "$missing" ]; then
        echo "ok 1 - ghc-eventlog-socket.cabal lists every C source of cbits/ and rts-writer/"
    else
        echo "not ok 1 - ghc-eventlog-socket.cabal's c-sources and the tree differ (missing from the list unless said):" $missing
    fi
}
suite "cabal package sources" cabal_sources_check
suite "one version everywhere" tests/check-version.sh "$build"
suite "which target installs which packages" tests/deps.sh
suite "ARCHITECTURE.md names every source file" tests/check-architecture.sh
# Comments and documents name only files, functions and constants that
# exist, lengths that are true, no outside issue tracker; each rule fails
# on a planted breach.
suite "comments and documents name what exists" python3 tests/check-references.py
suite "comments and documents: the check fails where it should" python3 tests/check-references.py --self-test
# The levels of cbits/, rts-writer/ and client/ (no module uses one above
# it, none in a circle), the names of what cbits/ exports, functions' lengths;
# and that each of those rules fails on a breach planted in a copy.
suite "the C's levels, names and lengths" python3 tests/check-layers.py
suite "the C's levels: the check fails where it should" python3 tests/check-layers.py --self-test
suite "docs: README's length, links and anchors, lines, the variables' table" python3 tests/check-docs.py
suite "licence: the SPDX line atop every source file" python3 scripts/spdx.py
suite "install (make install into a DESTDIR, the example built against it)" tests/install.sh "$build"
# INTEGRATION_JOBS tests at a time (the Makefile's, 2 unless said): each
# is its own process with its own sockets, and the few that measure time or
# memory are marked to run alone.
jobs=${INTEGRATION_JOBS:-2}
# The chroots leave the tests that start no program built with GHC to the
# host's check (GHC_FREE_IN_CHECK=no, scripts/ghc-chroot.sh): skipped, said so.
ghc_free=()
[ "${GHC_FREE_IN_CHECK:-yes}" != no ] || ghc_free=(--skip-ghc-free)
suite "integration tests (GHC $ghc_version)" python3 tests/integration/run.py -j"$jobs" "${ghc_free[@]}" --build "$build"
# clang's analyzer, cppcheck, flake8 and shellcheck with no findings, and
# no comment pointing at an issue tracker (tests/lint.sh; make lint): made
# in the background since the start (above).
suite "static checks (clang --analyze, cppcheck, flake8, shellcheck, references)" static_checks
suite "cabal package (GHC $ghc_version)" tests/cabal-package.sh "$build"
# Core tests again with the library built with ASan/UBSan inside the real
# programs (make check builds them in BUILD/san). The RTS frees little at
# exit by design, so leaks are not reported; any other error fails the test.
suite "integration tests, library under ASan/UBSan (GHC $ghc_version)" \
    env ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    python3 tests/integration/run.py -j"$jobs" --build "$build/san" full_stream_unix full_stream_tcp \
    events_before_first_client reconnect sixteen_clients client_joins_mid_run client_vanishes \
    heap_control heap_control_mixed_framings_and_junk census_flood_rate_limited \
    late_joiner_self_contained stalled_clients_join_one_by_one stderr_pipe_never_read \
    thousand_clients_unix clients_refused_at_the_limit closed_clients_freed_at_once_unix \
    half_closed_then_gone_tcp_at_the_limit sigterm_graceful_setting \
    record_equals_plain_client record_counts_drop_notices client_header_then_garbage \
    client_peer_not_eventlog_socket control_wait_judgement \
    heap_hp_equals_ghc heap_live_hp heap_cut_file top_live_screen top_retry_reconnects \
    web_serve_live web_report_files exit_waits_for_a_reader_that_keeps_reading \
    slow_reader_cut_at_exit_ends_on_an_event_boundary slow_client_disconnect_ends_on_an_event_boundary
# Where the time went, longest first (CONTRIBUTING.md: CI's budget).
echo "=== wall time by suite"
printf '%s' "$times" | sort -rn | sed 's/^/# /'
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
