#!/usr/bin/env bash
# Run every unit test binary (plain and ASan/UBSan builds) with a timeout.
# Prints each test's TAP and a closing "N passed, N failed" line (of checks).
set -u
build=${1:-build}
pass=0 fail=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1
for t in "$build"/unit/test_* "$build"/unit-asan/test_* "$build"/unit-tsan/test_* \
    "$build"/unit-asan/fuzz_*; do
    [ -x "$t" ] || continue
    echo "# $t"
    out=$(timeout 120 "$t" tests/fixtures 2>&1)
    rc=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | grep -c '^ok ')
    f=$(printf '%s\n' "$out" | grep -c '^not ok ')
    pass=$((pass + p))
    fail=$((fail + f))
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $t exited with status $rc (crash, sanitizer report or timeout)"
        fail=$((fail + 1))
    fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
