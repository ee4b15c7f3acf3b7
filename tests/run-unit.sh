#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run every unit test binary (plain, ASan/UBSan and TSan builds, and the
# fuzz targets' replays) with a timeout, UNIT_JOBS of them at once (default:
# as many as CPUs; more makes the machine busier than the tests that time
# things are meant for). Prints each test's TAP in the same order as one
# after another would, as soon as it and those before it have ended, and a
# closing "N passed, N failed" line (of checks).
set -u
build=${1:-build}
jobs=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 2)}
pass=0 fail=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1
tests=()
for t in "$build"/unit/test_* "$build"/unit-asan/test_* "$build"/unit-tsan/test_* \
    "$build"/unit-asan/fuzz_*; do
    [ -x "$t" ] && tests+=("$t")
done
out=$(mktemp -d)
launcher=
trap 'if [ -n "$launcher" ]; then kill -- "$launcher" 2>/dev/null; fi; rm -rf "$out"' EXIT
# Each binary writes its output and then its status into files of its own;
# the launcher keeps at most $jobs running.
(
    for i in "${!tests[@]}"; do
        while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do wait -n; done
        (
            timeout 120 "${tests[$i]}" tests/fixtures >"$out/$i.out" 2>&1
            echo $? >"$out/$i.rc.tmp" && mv "$out/$i.rc.tmp" "$out/$i.rc"
        ) &
    done
    wait
) &
launcher=$!
for i in "${!tests[@]}"; do
    t=${tests[$i]}
    while [ ! -e "$out/$i.rc" ]; do sleep 0.05; done
    rc=$(cat "$out/$i.rc")
    echo "# $t"
    cat "$out/$i.out"
    p=$(grep -c '^ok ' "$out/$i.out")
    f=$(grep -c '^not ok ' "$out/$i.out")
    pass=$((pass + p))
    fail=$((fail + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $t exited with status $rc (crash, sanitizer report or timeout)"
        fail=$((fail + 1))
    fi
done
wait "$launcher"
launcher=
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
