#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what a make target of eventlog-socket needs, if it is missing, and
# nothing more: building and installing take only the build's packages, the
# tests' packages (a browser, Prometheus, pandas, profiling libraries...)
# come with the test targets. Debian/Ubuntu only (apt-get); elsewhere it
# says what to install and fails.
#
#   ensure-deps.sh TARGET            install what TARGET needs and is missing
#   ensure-deps.sh --dry-run TARGET  print what it would install, one a line
#   ensure-deps.sh --list TARGET     print every package TARGET needs, one a
#                                    line, installed or not (a bare machine's
#                                    dry run)
#
# TARGET is the make target (the Makefile passes its own name). README's
# table "which target installs what" says the same, and tests/deps.sh holds
# the two together.
set -euo pipefail

action=install
case ${1:-} in
--dry-run) action=dry-run; shift ;;
--list) action=list; shift ;;
esac
target=${1:?usage: ensure-deps.sh [--dry-run | --list] TARGET}

# The packages of each group, in install order.
# build: the library, the example, and the eventlog-socket command (top's
# ncurses; serve's libmicrohttpd and dygraphs, embedded at build time;
# profile's zlib).
build_pkgs=(ghc gcc binutils pkg-config libuv1-dev libncurses-dev libmicrohttpd-dev libjs-dygraphs zlib1g-dev)
# demo: the library and fibber-c-main, a client (nc) and ghc-events to show
# what arrived.
demo_pkgs=(ghc gcc binutils pkg-config libuv1-dev netcat-openbsd libghc-ghc-events-dev)
# cabal: the cabal package and its examples (GHC compiles the C).
cabal_pkgs=(ghc gcc pkg-config libuv1-dev cabal-install)
# test: what the tests use beyond the build: cabal, python3 (the harness),
# the checker's ghc-events library, nc, tmux (top), Chromium (the page),
# Prometheus and promtool (metrics), curl (another user's requests), pandas
# (CSV tables), clang-format (the formatting check), GHC's profiling
# libraries (the cost-centre tests), and groff, mandoc and man-db (the
# manual pages' lint; the pages are built with awk).
test_pkgs=(cabal-install python3 libghc-ghc-events-dev netcat-openbsd tmux chromium prometheus curl
    python3-pandas clang-format ghc-prof groff-base mandoc man-db)
# integration: protoc with pprof's profile.proto (profile's .pb.gz, decoded
# by a decoder we did not write), and npm, which fetches speedscope's viewer
# to open profile's .speedscope.json in (scripts/npm-fetch.sh).
integration_pkgs=(protobuf-compiler golang-github-google-pprof-dev npm)
# check-loaded: the CPU hog beside the tests.
loaded_pkgs=(stress-ng)
# fuzz: clang with libFuzzer (Debian keeps its runtime in libclang-rt-dev,
# which clang only recommends).
fuzz_pkgs=(clang libclang-rt-dev)
# make check builds and runs the libFuzzer targets too, unless
# FUZZ_IN_CHECK=no (the chroots' checks, scripts/ghc-chroot.sh).
check_fuzz_pkgs=("${fuzz_pkgs[@]}")
[ "${FUZZ_IN_CHECK:-yes}" != no ] || check_fuzz_pkgs=()
# lint: the static checks (tests/lint.sh): clang's analyzer, cppcheck,
# flake8, shellcheck. make check runs them too, unless LINT_IN_CHECK=no
# (the chroots' checks).
lint_pkgs=(clang cppcheck flake8 shellcheck)
check_lint_pkgs=("${lint_pkgs[@]}")
[ "${LINT_IN_CHECK:-yes}" != no ] || check_lint_pkgs=()

case $target in
all | lib | install | symbols) want=("${build_pkgs[@]}") ;;
demo) want=("${demo_pkgs[@]}") ;;
cabal-build) want=("${cabal_pkgs[@]}") ;;
unit-test | cabal-test | install-test | fixtures | bench | bench-programs | format | format-check | soak)
    want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
