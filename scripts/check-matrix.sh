#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole test suite on every GHC we support here: the host's GHC, then
# GHC 9.6 and 9.10 in Debian chroots (scripts/ghc-chroot.sh), then the
# static checks of rts-writer/ with those GHCs' headers
# (tests/lint-rts-ghc.sh). Prints each part's result and time, and a
# closing "N passed, N failed" over all.
set -u
cd "$(dirname "$0")/.." || exit 1
# MATRIX_PARALLEL: how the parts share the machine. "chroots" (the
# default) runs the host's part, then the two chroots' parts at the same
# time (each waits on its tests' sockets and programs more than on the
# CPU); "all" runs the three at once, at load 11 on 2 cores, past the
# load 6 the tests' margins are made for (each such run failed one to
# three of them); "no" runs one part at a time. A part alone prints its
# output as it comes; one beside another, when it ends.
parallel=${MATRIX_PARALLEL:-chroots}
case $parallel in
no) groups=("0" "1" "2" "3") ;;
all) groups=("0 1 2" "3") ;;
chroots) groups=("0" "1 2" "3") ;;
*) echo "check-matrix: MATRIX_PARALLEL=$parallel: say no, chroots or all" >&2; exit 2 ;;
esac
labels=("GHC $("${HC:-ghc}" --numeric-version 2>/dev/null || echo '(host)') (host)"
    "GHC 9.6 (Debian trixie)" "GHC 9.10 (Debian sid)" "rts-writer/ as 9.6, 9.10 (lint)")
# The last part, once the chroots exist: the static checks of the code
# that includes Rts.h, with their GHCs' headers (the host's check sees
# only GHC 9.0's branches).
commands=("make check" "scripts/ghc-chroot.sh 9.6 check" "scripts/ghc-chroot.sh 9.10 check"
    "tests/lint-rts-ghc.sh")
# A part alone runs twice as many integration tests at a time as the
# machine has cores (its tests use about one core in two: they wait on
# sockets and programs), the load that two parts side by side, at make
# check's 2 each, make too: the load the tests' margins are made for.
cores=$(nproc 2>/dev/null || echo 2)
logs=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; rm -rf "$logs"' EXIT
trap 'exit 130' INT TERM
pass=0 fail=0 skip=0
summary=()
failures=()

run_part() { # run_part N: the part's output to $logs/N.log, "status seconds" to $logs/N.rc
    local start=$SECONDS
    ${commands[$1]} >"$logs/$1.log" 2>&1 </dev/null
    echo "$? $((SECONDS - start))" >"$logs/$1.rc"
}
count_part() { # count_part N: add a finished part's counts to the matrix's
    local rc secs line p f k
    read -r rc secs <"$logs/$1.rc"
    line=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$logs/$1.log" | tail -n 1)
    p=$(echo "$line" | awk '{ print $2 }')
    f=$(echo "$line" | awk '{ print $4 }')
    k=$(echo "$line" | awk '{ print $6 }')
    [ -n "$p" ] || p=0
    [ -n "$f" ] || f=0
    [ -n "$k" ] || k=0
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # failed before any test ran
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
    summary[$1]=$(printf '%-24s %4d passed, %d failed, %d skipped, %4d s' "${labels[$1]}" "$p" "$f" "$k" "$secs")
    # Each failure with the lines that follow it (a test's diagnostics),
    # repeated at the end: a CI log's tail then says what failed.
    failures[$1]=$(awk '/^not ok/ { n = 6 } n > 0 { print "  " $0; n-- }' "$logs/$1.log" | head -n 60)
}

started=$SECONDS
for group in "${groups[@]}"; do
    read -r -a parts <<<"$group"
    if [ ${#parts[@]} -eq 1 ]; then
        n=${parts[0]}
        echo
        echo "################ ${labels[$n]}"
        start=$SECONDS
        ${commands[$n]} INTEGRATION_JOBS="$((2 * cores))" 2>&1 </dev/null | tee "$logs/$n.log"
        echo "${PIPESTATUS[0]} $((SECONDS - start))" >"$logs/$n.rc"
    else
        pids=()
        for n in "${parts[@]}"; do
            echo
            echo "################ ${labels[$n]}: runs beside another part; its output follows when all end"
            run_part "$n" &
            pids+=($!)
        done
        # A line every two minutes meanwhile: CI's log shows the run is
        # alive. Looks every 2 s, so the matrix goes on as soon as all end.
        last=$SECONDS
        while sleep 2 & wait $!; do
            alive=0 progress=""
            for i in "${!parts[@]}"; do
                kill -0 "${pids[$i]}" 2>/dev/null && alive=1
                progress="$progress ${labels[${parts[$i]}]}: $(grep -c '^ok ' "$logs/${parts[$i]}.log" 2>/dev/null) ok, $(grep -c '^not ok' "$logs/${parts[$i]}.log" 2>/dev/null) not ok;"
            done
            [ $alive -eq 1 ] || break
            if [ $((SECONDS - last)) -ge 120 ]; then
                echo "# $((SECONDS - started)) s:$progress"
                last=$SECONDS
            fi
        done
        wait "${pids[@]}"
        for n in "${parts[@]}"; do
            echo
            echo "################ ${labels[$n]}"
            cat "$logs/$n.log"
        done
    fi
    for n in "${parts[@]}"; do count_part "$n"; done
done
echo
echo "################ results per GHC (the matrix: $((SECONDS - started)) s, MATRIX_PARALLEL=$parallel)"
printf '%s\n' "${summary[@]}"
for n in "${!failures[@]}"; do
    [ -n "${failures[$n]}" ] || continue
    echo "# what failed on ${labels[$n]}:"
    printf '%s\n' "${failures[$n]}"
done
echo "matrix: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
