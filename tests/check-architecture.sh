#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ARCHITECTURE.md names every source file, and every file it names exists.
# Every .c and .h under cbits/, rts-writer/, client/ and include/ must be
# named in it (as `dir/file.c`, `file.c`, or `file.[ch]` for both), and every
# `file.c`/`file.h` it names in backquotes must exist: under the directory of
# the "### `dir/`" section it is named in, at the path given, or (outside
# those sections) anywhere under the four directories. And every C name it cites
# in backquotes (a function, type, field or constant with an underscore in
# it: `es_server_submit`, `c->lossless` aside) occurs in those sources. TAP.
cd "$(dirname "$0")/.." || exit 1
doc=ARCHITECTURE.md
dirs="cbits rts-writer client include"
[ -f "$doc" ] || { echo "1..1"; echo "not ok 1 - $doc is missing"; exit 1; }

# The names in backquotes, one "SECTION-DIR NAME" a line, X.[ch] expanded.
named=$(awk '
    /^####? `[a-z\/-]+\/`/ { split($0, a, "`"); dir = a[2]; sub(/\/$/, "", dir); next }
    /^##[^#]/ { dir = "" }
    {
        line = $0
        while (match(line, /`[^`]*`/)) {
            tok = substr(line, RSTART + 1, RLENGTH - 2)
            line = substr(line, RSTART + RLENGTH)
            n = split(tok, parts, /[ ,]+/)
            for (i = 1; i <= n; i++) {
                t = parts[i]
                dd = (t ~ /\//) ? "" : dir
                if (t ~ /^[A-Za-z0-9_\/.-]+\.\[ch\]$/) {
                    sub(/\.\[ch\]$/, "", t)
                    print (dd == "" ? "-" : dd), t ".c"
                    print (dd == "" ? "-" : dd), t ".h"
                } else if (t ~ /^[A-Za-z0-9_\/.-]+\.[ch]$/) {
                    print (dd == "" ? "-" : dd), t
                }
            }
        }
    }' "$doc" | sort -u)

resolve() { # SECTION-DIR NAME -> the path, or nothing
    local d=$1 n=$2
    # A file the build makes exists only after a build (a chroot's check
    # runs in build/ghc-VERSION): it is the Makefile's to make.
    case $n in build/*) grep -qF "\$(BUILD)/${n#build/}" Makefile && echo "$n"; return ;; esac
    case $n in */*) [ -f "$n" ] && echo "$n"; return ;; esac
    if [ "$d" != - ]; then [ -f "$d/$n" ] && echo "$d/$n"; return; fi
    find $dirs -type f -name "$n" | head -n 1
}

files=$(find $dirs -type f \( -name '*.c' -o -name '*.h' \) | sort)
n=0; out=""; fail=0
for f in $files; do
    n=$((n + 1))
    dir=${f%/*} base=${f##*/}
    if printf '%s\n' "$named" | grep -qxF -e "$dir $base" -e "- $base" -e "$dir $f" -e "- $f"; then
        out+="ok $n - $f is named in $doc"$'\n'
    else
        out+="not ok $n - $f is not named in $doc (add it to the module tables)"$'\n'; fail=1
    fi
done
while read -r d name; do
    [ -n "$name" ] || continue
    n=$((n + 1))
    if [ -n "$(resolve "$d" "$name")" ]; then
        out+="ok $n - $name (named in $doc) exists"$'\n'
    else
        where=$([ "$d" = - ] && echo "any of $dirs" || echo "$d/")
        out+="not ok $n - $doc names $name, which is not in $where (remove it or fix the name)"$'\n'; fail=1
    fi
done <<<"$named"
# The C names it cites: each must occur, as a word, in the sources.
ids=$(grep -o '`[^`]*`' "$doc" | tr -d '`' | tr ' ,/' '\n\n\n' |
    grep -E '^[A-Za-z][A-Za-z0-9_]*_[A-Za-z0-9_]*$' | sort -u)
for id in $ids; do
    n=$((n + 1))
    if grep -rqw -- "$id" $dirs; then
        out+="ok $n - $id (cited in $doc) occurs in the sources"$'\n'
    else
        out+="not ok $n - $doc cites $id, which no file of $dirs defines or uses (renamed? fix $doc)"$'\n'; fail=1
    fi
done
# The Haskell package builds the library from its own list of C files:
# each of the library's is there, and nothing else.
cabal=ghc-eventlog-socket.cabal
listed=$(sed -n 's/^[[:space:]]*\(cbits\/[^[:space:]]*\.c\|rts-writer\/[^[:space:]]*\.c\)$/\1/p' "$cabal" | sort)
for f in $( (ls cbits/*/*.c rts-writer/*.c; printf '%s\n' "$listed") | sort -u); do
    n=$((n + 1))
    if [ ! -f "$f" ]; then
        out+="not ok $n - $cabal lists $f, which does not exist"$'\n'; fail=1
    elif printf '%s\n' "$listed" | grep -qxF "$f"; then
        out+="ok $n - $f is in $cabal's c-sources"$'\n'
    else
        out+="not ok $n - $f is not in $cabal's c-sources (the Haskell package would not link)"$'\n'; fail=1
    fi
done
echo "1..$n"
printf '%s' "$out"
exit $fail
