#!/usr/bin/env bash
# make check: every suite, then one closing line with the total, so a run
# that executed nothing is visible.
set -u
build=${1:-build}
pass=0 fail=0 skip=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
suite() {
    local name=$1; shift
    echo "=== $name"
    "$@" 2>&1 | tee "$out"
    local rc=${PIPESTATUS[0]}
    local p f k
    p=$(grep '^ok ' "$out" | grep -vc '# SKIP')
    k=$(grep '^ok ' "$out" | grep -c '# SKIP')
    f=$(grep -c '^not ok' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
}
suite "unit tests (plain and ASan/UBSan)" tests/run-unit.sh "$build"
suite "exported symbols" tests/check-symbols.sh "$build/libeventlog-socket.a"
format_check() {
    if command -v clang-format >/dev/null 2>&1; then
        if make --no-print-directory ES_DEPS_CHECKED=1 format-check >/dev/null 2>&1; then
            echo "ok 1 - C sources follow .clang-format"
        else
            echo "not ok 1 - C sources differ from .clang-format (run make format)"
        fi
    else
        echo "ok 1 - # SKIP clang-format is not installed"
    fi
}
suite "formatting" format_check
suite "integration tests (GHC $(ghc --numeric-version))" python3 tests/integration/run.py --build "$build"
suite "cabal package (GHC $(ghc --numeric-version))" tests/cabal-package.sh "$build"
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