integration-test) want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${integration_pkgs[@]}") ;;
check)
    want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${integration_pkgs[@]}" "${check_fuzz_pkgs[@]}"
        "${check_lint_pkgs[@]}") ;;
check-loaded)
    want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${integration_pkgs[@]}" "${check_fuzz_pkgs[@]}"
        "${check_lint_pkgs[@]}" "${loaded_pkgs[@]}") ;;
lint | analyze | cppcheck | flake8 | shellcheck) want=("${build_pkgs[@]}" "${lint_pkgs[@]}") ;;
fuzz) want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${fuzz_pkgs[@]}") ;;
*)
    echo "ensure-deps.sh: no package list for the target \"$target\"" >&2
    exit 2
    ;;
esac

# Is PACKAGE's part that we use there? Probed by what it provides, so that
# a tool installed otherwise (a GHC from ghcup) counts too.
present() {
    case $1 in
    ghc) command -v ghc ;;
    gcc) command -v cc ;;
    binutils) command -v objcopy ;;
    pkg-config) command -v pkg-config ;;
    libuv1-dev) pkg-config --exists libuv ;;
    libncurses-dev) pkg-config --exists ncursesw ;;
    libmicrohttpd-dev) pkg-config --exists libmicrohttpd ;;
    libjs-dygraphs) [ -e /usr/share/javascript/dygraphs/dygraph.min.js ] ;;
    zlib1g-dev) pkg-config --exists zlib ;;
    protobuf-compiler) command -v protoc ;;
    npm) command -v npm ;;
    golang-github-google-pprof-dev) [ -e /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto ] ;;
    netcat-openbsd) command -v nc ;;
    libghc-ghc-events-dev)
        command -v ghc-events && ghc-pkg --global list --simple-output ghc-events | grep -q ghc-events ;;
    cabal-install) command -v cabal ;;
    python3) command -v python3 ;;
    tmux) command -v tmux ;;
    chromium) command -v chromium ;;
    prometheus) command -v promtool ;;
    curl) command -v curl ;;
    # Debian's python3, as the tests run it.
    python3-pandas) /usr/bin/python3 -c 'import pandas' ;;
    clang-format) command -v clang-format ;;
    groff-base) command -v groff ;;
    mandoc) command -v mandoc ;;
    man-db) command -v man ;;
    ghc-prof) command -v ghc && [ -e "$(ghc --print-libdir)/rts/libHSrts_thr_p.a" ] ;;
    stress-ng) command -v stress-ng ;;
    cppcheck) command -v cppcheck ;;
    flake8) command -v flake8 ;;
    shellcheck) command -v shellcheck ;;
    clang) command -v clang ;;
    libclang-rt-dev)
        command -v clang && echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
            clang -x c -fsanitize=fuzzer -o /dev/null - ;;
    *) return 1 ;;
    esac
}

# De-duplicate while keeping the order.
mapfile -t want < <(printf '%s\n' "${want[@]}" | awk '!seen[$0]++')
if [ "$action" = list ]; then
    printf '%s\n' "${want[@]}"
    exit 0
fi
need=()
for p in "${want[@]}"; do
    present "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ "$action" = dry-run ]; then
    [ ${#need[@]} -eq 0 ] || printf '%s\n' "${need[@]}"
    exit 0
fi
[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "eventlog-socket: make $target needs: ${need[*]} (Debian package names)." >&2
    echo "This is not a Debian/Ubuntu system: install their equivalents yourself" >&2
    echo "(GHC >= 9.0, libuv with its pkg-config file, ...), then run make again." >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "eventlog-socket: make $target needs: ${need[*]}; run as root or install sudo." >&2
        exit 1
    fi
fi
echo "Installing missing packages for make $target: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another apt-get (a chroot being built, unattended upgrades) may hold apt's
# locks: wait for it, up to 10 minutes, rather than fail.
apt_wait=(-o DPkg::Lock::Timeout=600)
"${sudo[@]}" apt-get "${apt_wait[@]}" update -qq
"${sudo[@]}" apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
