#!/bin/bash
# Runs inside the "kmod" guest: load the stub and gpup2p.ko, run the driver scenarios, unload with
# pins outstanding, unload. The host then checks the ivshmem backing file (host_kmod.sh).
set -u
VM=${GPUP2P_VM_DIR:-$PWD/build/vm}
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
# both RC WANT OUTPUT PATTERN: the exit code is WANT and the output matches PATTERN
both() { [ "$1" -eq "$2" ] && grep -q -- "$4" <<<"$3"; }

B=$PWD/build/gpup2p
KO=$VM/kmod/gpup2p.ko
out=$("$B" enable --module "$KO" 2>&1); rc=$?
chk "enable before the GPU driver: exit 2, says to load the NVIDIA driver ($out)" \
	both $rc 2 "$out" 'the NVIDIA driver is not loaded (the kernel has no nvidia_p2p_get_pages)'
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$B" enable --module "$KO" 2>&1); rc=$?
chk "enable as nobody: exit 77" both $rc 77 "$out" 'needs root'
chk "insmod nvp2p_stub.ko (nvidia_p2p_* over the ivshmem BAR)" insmod "$VM/stub/nvp2p_stub.ko"
out=$("$B" enable --module "$KO" --dry-run); rc=$?
chk "enable --dry-run: says it would load, loads nothing" bash -c "[ $rc -eq 0 ] && grep -q 'would load' <<<'$out' && [ ! -e /sys/module/gpup2p ]"
out=$("$B" enable --module "$KO"); rc=$?
chk "enable --module: gpup2p.ko loaded through libkmod, /dev/gpup2p ready" both $rc 0 "$out" 'gpup2p.ko loaded'
out=$("$B" enable --module "$KO"); rc=$?
chk "enable again: idempotent" both $rc 0 "$out" 'loaded already'
rm -f /dev/gpup2p
out=$("$B" enable --module "$KO"); rc=$?
chk "enable with the node gone: creates /dev/gpup2p from sysfs, mode 0660" \
	bash -c "[ $rc -eq 0 ] && [ -c /dev/gpup2p ] && [ \"\$(stat -c %a /dev/gpup2p)\" = 660 ]"
out=$("$B" enable --status); rc=$?
chk "enable --status: loaded, pin backend kmod ABI 1.0" bash -c "[ $rc -eq 0 ] && grep -q '^gpup2p  *loaded' <<<'$out' && grep -q 'kmod (/dev/gpup2p, ABI 1.0)' <<<'$out'"
insmod "$VM/peer/nv_peer_mem.ko"
out=$("$B" enable --peermem --module "$KO" 2>&1); rc=$?
chk "enable --peermem beside nv_peer_mem: refused, exit 2" both $rc 2 "$out" 'nv_peer_mem (Mellanox/MOFED) is loaded'
rmmod nv_peer_mem
chk "/dev/gpup2p is a character device, mode 0660" bash -c '[ -c /dev/gpup2p ] && [ "$(stat -c %a /dev/gpup2p)" = 660 ]'
chk "counters under /sys/class/misc/gpup2p (abi 1.0)" bash -c '[ "$(cat /sys/class/misc/gpup2p/abi)" = 1.0 ] && [ "$(cat /sys/class/misc/gpup2p/pins)" = 0 ]'
"$VM/kmod_test"
echo "# kmod_test exit $?"

# the commands end to end: CUDA (the test double, its device memory from the stub) + gpup2p.ko
export GPUP2P_LIBCUDA=$PWD/build/tests/fakecuda/libcuda.so.1 FAKECUDA_STUB=1
out=$("$B" pin --size 1M 2>&1); rc=$?
chk "gpup2p pin --size 1M: 16 pages of 64 KiB, write-combined, timings ($(echo $out | head -c 120))" \
	both $rc 0 "$out" '16 pages of 64 KiB in 1 physically contiguous run(s); mapping write-combined'
out=$("$B" map --size 1M --offset 12K 2>&1); rc=$?
chk "gpup2p map --size 1M --offset 12K: written through the mapping, read back through CUDA, and back" \
	both $rc 0 "$out" 'read through the mapping: .* written by CUDA: ok'
for isa in memcpy sse4.1 avx2; do
	out=$("$B" map --size 100K --isa $isa --json 2>&1); rc=$?
	chk "gpup2p map --isa $isa --json: verified" both $rc 0 "$out" '"verified": true'
done
out=$(FAKECUDA_STUB_FLAGS=2 "$B" pin --size 1M 2>&1); rc=$?
chk "gpup2p pin when BAR1 is exhausted: exit 2, says so" both $rc 2 "$out" 'BAR1 space exhausted'
for k in h2d d2h; do
	out=$("$B" copy $k --via map --size 1M --iters 3 --csv --no-header 2>&1); rc=$?
	chk "gpup2p copy $k --via map: through the gpup2p.ko mapping, checked through CUDA" both $rc 0 "$out" ",mapped,.*,true,"
done
out=$("$B" map --size 64K --offset 5000 2>&1); rc=$?
chk "gpup2p map --offset 5000: usage error 64" both $rc 64 "$out" 'multiple of 4K'
chk "after the commands: nothing pinned, nothing mapped" bash -c '[ "$(cat /sys/class/misc/gpup2p/pins)" = 0 ] && [ "$(cat /sys/class/misc/gpup2p/maps)" = 0 ]'
unset GPUP2P_LIBCUDA FAKECUDA_STUB

# unload with pins outstanding: refused while a process holds them, fine once it is gone
"$VM/kmod_test" hold >"$GPUP2P_VM_WS/hold.out" &
hp=$!
for _ in $(seq 50); do grep -q held "$GPUP2P_VM_WS/hold.out" 2>/dev/null && break; sleep 0.1; done
chk "a process holds a pin" [ "$(cat /sys/class/misc/gpup2p/pins)" = 1 ]
out=$("$B" enable --disable 2>&1); rc=$?
chk "enable --disable with a pin outstanding: refused (in use), exit 2, no BUG" \
	bash -c "[ $rc -eq 2 ] && grep -q 'in use' <<<'$out' && [ -c /dev/gpup2p ]"
kill "$hp"; wait "$hp" 2>/dev/null
chk "the holder is gone: pins released" [ "$(cat /sys/class/misc/gpup2p/pins)" = 0 ]
out=$("$B" enable --disable); rc=$?
chk "enable --disable: unloaded" bash -c "[ $rc -eq 0 ] && grep -q 'gpup2p unloaded' <<<'$out' && [ ! -e /sys/module/gpup2p ]"
out=$("$B" enable --disable); rc=$?
chk "enable --disable again: nothing to do, exit 0" both $rc 0 "$out" 'was not loaded'
chk "rmmod nvp2p_stub: every page table was given back" bash -c 'rmmod nvp2p_stub && ! dmesg | grep -q "never given back"'
chk "dmesg: no BUG, WARNING or Oops" bash -c '! dmesg | grep -qE "BUG:|WARNING:|Oops|Call Trace"'
chk "dmesg: the invalidation was logged, put_pages never followed a callback" \
	bash -c 'dmesg | grep -q "gpup2p: pin .* invalidated" && ! dmesg | grep -q "put_pages after the free callback"'
