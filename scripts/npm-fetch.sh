#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fetch one npm package, at one version, checked against its SHA-256, into
# a cache, and print the directory it is unpacked in (its package/). For
# the tools the tests open our files with (speedscope), which Debian does
# not package. Nothing runs from the package: it is unpacked, not
# installed.
#
#   npm-fetch.sh NAME VERSION SHA256 [CACHE]
#
# CACHE defaults to build/npm in the repository. Exits 3 when npm is not
# installed (a test skips then), 1 when the download fails or the
# tarball's SHA-256 is not SHA256.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: npm-fetch.sh NAME VERSION SHA256 [CACHE]" >&2; exit 2; }
name=$1 version=$2 sum=$3
cache=${4:-$(cd "$(dirname "$0")/.." && pwd)/build/npm}
dest=$cache/$name-$version
if [ -f "$dest/.complete" ]; then
    echo "$dest/package"
    exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "npm-fetch.sh: npm is not installed" >&2; exit 3; }
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack --loglevel=error --cache "$tmp/npm-cache" "$name@$version" \
    >/dev/null 2>"$tmp/npm.err"); then
    echo "npm-fetch.sh: npm pack $name@$version failed:" >&2
    grep -v '^npm ERR! *$' "$tmp/npm.err" | head -n 5 >&2
    exit 1
fi
tarball=$(find "$tmp" -maxdepth 1 -name '*.tgz' | head -n 1)
[ -n "$tarball" ] || { echo "npm-fetch.sh: npm pack $name@$version gave no tarball" >&2; exit 1; }
got=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$got" != "$sum" ]; then
    echo "npm-fetch.sh: $name@$version has SHA-256 $got, expected $sum" >&2
    exit 1
fi
mkdir -p "$tmp/unpacked"
tar -xzf "$tarball" -C "$tmp/unpacked"
rm -rf "$dest"
mv "$tmp/unpacked" "$dest"
touch "$dest/.complete"
echo "$dest/package"
