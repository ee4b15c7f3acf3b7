#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Which make target installs which Debian packages: `make` and `make
# install` only the build's, `make demo` the demo's, the tests' packages
# only with the test targets. Judged on scripts/ensure-deps.sh's lists
# (--list: a bare machine's), its --dry-run on a machine where nothing is
# found, the Makefile's hand-over of each target's name (make -n), and
# README's table, which must say the same. Installs nothing. TAP.
set -u
cd "$(dirname "$0")/.." || exit 1
# The script's defaults are judged: the chroots' make check runs this with
# FUZZ_IN_CHECK=no and LINT_IN_CHECK=no exported; a test that means them
# says so.
unset FUZZ_IN_CHECK LINT_IN_CHECK
deps=scripts/ensure-deps.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/es-deps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0
ok() { # ok STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
        echo "not ok $n - $2"
        failed=$((failed + 1))
    fi
}
list() { timeout 30 "$deps" --list "$1" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }
# The packages only tests use; none may come with building or installing.
test_only="cabal-install python3 tmux chromium prometheus curl python3-pandas clang-format ghc-prof clang
protobuf-compiler golang-github-google-pprof-dev npm
libclang-rt-dev cppcheck flake8 shellcheck"
has_none() { # has_none LIST WORDS: LIST shares no word with WORDS
    local w
    for w in $2; do case " $1 " in *" $w "*) return 1 ;; esac; done
}
has_all() { # has_all LIST WORDS
    local w
    for w in $2; do case " $1 " in *" $w "*) ;; *) return 1 ;; esac; done
}

build_list=$(list install)
for t in all lib install symbols; do
    l=$(list "$t")
    has_none "$l" "$test_only netcat-openbsd libghc-ghc-events-dev" && has_all "$l" "ghc gcc libuv1-dev"
    ok $? "make $t installs the build's packages only: $l"
done
l=$(list demo)
has_none "$l" "$test_only libncurses-dev libmicrohttpd-dev libjs-dygraphs" &&
    has_all "$l" "ghc libuv1-dev netcat-openbsd libghc-ghc-events-dev"
ok $? "make demo installs what the demo needs only: $l"
for t in check unit-test integration-test cabal-test; do
    l=$(list "$t")
    has_all "$l" "$build_list chromium prometheus python3-pandas clang-format ghc-prof tmux cabal-install"
    ok $? "make $t installs the build's packages and the tests' (chromium, prometheus, pandas, ghc-prof...)"
done
l=$(list fuzz)
has_all "$l" "$(list unit-test) clang libclang-rt-dev" && has_none "$l" "cppcheck flake8 shellcheck"
ok $? "make fuzz installs make unit-test's packages and clang with libFuzzer"
l=$(list check)
has_all "$l" "clang libclang-rt-dev cppcheck flake8 shellcheck"
ok $? "make check installs the fuzz targets' and the static checks' tools too"
l=$(LINT_IN_CHECK=no FUZZ_IN_CHECK=no list check)
has_none "$l" "clang libclang-rt-dev cppcheck flake8 shellcheck"
ok $? "make check FUZZ_IN_CHECK=no LINT_IN_CHECK=no (the chroots') leaves their tools out: $l"
for t in lint analyze cppcheck flake8 shellcheck; do
    l=$(list "$t")
    has_all "$l" "$build_list clang cppcheck flake8 shellcheck" && has_none "$l" "chromium prometheus ghc-prof"
    ok $? "make $t installs the build's packages and the static checks' tools only"
done
"$deps" --list no-such-target >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "a target without a package list is refused (status 2), not given everything"

# A bare machine: a PATH with the shell's own tools only, so no GHC, cc,
# pkg-config or browser is found (a file outside PATH, such as dygraphs,
# still is). The dry run lists what would be installed, and installs
# nothing (no apt-get within reach either).
mkdir -p "$tmp/bin"
for tool in bash awk sed tr printf cat; do
    p=$(command -v "$tool") && ln -s "$p" "$tmp/bin/$tool"
done
bare() { timeout 30 env PATH="$tmp/bin" "$tmp/bin/bash" "$deps" --dry-run "$1" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }
d=$(bare install)
has_all "$d" "ghc gcc pkg-config libuv1-dev" && has_none "$d" "$test_only"
ok $? "dry run of make install on a bare machine: $d"
d=$(bare check)
has_all "$d" "ghc chromium prometheus tmux clang-format ghc-prof cabal-install"
ok $? "dry run of make check on a bare machine: $d"

# The Makefile hands ensure-deps.sh each target's own name (make -n runs
# no recipe but prints it; the sub-make it would start then prints its own).
for t in all install demo check cabal-build fuzz lint; do
    # Outside any make that runs this test: a parent's jobserver would add a
    # warning, and its ES_DEPS_CHECKED=1 (exported to recipes) would skip the step.
    first=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u ES_DEPS_CHECKED timeout 120 make -n --no-print-directory "$t" 2>&1 | head -n 1)
    [ "$first" = "scripts/ensure-deps.sh $t" ]
    ok $? "make $t first runs scripts/ensure-deps.sh $t (make -n: $first)"
done

# README's table: each row's targets get exactly the row's packages
# ("`make X`'s and ..." adds to X's row).
python3 - "$deps" >"$tmp/readme.out" 2>&1 <<'PY'
import re, subprocess, sys
deps = sys.argv[1]
text = open("README.md").read()
rows = re.findall(r"^\| (`make[^|]*) \| ([^|]*) \|$", text, re.M)
table, bad = {}, 0
for targets, cell in rows:
    names = [re.sub(r"^make ?", "", t) or "all" for t in re.findall(r"`([^`]*)`", targets)]
    base = re.match(r"`make ?([a-z-]*)`'s and (.*)", cell)
    pkgs = set((base.group(2) if base else cell).split())
    if base:
        pkgs |= table[base.group(1) or "all"]
    for name in names:
        table[name] = pkgs
if not table:
    print("no `make ...` rows in README's table")
    sys.exit(1)
for name, pkgs in sorted(table.items()):
    listed = set(subprocess.run([deps, "--list", name], capture_output=True,
                                text=True).stdout.split())
    if listed != pkgs:
        bad += 1
        print("%s: README %s, the script %s" % (name, sorted(pkgs - listed), sorted(listed - pkgs)))
print("%d targets in README's table" % len(table))
sys.exit(1 if bad else 0)
PY
ok $? "README's table of which target installs what says what the script does ($(tail -n 1 "$tmp/readme.out"))"
[ "$failed" -eq 0 ] || sed 's/^/#   /' "$tmp/readme.out"

echo "1..$n"
[ "$failed" -eq 0 ]
