#!/bin/bash
# kmod/dkms.conf builds gpup2p.ko for the guest's kernel with DKMS (in private source and build trees,
# nothing registered on this machine). Prints ok/not ok lines.
set -u
BUILD=${BUILD:-build}
KVER=$(cat "$BUILD/${GPUP2P_VM:-vm}/kver")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' kmod/dkms.conf)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src" "$t/tree"
cp -r kmod "$t/src/gpup2p-$ver"
if ! command -v dkms >/dev/null; then
	echo "not ok - dkms is not installed (tests/vm/setup.sh installs it)"
	exit 0
fi
if dkms build -m gpup2p -v "$ver" -k "$KVER" --sourcetree "$t/src" --dkmstree "$t/tree" >"$t/log" 2>&1; then
	ko=$(find "$t/tree" -name 'gpup2p.ko*' -path "*$KVER*" | head -1)
	[ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$KVER " &&
		echo "ok - dkms build of gpup2p $ver for $KVER (vermagic checked)" || echo "not ok - dkms built no module for $KVER"
	[ "$ver" = "$(cat VERSION)" ] &&
		echo "ok - dkms.conf version matches VERSION ($ver)" || echo "not ok - dkms.conf version $ver, VERSION $(cat VERSION)"
else
	echo "not ok - dkms build failed: $(tail -5 "$t/log" | tr '\n' ' ')"
fi
