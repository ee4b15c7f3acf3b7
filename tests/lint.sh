#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The static checks, judged: none may find anything. TAP.
#
#   tests/lint.sh BUILD [CHECK...]   CHECK: analyze cppcheck flake8 shellcheck refs
#                                    (all five when none is named)
#
# analyze, cppcheck, flake8 and shellcheck write reports that the Makefile
# makes (BUILD/lint/, made again only from what changed); this script asks
# make for them first, so it also runs alone. A check whose tool is not
# installed is a SKIP (make check and make lint install them on Debian:
# scripts/ensure-deps.sh). With LINT_IN_CHECK=no (the GHC chroots' make
# check) the four tools' checks are SKIPs: other Debian releases' tools
# find other things in the same code, which the host's check has judged.
# refs needs no tool: no comment may point at an issue tracker that is not
# in the repository ("issue N", "#N"); GHC's own tracker ("GHC #N") is
# public and may be cited.
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: tests/lint.sh BUILD [analyze|cppcheck|flake8|shellcheck|refs]...}
shift
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=(analyze cppcheck flake8 shellcheck refs)

declare -A what=(
    [analyze]="clang --analyze on cbits/, rts-writer/, client/"
    [cppcheck]="cppcheck on cbits/, rts-writer/, client/"
    [flake8]="flake8 on tests/, bench/, scripts/"
    [shellcheck]="shellcheck (warnings and errors) on scripts/, tests/, .ci/run"
    [refs]="no issue tracker references in the code, tests and scripts"
)
declare -A tool=([analyze]=clang [cppcheck]=cppcheck [flake8]=flake8 [shellcheck]=shellcheck)
# A finding's first line in each report: the analyzer's and the compiler's
# warnings (their notes follow), and one line each for the others.
declare -A finding=(
    [analyze]=': (warning|error): '
    [cppcheck]=':[0-9]+: '
    [flake8]=':[0-9]+:[0-9]+: '
    [shellcheck]=':[0-9]+:[0-9]+: '
)

n=0 failed=0
result() { # result STATUS DESCRIPTION [DETAIL-FILE]
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        failed=$((failed + 1))
        echo "not ok $n - $2"
        [ -z "${3:-}" ] || head -n 80 "$3" | sed 's/^/#   /'
    fi
}
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The reports of the checks whose tool is here.
reports=() made=()
for c in "${checks[@]}"; do
    [ -n "${what[$c]:-}" ] || { echo "tests/lint.sh: no check named $c" >&2; exit 2; }
    [ -n "${tool[$c]:-}" ] || continue
    [ "${LINT_IN_CHECK:-yes}" != no ] || continue
    command -v "${tool[$c]}" >/dev/null 2>&1 || continue
    reports+=("$build/lint/$c.txt")
    made+=("$c")
done
if [ ${#reports[@]} -gt 0 ]; then
    # In parallel (LINT_JOBS, the cores by default), unless a make that
    # runs this script shares its jobs.
    jobs=(-j"${LINT_JOBS:-$(nproc 2>/dev/null || echo 2)}")
    [[ ${MAKEFLAGS:-} != *jobserver* ]] || jobs=()
    if ! timeout 1800 make --no-print-directory ES_DEPS_CHECKED=1 BUILD="$build" "${jobs[@]}" \
        "${reports[@]}" >"$out" 2>&1; then
        tail -n 30 "$out" >"$out.tail"
        mv "$out.tail" "$out"
        result 1 "the reports of ${made[*]} could not be made:" "$out"
        made=()
    fi
fi

refs() {
    local files pat='\b[Ii]ssues? #?[0-9]+|(^|[[:space:](,])#[0-9]+([^0-9A-Za-z_]|$)'
    local dirs=(cbits rts-writer client include haskell tests scripts bench examples compat .ci)
    if git rev-parse --git-dir >/dev/null 2>&1; then
        files=$(git ls-files -- "${dirs[@]}" Makefile '*.cabal' ':!*.md' ':!*.css')
    else
        files=$(find "${dirs[@]}" Makefile ./*.cabal -type f ! -name '*.md' ! -name '*.css')
    fi
    # shellcheck disable=SC2086 # one file a word: the repository's names have no spaces
    grep -nIE "$pat" $files | sed -E 's/GHC #[0-9]+//g' | grep -E "$pat" >"$out"
    [ ! -s "$out" ]
}

for c in "${checks[@]}"; do
    if [ "$c" = refs ]; then
        refs
        result $? "${what[$c]}" "$out"
    elif [ "${LINT_IN_CHECK:-yes}" = no ]; then
        skip "${what[$c]}: the host's make check runs it (LINT_IN_CHECK=no)"
    elif ! command -v "${tool[$c]}" >/dev/null 2>&1; then
        skip "${what[$c]}: ${tool[$c]} is not installed"
    elif [[ " ${made[*]} " == *" $c "* ]]; then
        report=$build/lint/$c.txt
        count=$(grep -cE "${finding[$c]}" "$report")
        if [ "$count" -eq 0 ]; then
            result 0 "${what[$c]}: no findings"
        else
            result 1 "${what[$c]}: $count findings ($report)" "$report"
        fi
    fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
