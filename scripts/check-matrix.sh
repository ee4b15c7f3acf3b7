#!/usr/bin/env bash
# The whole test suite on every GHC we support here: the host's GHC, then
# GHC 9.6 and 9.10 in Debian chroots (scripts/ghc-chroot.sh). Prints each
# part's result and time, and a closing "N passed, N failed" over all.
set -u
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 skip=0
summary=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
part() { # part LABEL COMMAND...
    local label=$1; shift
    echo
    echo "################ $label"
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local line p f k
    line=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1)
    p=$(echo "$line" | awk '{ print $2 }')
    f=$(echo "$line" | awk '{ print $4 }')
    k=$(echo "$line" | awk '{ print $6 }')
    [ -n "$p" ] || p=0
    [ -n "$f" ] || f=0
    [ -n "$k" ] || k=0
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # failed before any test ran
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
    summary+=("$(printf '%-24s %4d passed, %d failed, %d skipped, %4d s' "$label" "$p" "$f" "$k" \
        $((SECONDS - start)))")
}
part "GHC $("${HC:-ghc}" --numeric-version 2>/dev/null || echo '(host)') (host)" make check
part "GHC 9.6 (Debian trixie)" scripts/ghc-chroot.sh 9.6 check
part "GHC 9.10 (Debian sid)" scripts/ghc-chroot.sh 9.10 check
echo
echo "################ results per GHC"
printf '%s\n' "${summary[@]}"
echo "matrix: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
