#!/bin/bash
# Runs inside the "kmod" guest: load the stub and gpup2p.ko, run the driver scenarios, unload with
# pins outstanding, unload. The host then checks the ivshmem backing file (host_kmod.sh).
set -u
VM=$PWD/build/vm
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

chk "insmod nvp2p_stub.ko (nvidia_p2p_* over the ivshmem BAR)" insmod "$VM/stub/nvp2p_stub.ko"
chk "insmod gpup2p.ko" insmod "$VM/kmod/gpup2p.ko"
chk "/dev/gpup2p is a character device, mode 0660" bash -c '[ -c /dev/gpup2p ] && [ "$(stat -c %a /dev/gpup2p)" = 660 ]'
chk "counters under /sys/class/misc/gpup2p (abi 1.0)" bash -c '[ "$(cat /sys/class/misc/gpup2p/abi)" = 1.0 ] && [ "$(cat /sys/class/misc/gpup2p/pins)" = 0 ]'
"$VM/kmod_test"
echo "# kmod_test exit $?"

# unload with pins outstanding: refused while a process holds them, fine once it is gone
"$VM/kmod_test" hold >"$GPUP2P_VM_WS/hold.out" &
hp=$!
for _ in $(seq 50); do grep -q held "$GPUP2P_VM_WS/hold.out" 2>/dev/null && break; sleep 0.1; done
chk "a process holds a pin" [ "$(cat /sys/class/misc/gpup2p/pins)" = 1 ]
rmmod gpup2p 2>/dev/null; rc=$?
chk "rmmod with a pin outstanding is refused (module in use), no BUG" bash -c "[ $rc -ne 0 ] && [ -c /dev/gpup2p ]"
kill "$hp"; wait "$hp" 2>/dev/null
chk "the holder is gone: pins released" [ "$(cat /sys/class/misc/gpup2p/pins)" = 0 ]
chk "rmmod gpup2p" rmmod gpup2p
chk "rmmod nvp2p_stub: every page table was given back" bash -c 'rmmod nvp2p_stub && ! dmesg | grep -q "never given back"'
chk "dmesg: no BUG, WARNING or Oops" bash -c '! dmesg | grep -qE "BUG:|WARNING:|Oops|Call Trace"'
chk "dmesg: the invalidation was logged, put_pages never followed a callback" \
	bash -c 'dmesg | grep -q "gpup2p: pin .* invalidated" && ! dmesg | grep -q "put_pages after the free callback"'
