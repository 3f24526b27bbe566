#!/bin/bash
# Build, for the guest's kernel, gpup2p.ko and the test-only nvp2p_stub.ko (against Debian's
# linux-headers-$KVER, installed by setup.sh), and the guest test program. Out of the source tree:
# build/vm/kmod, build/vm/stub, build/vm/kmod_test.
set -eu
BUILD=${BUILD:-build}
VM=$PWD/$BUILD/${GPUP2P_VM:-vm}
KVER=$(cat "$VM/kver")
KDIR=$(cat "$VM/kdir" 2>/dev/null || echo "/usr/src/linux-headers-$KVER")
[ -d "$KDIR" ] || { echo "build-kmod: $KDIR missing (tests/vm/setup.sh installs it)" >&2; exit 69; }
rm -rf "$VM/kmod" "$VM/stub" "$VM/peer"
mkdir -p "$VM/kmod" "$VM/stub" "$VM/peer"
cp -r kmod/. "$VM/kmod/"
cp tests/vm/nvp2p_stub/* "$VM/stub/"
cp tests/vm/fake_nv_peer_mem/* "$VM/peer/"
make -s -C "$KDIR" CC="${KCC:-gcc}" M="$VM/peer" modules >"$VM/peer/build.log" 2>&1 || { cat "$VM/peer/build.log"; exit 2; }
make -s -C "$KDIR" CC="${KCC:-gcc}" M="$VM/stub" modules >"$VM/stub/build.log" 2>&1 || { cat "$VM/stub/build.log"; exit 2; }
make -s -C "$KDIR" CC="${KCC:-gcc}" M="$VM/kmod" KBUILD_EXTRA_SYMBOLS="$VM/stub/Module.symvers" modules >"$VM/kmod/build.log" 2>&1 ||
	{ cat "$VM/kmod/build.log"; exit 2; }
if grep -iE "warning|error" "$VM/kmod/build.log" "$VM/stub/build.log"; then
	echo "build-kmod: the modules build with warnings" >&2
	exit 2
fi
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -pthread -o "$VM/kmod_test" tests/vm/kmod_test.c
echo "build-kmod: gpup2p.ko and nvp2p_stub.ko for $KVER"
