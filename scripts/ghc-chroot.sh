#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run make targets of this repository with another GHC, inside a Debian
# chroot that has it:
#
#   scripts/ghc-chroot.sh 9.6  check     # Debian trixie: GHC 9.6.6
#   scripts/ghc-chroot.sh 9.10 check     # Debian sid:    GHC 9.10.3
#   STRESS_CPUS=8 scripts/ghc-chroot.sh 9.6 check-loaded
#
# The chroot's environment is emptied but for CI and STRESS_CPUS (the
# hog's size for check-loaded, scripts/check-loaded.sh), which pass in.
#
# The chroot is made with `debootstrap --variant=minbase`, then the
# toolchain is installed inside it with apt-get. It is cached under
# $ES_CHROOT_CACHE (default /var/cache/eventlog-socket), reused while it is
# complete and fresh, and rebuilt when it is missing, half-built or older
# than 14 days; a chroot made with another package list gets the missing
# packages installed in place (the stamp records the list). The package mirror is the one
# the host's apt uses. The repository is bind-mounted at /src, and the build
# goes to build/ghc-VERSION, so host and chroot builds never mix. Every mount
# is undone when this script ends, however it ends. Needs root.
set -euo pipefail

version=${1:?usage: ghc-chroot.sh 9.6|9.10 [make target...]}
shift
case "$version" in
9.6) suite=trixie ;;
9.10) suite=sid ;;
*)
    echo "ghc-chroot.sh: no Debian suite known for GHC $version (use 9.6 or 9.10)" >&2
    exit 2
    ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(check)

if [ "$(id -u)" -ne 0 ]; then
    echo "ghc-chroot.sh: needs root (debootstrap, chroot, mount)" >&2
    exit 1
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${ES_CHROOT_CACHE:-/var/cache/eventlog-socket}
root=$cache/ghc-$suite
stamp=$root/.eventlog-socket-complete
packages="ghc ghc-prof cabal-install libuv1-dev libghc-ghc-events-dev netcat-openbsd pkg-config python3 make gcc binutils libncurses-dev tmux libmicrohttpd-dev libjs-dygraphs chromium valgrind prometheus curl python3-pandas zlib1g-dev protobuf-compiler golang-github-google-pprof-dev"
max_age_days=14

log() { echo "ghc-chroot[$version]: $*"; }

# The host's Debian mirror, from apt's deb822 sources or the classic list.
host_mirror() {
    local uri
    uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -v security | head -n 1 || true)
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $0 !~ /security/ { print ($2 ~ /^\[/ ? $3 : $2); exit }' \
            /etc/apt/sources.list)
    fi
    if [ -z "$uri" ]; then
        echo "ghc-chroot.sh: cannot find the host's Debian mirror in /etc/apt" >&2
        exit 1
    fi
    echo "$uri"
}

fresh() {
    [ -f "$stamp" ] || return 1
    [ "$(head -n 1 "$stamp")" = "$suite $packages" ] || return 1
    [ -z "$(find "$stamp" -mtime +"$max_age_days")" ] || return 1
}

# A complete, recent chroot of this suite made with another package list:
# installing what is missing is quicker than a new debootstrap.
upgradable() {
    [ -f "$stamp" ] || return 1
    [ "$(head -n 1 "$stamp" | cut -d' ' -f1)" = "$suite" ] || return 1
    [ -z "$(find "$stamp" -mtime +"$max_age_days")" ] || return 1
}

# Install the package list into the chroot at DIR (mounted for the time).
apt_install() {
    mount_into "$1"
    # No package may start a service in the chroot (prometheus would start
    # its server on the host's network): invoke-rc.d asks this first.
    printf '#!/bin/sh\nexit 101\n' >"$1/usr/sbin/policy-rc.d"
    chmod 755 "$1/usr/sbin/policy-rc.d"
    in_chroot "$1" "apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages" \
        >"$cache/apt-$suite.log" 2>&1 || {
        echo "ghc-chroot.sh: installing the toolchain failed; see $cache/apt-$suite.log" >&2
        tail -n 5 "$cache/apt-$suite.log" >&2
        exit 1
    }
    unmount_all
}

install_packages() {
    log "installing the package list into the cached $suite chroot"
    unmount_under "$root"
    apt_install "$root"
    # Keep the stamp's date: the chroot's age is that of its debootstrap.
    local when
    when=$(stat -c %Y "$stamp")
    echo "$suite $packages" >"$stamp"
    touch -d "@$when" "$stamp"
}

