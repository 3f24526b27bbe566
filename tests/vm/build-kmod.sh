#!/bin/bash
# Build, for the guest's kernel, gpup2p.ko and the test-only nvp2p_stub.ko (against Debian's
# linux-headers-$KVER, installed by setup.sh), and the guest test program. Out of the source tree:
# build/vm/kmod, build/vm/stub, build/vm/kmod_test. The stub stands in for three NVIDIA drivers
# (nvp2p_stub/stub.c): build/vm/stub (535+, persistent pins), stub-nullcb (515-530), stub-none (older);
# gpup2p.ko is built against each (kmod, kmod-nullcb, kmod-none) and finds out from its Module.symvers.
set -eu
BUILD=${BUILD:-build}
VM=$PWD/$BUILD/${GPUP2P_VM:-vm}
KVER=$(cat "$VM/kver")
KDIR=$(cat "$VM/kdir" 2>/dev/null || echo "/usr/src/linux-headers-$KVER")
[ -d "$KDIR" ] || { echo "build-kmod: $KDIR missing (tests/vm/setup.sh installs it)" >&2; exit 69; }
# kbuild DIR [MAKE ARGS]: build the module whose sources are in DIR, stop on an error or a warning
kbuild() {
	local d=$1
	shift
	make -s -C "$KDIR" CC="${KCC:-gcc}" M="$d" "$@" modules >"$d/build.log" 2>&1 || { cat "$d/build.log"; exit 2; }
	# make's own "jobserver unavailable" (the harness run under make -jN) is not the module's warning
	if grep -iE "warning|error" "$d/build.log" | grep -v "jobserver unavailable"; then
		echo "build-kmod: $(basename "$d") builds with warnings" >&2
		exit 2
	fi
}
# the flavours side by side (kbuild's exit ends only its own subshell)
pids=()
for api in "" -nullcb -none; do
	rm -rf "$VM/kmod$api" "$VM/stub$api"
	mkdir -p "$VM/kmod$api" "$VM/stub$api"
	cp -r kmod/. "$VM/kmod$api/"
	cp tests/vm/nvp2p_stub/* "$VM/stub$api/"
	(kbuild "$VM/stub$api" NVP2P_STUB_API="${api#-}" &&
		kbuild "$VM/kmod$api" KBUILD_EXTRA_SYMBOLS="$VM/stub$api/Module.symvers") &
	pids+=($!)
done
rm -rf "$VM/peer"
mkdir -p "$VM/peer"
cp tests/vm/fake_nv_peer_mem/* "$VM/peer/"
kbuild "$VM/peer"
for p in "${pids[@]}"; do
	wait "$p" || exit 2
done
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -pthread -o "$VM/kmod_test" tests/vm/kmod_test.c tests/vm/kmod_test_util.c tests/vm/kmod_test_life.c \
	tests/vm/kmod_test_cache.c
echo "build-kmod: gpup2p.ko and nvp2p_stub.ko (3 NVIDIA driver flavours) for $KVER"
