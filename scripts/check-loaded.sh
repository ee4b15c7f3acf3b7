#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make check-loaded: the whole of make check (tests/run-all.sh) with a CPU
# hog beside it, stress-ng --cpu 4 (load about 6 on a 2-core machine, what
# a shared CI runner or a busy laptop looks like). The hog runs in a
# process group of its own and is killed when the suite ends, however it
# ends (success, failure, Ctrl-C); it also stops by itself after 3 hours.
# Exit status: the suite's.
set -u
build=${1:-build}
command -v stress-ng >/dev/null 2>&1 || { echo "check-loaded needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }
setsid stress-ng --cpu "${STRESS_CPUS:-4}" --timeout 3h --quiet &
hog=$!
stop_hog() {
    kill -TERM -- "-$hog" 2>/dev/null
    wait "$hog" 2>/dev/null
}
trap stop_hog EXIT
trap 'exit 130' INT TERM
echo "# check-loaded: stress-ng --cpu ${STRESS_CPUS:-4} (pid $hog) beside make check"
start=$(date +%s)
tests/run-all.sh "$build"
rc=$?
echo "# check-loaded: $(( $(date +%s) - start )) s under load"
exit $rc
