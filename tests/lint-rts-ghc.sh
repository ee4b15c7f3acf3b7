#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The static checks of rts-writer/ for the GHCs of the chroots: the host's
# GHC is 9.0.2, so `make lint` sees only the `< 902` branches of the code
# that includes Rts.h, never the production path of every newer GHC. This
# runs the host's clang --analyze and cppcheck on rts-writer/ again with
# each cached chroot's RTS headers (scripts/ghc-chroot.sh makes them):
# their ghcversion.h gives __GLASGOW_HASKELL__, so the `>= 902` branches
# are the ones compiled. None may find anything. TAP, ending with a
# `check:` line as make check's does (scripts/check-matrix.sh runs it after
# the chroots' parts).
#
#   tests/lint-rts-ghc.sh [SUITE...]   SUITE: trixie sid (both by default)
set -u
cd "$(dirname "$0")/.." || exit 1
cache=${ES_CHROOT_CACHE:-/var/cache/eventlog-socket}
suites=()
for a in "$@"; do
    case $a in
    *=*) ;; # make's variables, which check-matrix.sh gives every part
    *) suites+=("$a") ;;
    esac
done
[ ${#suites[@]} -gt 0 ] || suites=(trixie sid)
pass=0 fail=0 skip=0 n=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; printf '%s\n' "$2" | sed 's/^/# /'; }
skip() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $1 # SKIP $2"; }

for suite in "${suites[@]}"; do
    version=$(find "$cache/ghc-$suite/usr/lib" -path '*/rts-*/include/ghcversion.h' 2>/dev/null | head -n 1)
    if [ -z "$version" ]; then
        skip "rts-writer/ with Debian $suite's GHC headers" "no chroot in $cache/ghc-$suite (scripts/ghc-chroot.sh makes it)"
        skip "cppcheck on rts-writer/ as Debian $suite's GHC" "no chroot"
        continue
    fi
    include=$(dirname "$version")
    num=$(awk '/define __GLASGOW_HASKELL__ / { print $3 }' "$version")
    if ! command -v clang >/dev/null; then
        skip "clang --analyze on rts-writer/ with GHC $num's headers" "clang is not installed"
    else
        out=""
        for f in rts-writer/*.c; do
            out+=$(clang --analyze -Xanalyzer -analyzer-output=text -std=c11 -Wall -Wextra -Wshadow \
                -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -D_DEFAULT_SOURCE \
                -fvisibility=hidden -fPIC -Iinclude -Icbits -Irts-writer -isystem "$include" \
                "$f" -o /dev/null 2>&1)
        done
        if [ -z "$out" ]; then
            ok "clang --analyze on rts-writer/ with GHC $num's headers (Debian $suite): no findings"
        else
            not_ok "clang --analyze on rts-writer/ with GHC $num's headers (Debian $suite)" "$out"
        fi
    fi
    if ! command -v cppcheck >/dev/null; then
        skip "cppcheck on rts-writer/ as GHC $num" "cppcheck is not installed"
    else
        out=$(cppcheck -q --std=c11 --enable=warning,style,performance,portability --inline-suppr \
            --library=posix --suppressions-list=.cppcheck-suppressions \
            --template='{file}:{line}: {severity}: {message} [{id}]' -D_DEFAULT_SOURCE \
            -D__GLASGOW_HASKELL__="$num" -Iinclude -Icbits -Irts-writer rts-writer/ 2>&1)
        if [ -z "$out" ]; then
            ok "cppcheck on rts-writer/ as GHC $num (Debian $suite): no findings"
        else
            not_ok "cppcheck on rts-writer/ as GHC $num (Debian $suite)" "$out"
        fi
    fi
done
echo "1..$n"
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
