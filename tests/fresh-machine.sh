#!/bin/bash
# `make check` from a fresh clone on a fresh Debian 12 with no CUDA toolkit (not run by CI; needs root,
# debootstrap and the network to deb.debian.org). A minbase bookworm system is made once (DIR/base, kept
# for the next run) and copied to DIR/run for each run; the current commit is cloned into a 0700
# directory in it, and in the chroot, in a private mount namespace: no CUDA anywhere, a plain `make`
# (says "run make deps"), then `make check WERROR=1`, which installs what is missing from Debian and
# runs every test, then `make run`. The script's exit status is make check's.
#   tests/fresh-machine.sh [DIR]     (default /var/tmp/gpup2p-bookworm)
set -eu
DIR=${1:-/var/tmp/gpup2p-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine: needs root (chroot, mounts)" >&2; exit 77; }
command -v debootstrap >/dev/null || { echo "fresh-machine: apt install debootstrap" >&2; exit 69; }

if [ ! -f "$DIR/base/etc/debian_version" ]; then
	echo "== debootstrap --variant=minbase bookworm $DIR/base"
	mkdir -p "$DIR"
	debootstrap --variant=minbase bookworm "$DIR/base" "$MIRROR" >"$DIR/debootstrap.log" 2>&1 ||
		{ tail -20 "$DIR/debootstrap.log"; exit 1; }
fi
src_base=$DIR/base
DIR=$DIR/run
rm -rf "$DIR"
cp -a "$src_base" "$DIR"
cp /etc/resolv.conf "$DIR/etc/resolv.conf"
clone=$(mktemp -d "$DIR/root/clone.XXXXXX") # mktemp: mode 0700, under /root (0700 too)
git clone -q --no-hardlinks "$src" "$clone/gpup2p"
git -C "$clone/gpup2p" checkout -q "$(git -C "$src" rev-parse HEAD)"
echo "== fresh clone of $(git -C "$src" rev-parse --short HEAD) at ${clone#"$DIR"}/gpup2p (modes: /root $(stat -c %a \
	"$DIR/root"), clone dir $(stat -c %a "$clone"))"

# what runs in the chroot (beside the clone, not in it)
cat >"$clone/run.sh" <<'EOS'
set -u
repo=$1
cd "$repo"
# CUDA's cuda.h (not Linux's linux/cuda.h, Apple's ADB) or a libcuda, outside the clone
have() {
	find / -xdev -path "$repo" -prune -o \( -name cuda.h -o -name 'libcuda.so*' \) -print 2>/dev/null |
		while read -r f; do [ "${f##*.}" = h ] && ! grep -q CUDA_VERSION "$f" || echo "$f"; done | tr '\n' ' '
}
echo "== cuda.h or libcuda here, outside the clone: [$(have)] (none expected); $(ls -d /usr/local/cuda 2>&1)"
echo "== apt-get install make gcc pkg-config (a user's first step), then plain make before make deps"
apt-get update -qq && apt-get install -y -qq --no-install-recommends make gcc pkg-config libc6-dev >/dev/null
make; echo "exit $?"
echo "== make check WERROR=1"
make check WERROR=1; rc=$?
echo "== make run (topo and bar of this machine, no GPU here)"
make run; echo "exit $?"
echo "== cuda.h or libcuda after make deps, outside the clone: [$(have)] (none expected)"
exit $rc
EOS
unshare -m --propagation private bash -eu -c '
	d=$1
	mount -t proc proc "$d/proc"
	mount --rbind /dev "$d/dev"
	mount --rbind /sys "$d/sys"
	chroot "$d" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive /bin/bash "$2/run.sh" "$2/gpup2p"
' _ "$DIR" "${clone#"$DIR"}"
