#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run the unit tests: every case (tests/unit/unit.h) of every test binary,
# plain, ASan/UBSan and TSan, and the fuzz targets' replays, each case in a
# process of its own with a timeout (UNIT_TIMEOUT seconds, 120).
#
# A case that took UNIT_ALONE ms or more last time (2000; BUILD/unit-times)
# is a task of its own; a binary's other cases are one task, in which the
# binary forks each case apart (starting a sanitized program costs more
# than most cases). UNIT_JOBS tasks run at once: most cases spend their
# time waiting (on a server's threads, a socket, a timer), not computing,
# so the default is 4 per CPU. The longest tasks start first, so that the
# run does not end waiting on one long case started last.
#
#   tests/run-unit.sh [BUILD]          every case (make unit-test)
#   CASE="NAME ..." tests/run-unit.sh  the cases of those names (shell
#                                      patterns too: 'lossless_*'; a case
#                                      run per recorded eventlog, by its name
#                                      alone or as NAME/ghc-9.6.6), in every
#                                      build that has them (make unit-test
#                                      CASE=NAME)
#   CASE=list tests/run-unit.sh        every case's name and the builds
#                                      that have it; runs none
#
# Prints each task's TAP in a stable order (the binaries in turn) as soon
# as it and those before it have ended, and a closing "unit: N passed, N
# failed" line (of checks).
set -u
build=${1:-build}
jobs=${UNIT_JOBS:-$((4 * $(nproc 2>/dev/null || echo 2)))}
limit=${UNIT_TIMEOUT:-120}
alone=${UNIT_ALONE:-2000}
export UNIT_TIMEOUT=$limit # each case the binary forks apart
IFS=$', \t' read -r -a patterns <<<"${CASE:-}"
times_file=$build/unit-times
pass=0 fail=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1

