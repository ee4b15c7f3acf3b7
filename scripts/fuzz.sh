#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run each libFuzzer target in BUILD/fuzz for SECONDS, starting from the
# inputs make check runs (written by the target's replay build), and keep
# its corpus in BUILD/fuzz/corpus-TARGET for the next run. A failure leaves
# the input as BUILD/fuzz/crash-TARGET-*; replay it with
#   BUILD/fuzz/TARGET BUILD/fuzz/crash-TARGET-...
# Prints a closing "N passed, N failed" line (of targets).
set -u
build=${1:-build}
seconds=${2:-60}
pass=0 fail=0
for t in "$build"/fuzz/fuzz_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    corpus="$build/fuzz/corpus-$name"
    if [ ! -d "$corpus" ]; then
        mkdir -p "$corpus"
        "$build/unit-asan/$name" tests/fixtures --write "$corpus" || exit 1
    fi
    echo "# $name: $seconds s from $(find "$corpus" -type f | wc -l) inputs"
    # -max_len: a header and a small block; the RTS's own blocks are walked
    # by the same loop, only longer.
    if timeout $((seconds + 120)) "$t" -max_total_time="$seconds" -max_len=16384 \
        -print_final_stats=1 -artifact_prefix="$build/fuzz/crash-$name-" "$corpus" \
        >"$build/fuzz/$name.log" 2>&1; then
        echo "ok - $name: $(grep -o 'Done [0-9]* runs' "$build/fuzz/$name.log")"
        pass=$((pass + 1))
    else
        tail -40 "$build/fuzz/$name.log"
        echo "not ok - $name found a failing input: $(ls "$build/fuzz/crash-$name-"* 2>/dev/null)"
        fail=$((fail + 1))
    fi
done
echo "fuzz: $pass passed, $fail failed"
[ $((pass + fail)) -gt 0 ] && [ "$fail" -eq 0 ]
