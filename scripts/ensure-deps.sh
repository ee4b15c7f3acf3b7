#!/usr/bin/env bash
# Install what building and testing eventlog-socket needs, if it is missing.
# Debian/Ubuntu only (apt-get); elsewhere it says what to install and fails.
set -euo pipefail

# --demo: only what `make demo` needs (the library, fibber-c-main, nc and
# ghc-events); otherwise everything the build and the tests use.
mode=${1:-all}

need=()
command -v ghc >/dev/null 2>&1 || need+=(ghc)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists libuv 2>/dev/null || need+=(libuv1-dev)
command -v ghc-events >/dev/null 2>&1 || need+=(libghc-ghc-events-dev)
command -v nc >/dev/null 2>&1 || need+=(netcat-openbsd)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v objcopy >/dev/null 2>&1 || need+=(binutils)
if [ "$mode" != --demo ]; then
command -v cabal >/dev/null 2>&1 || need+=(cabal-install)
# The eventlog-socket command's `top` (ncurses), and its test (tmux).
pkg-config --exists ncursesw 2>/dev/null || need+=(libncurses-dev)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
# `serve` and `report`: libmicrohttpd serves the page, dygraphs draws its
# charts (embedded at build time), and the tests drive headless Chromium.
pkg-config --exists libmicrohttpd 2>/dev/null || need+=(libmicrohttpd-dev)
[ -e /usr/share/javascript/dygraphs/dygraph.min.js ] || need+=(libjs-dygraphs)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
ghc-pkg --global list --simple-output ghc-events 2>/dev/null | grep -q ghc-events || need+=(libghc-ghc-events-dev)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# `metrics`'s tests scrape with the real Prometheus and check with promtool.
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
# The security tests ask as another user with curl.
command -v curl >/dev/null 2>&1 || need+=(curl)
# Tests only: `table` and `compare` CSV read by pandas, and README's pandas
# example run (Debian's python3, /usr/bin/python3).
/usr/bin/python3 -c 'import pandas' >/dev/null 2>&1 || need+=(python3-pandas)
# The formatting check of make check (it is skipped without clang-format).
command -v clang-format >/dev/null 2>&1 || need+=(clang-format)
# Profiling libraries, for the cost-centre profiling tests (ghc -prof).
if command -v ghc >/dev/null 2>&1; then
    [ -e "$(ghc --print-libdir)/rts/libHSrts_thr_p.a" ] || need+=(ghc-prof)
else
    need+=(ghc-prof)
fi
fi
# `make fuzz`, and `make check` unless FUZZ_IN_CHECK=no (the chroots'),
# also need clang with libFuzzer (Debian keeps its runtime in
# libclang-rt-dev, which clang only recommends).
if [ "$mode" = --fuzz ] || { [ "$mode" = all ] && [ "${FUZZ_IN_CHECK:-yes}" != no ]; }; then
    command -v clang >/dev/null 2>&1 || need+=(clang libclang-rt-dev)
    command -v clang >/dev/null 2>&1 &&
        ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
        clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1 && need+=(libclang-rt-dev)
fi

[ ${#need[@]} -eq 0 ] && exit 0
# De-duplicate while keeping the order.
mapfile -t need < <(printf '%s\n' "${need[@]}" | awk '!seen[$0]++')

if ! command -v apt-get >/dev/null 2>&1; then
    echo "eventlog-socket needs: ${need[*]} (Debian package names)." >&2
    echo "This is not a Debian/Ubuntu system: install GHC >= 9.0, libuv (with its" >&2
    echo "pkg-config file), the ghc-events library and CLI, netcat and python3 yourself." >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "eventlog-socket needs: ${need[*]}; run as root or install sudo." >&2
        exit 1
    fi
fi
echo "Installing missing packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another apt-get (a chroot being built, unattended upgrades) may hold apt's
# locks: wait for it, up to 10 minutes, rather than fail.
apt_wait=(-o DPkg::Lock::Timeout=600)
"${sudo[@]}" apt-get "${apt_wait[@]}" update -qq
"${sudo[@]}" apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