# The binaries whose source is still there (a removed test's stale binary
# is not run).
bins=()
for t in "$build"/unit/test_* "$build"/unit-asan/test_* "$build"/unit-tsan/test_* \
    "$build"/unit-asan/fuzz_*; do
    name=${t##*/}
    [ -x "$t" ] && { [ -f "tests/unit/library/$name.c" ] || [ -f "tests/unit/client/$name.c" ] ||
        [ -f "tests/fuzz/$name.c" ]; } && bins+=("$t")
done

if [ ${#bins[@]} -eq 0 ]; then
    echo "not ok - no unit test binaries in $build (make unit-test builds them)"
    echo "unit: 0 passed, 1 failed"
    exit 1
fi

out=$(mktemp -d)
launcher=
trap 'if [ -n "$launcher" ]; then kill -- "$launcher" 2>/dev/null; fi; rm -rf "$out"' EXIT

not_ok() {
    echo "not ok - $*"
    fail=$((fail + 1))
}

# Every binary's cases, asked of all of them at once.
for i in "${!bins[@]}"; do
    (timeout 30 "${bins[$i]}" --list >"$out/list.$i" 2>&1; echo $? >"$out/list.$i.rc") &
done
wait

if [ "${patterns[*]}" = list ]; then
    for i in "${!bins[@]}"; do
        [ -s "$out/list.$i" ] && sed "s|\$|\t${bins[$i]}|" "$out/list.$i"
    done | awk -F'\t' '{ if (!($1 in w)) { o[++k] = $1; w[$1] = $2 } else w[$1] = w[$1] " " $2 }
                       END { for (i = 1; i <= k; i++) printf "%-48s %s\n", o[i], w[o[i]] }'
    exit 0
fi

# How long each case took last time, in ms.
declare -A took=()
if [ -f "$times_file" ]; then
    while IFS=$'\t' read -r ms t c; do took["$t $c"]=$ms; done <"$times_file"
fi

# The tasks in output order: a binary and the cases it runs, with how long
# they took last time (an unknown case: 100 ms). Also which patterns named
# a case, and which file each name comes from (a name must be one file's
# only).
task_bin=() task_cases=() task_est=()
declare -A matched=() origin=() known=() listed=()
for i in "${!bins[@]}"; do
    t=${bins[$i]} stem=${bins[$i]##*/}
    rc=$(cat "$out/list.$i.rc")
    if [ "$rc" -ne 0 ] || [ ! -s "$out/list.$i" ]; then
        echo "# $t --list"
        sed 's/^/# /' "$out/list.$i"
        not_ok "$t --list failed (status $rc): a test binary must list its cases"
        continue
    fi
    group=() est=0
    while read -r c; do
        if [ -n "${origin[$c]:-}" ] && [ "${origin[$c]}" != "$stem" ]; then
            not_ok "case $c is in both ${origin[$c]} and $stem: names must be unique"
        fi
        origin[$c]=$stem
        known[$c]=1
        listed["$t $c"]=1
        if [ ${#patterns[@]} -gt 0 ]; then
            hit=
            for p in "${patterns[@]}"; do
                # shellcheck disable=SC2053 # a pattern, on purpose
                if [[ $c == $p || $c == $p/* ]]; then hit=1 matched[$p]=1; fi
            done
            [ -n "$hit" ] || continue
        fi
        ms=${took["$t $c"]:-100}
        if [ "$ms" -ge "$alone" ]; then
            task_bin+=("$t") task_cases+=("$c") task_est+=("$ms")
        else
            group+=("$c")
            est=$((est + ms))
        fi
    done <"$out/list.$i"
    if [ ${#group[@]} -gt 0 ]; then
        task_bin+=("$t") task_cases+=("${group[*]}") task_est+=("$est")
    fi
done
for p in "${patterns[@]}"; do
    [ -n "${matched[$p]:-}" ] && continue
    not_ok "CASE=$p names no case"
    for c in "${!known[@]}"; do
        case $c in *"$p"* | "$p"*) echo "#   did you mean $c?" ;; esac
    done | sort | head -n 10
done

# Start order: longest first.
mapfile -t order < <(for i in "${!task_bin[@]}"; do
    echo "${task_est[$i]} $i"
done | sort -k1,1nr -k2,2n | cut -d' ' -f2)

# Each task writes its output, then its status and time, into files of
# its own, with a TMPDIR of its own (removed with $out however it ends);
# the launcher keeps at most $jobs running. A task of several cases has
# their UNIT_TIMEOUTs in all, the binary ending any one case that overruns.
(
    for i in "${order[@]}"; do
        while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do wait -n; done
        (
            read -r -a names <<<"${task_cases[$i]}"
            args=()
            for c in "${names[@]}"; do args+=(--case "$c"); done
            mkdir -p "$out/tmp.$i"
            start=${EPOCHREALTIME//[.,]/}
            # (the braces' stderr: the shell's own line about a task that
            # died of a signal, which its status already tells)
            { TMPDIR=$out/tmp.$i timeout -k 10 $((limit * ${#names[@]})) "${task_bin[$i]}" "${args[@]}" \
                tests/fixtures >"$out/$i.out" 2>&1; } 2>/dev/null
            rc=$?
            end=${EPOCHREALTIME//[.,]/}
            echo "$rc $(((end - start) / 1000))" >"$out/$i.rc.tmp" && mv "$out/$i.rc.tmp" "$out/$i.rc"
        ) &
    done
    wait
) &
launcher=$!
for i in "${!task_bin[@]}"; do
    t=${task_bin[$i]} cases=${task_cases[$i]}
    while [ ! -e "$out/$i.rc" ]; do sleep 0.05; done
    read -r rc ms <"$out/$i.rc"
    # The time of each case: the task's, or what the binary said of each.
    if [ "$cases" = "${cases% *}" ]; then
        took["$t $cases"]=$ms
    else
        while read -r c_ms c; do took["$t $c"]=$c_ms; done \
            < <(sed -n 's/^# \(.*\): \([0-9]*\) ms$/\2 \1/p' "$out/$i.out")
    fi
    echo "# $t --case ${cases// / --case }"
    cat "$out/$i.out"
    p=$(grep -c '^ok ' "$out/$i.out")
    f=$(grep -c '^not ok ' "$out/$i.out")
    pass=$((pass + p))
    fail=$((fail + f))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        not_ok "$t --case ${cases// / --case } timed out (UNIT_TIMEOUT: $limit s a case)"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        not_ok "$t --case ${cases// / --case } exited with status $rc (crash, sanitizer report or bail out)"
    fi
done
wait "$launcher"
launcher=
# (only the cases there are: a renamed or removed one is forgotten)
for k in "${!took[@]}"; do
    [ -n "${listed[$k]:-}" ] || continue
    printf '%s\t%s\t%s\n' "${took[$k]}" "${k%% *}" "${k#* }"
done | sort -k2 >"$times_file.tmp" && mv "$times_file.tmp" "$times_file"
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