mounts=()
unmount_all() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount -R "${mounts[$i]}" 2>/dev/null || umount -R -l "${mounts[$i]}" 2>/dev/null || true
    done
    mounts=()
}
trap unmount_all EXIT
trap 'unmount_all; exit 130' INT TERM

# Undo every mount under DIR, deepest first: a run that was killed leaves
# its mounts behind.
unmount_under() {
    local m
    for m in $(awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r); do
        umount -R "$m" 2>/dev/null || umount -R -l "$m" 2>/dev/null || true
    done
}

# Remove a chroot directory, never through a mount: removing through a bind
# mount of the repository (or /dev) would destroy it.
safe_remove() {
    local dir=$1
    [ -e "$dir" ] || return 0
    unmount_under "$dir"
    if awk -v d="$dir/" 'index($2, d) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
        echo "ghc-chroot.sh: $dir still has mounts inside; not removing it" >&2
        exit 1
    fi
    rm -rf --one-file-system "$dir"
}

mount_into() { # mount_into ROOT
    local r=$1
    mount -t proc proc "$r/proc" && mounts+=("$r/proc")
    mount --rbind /dev "$r/dev" && mount --make-rslave "$r/dev" && mounts+=("$r/dev")
}

# The host's certificate authorities, for the tools that fetch over TLS
# in the chroot (npm, for the speedscope test): where the host reaches a
# registry through a proxy of its own trust, the chroot's own bundle
# lacks it. Copied in before each run (the host's may change).
host_ca=/etc/ssl/certs/ca-certificates.crt
chroot_ca=/etc/ssl/eventlog-socket-host-ca.crt
in_chroot() { # in_chroot ROOT COMMAND
    local ca=()
    [ -f "$1$chroot_ca" ] && ca=(NODE_EXTRA_CA_CERTS="$chroot_ca" npm_config_cafile="$chroot_ca")
    chroot "$1" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive CI="${CI:-}" STRESS_CPUS="${STRESS_CPUS:-}" "${ca[@]}" \
        bash -c "$2"
}

build_chroot() {
    command -v debootstrap >/dev/null 2>&1 || {
        log "installing debootstrap"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    local mirror new=$root.new
    mirror=$(host_mirror)
    log "building the $suite chroot in $root (mirror $mirror)"
    safe_remove "$new"
    mkdir -p "$cache"
    debootstrap --variant=minbase "$suite" "$new" "$mirror" >"$cache/debootstrap-$suite.log" 2>&1 || {
        echo "ghc-chroot.sh: debootstrap failed; see $cache/debootstrap-$suite.log" >&2
        tail -n 5 "$cache/debootstrap-$suite.log" >&2
        exit 1
    }
    cp /etc/resolv.conf "$new/etc/resolv.conf"
    # The mirror may serve a frozen snapshot of the archive; sid's Release
    # file carries a Valid-Until date that such a snapshot outlives.
    echo 'Acquire::Check-Valid-Until "false";' >"$new/etc/apt/apt.conf.d/99eventlog-socket"
    apt_install "$new"
    echo "$suite $packages" >"$new/.eventlog-socket-complete"
    safe_remove "$root"
    mv "$new" "$root"
}

mkdir -p "$cache"
exec 9>"$cache/.lock-$suite"
flock 9 # one build or run per chroot at a time
if fresh; then
    log "using the cached $suite chroot"
elif upgradable; then
    install_packages
else
    started=$(date +%s)
    build_chroot
    log "chroot ready in $(($(date +%s) - started)) s"
fi

unmount_under "$root"
mount_into "$root"
mkdir -p "$root/src"
mount --bind "$repo" "$root/src" && mounts+=("$root/src")
if [ -f "$host_ca" ]; then
    mkdir -p "$root/etc/ssl" && cp "$host_ca" "$root$chroot_ca"
fi
log "GHC $(in_chroot "$root" 'ghc --numeric-version'): make ${targets[*]}"
set +e
# Each target quoted for the chroot's shell: INTEGRATION_TESTS="a b" stays one word.
quoted=$(printf '%q ' "${targets[@]}")
# The libFuzzer targets and the unit tests are the same C whatever the
# GHC: the host's check builds and runs them (Makefile, FUZZ_IN_CHECK,
# UNIT_IN_CHECK); so do the static checks (LINT_IN_CHECK, tests/lint.sh)
# and the integration tests that start no program built with GHC
# (GHC_FREE_IN_CHECK).
in_chroot "$root" "cd /src && make $quoted BUILD=build/ghc-$version FUZZ_IN_CHECK=no LINT_IN_CHECK=no UNIT_IN_CHECK=no GHC_FREE_IN_CHECK=no"
rc=$?
set -e
exit $rc
