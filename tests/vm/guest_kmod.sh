#!/bin/bash
# Runs inside the "kmod" guest: load the stub and gpup2p.ko, run the driver scenarios, unload with
# pins outstanding, unload. The host then checks the ivshmem backing file (host_kmod.sh).
set -u
. tests/vm/guest_lib.sh
KO=$VM/kmod/gpup2p.ko
out=$("$B" enable --module "$KO" 2>&1); rc=$?
chk "enable before the GPU driver: exit 69, says to load module nvidia ($out)" \
	both $rc 69 "$out" 'the NVIDIA driver (module nvidia) is not loaded .*modprobe nvidia'
# as nobody: the binary and the module copied where nobody may read them (the clone may be in a
# 0700 directory, as an installed gpup2p is not)
pub=$(mktemp -d)
chmod 0755 "$pub"
cp "$B" "$KO" "$pub/"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$pub/gpup2p" enable --module "$pub/gpup2p.ko" 2>&1); rc=$?
chk "enable as nobody: exit 77 ($out)" both $rc 77 "$out" 'needs root'
rm -rf "$pub"
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
. tests/vm/guest_cache.sh
export GPUP2P_LIBCUDA=$PWD/build/tests/fakecuda/libcuda.so.1 FAKECUDA_STUB=1
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

# pin ids are reused once free: a small id space (module parameter) shows it
chk "insmod gpup2p.ko pin_ids=0 or 8388608 (2^23): refused" \
	bash -c "! insmod '$KO' pin_ids=0 2>/dev/null && ! insmod '$KO' pin_ids=8388608 2>/dev/null"
if insmod "$KO" pin_ids=4; then
	"$VM/kmod_test" ids 4
	rmmod gpup2p
else
	nok "insmod gpup2p.ko pin_ids=4"
fi
chk "rmmod nvp2p_stub: every page table was given back" bash -c 'rmmod nvp2p_stub && ! dmesg | grep -q "never given back"'

# NVIDIA drivers without nvidia_p2p_get_pages_persistent: the stub built as one of them (stub-none),
# gpup2p.ko built against it (kmod-none, which refuses persistent pins) and against the default
export GPUP2P_LIBCUDA=$PWD/build/tests/fakecuda/libcuda.so.1 FAKECUDA_STUB=1
insmod "$VM/stub-none/nvp2p_stub.ko" || nok "insmod the stub without persistent pins"
out=$("$B" enable --module "$KO" 2>&1); rc=$?
chk "enable of a gpup2p.ko built for a driver with persistent pins, on one without: exit 69, names the symbol ($out)" \
	both $rc 69 "$out" 'NVIDIA driver (module nvidia) lacks nvidia_p2p_get_pages_persistent, nvidia_p2p_put_pages_persistent'
out=$("$B" enable --module "$VM/kmod-none/gpup2p.ko" 2>&1); rc=$?
chk "enable of the gpup2p.ko built against it: loaded" both $rc 0 "$out" 'gpup2p.ko loaded'
"$VM/kmod_test" persistent no
out=$("$B" pin --size 1M --persistent 2>&1); rc=$?
chk "gpup2p pin --persistent there: exit 69, one line saying why ($out)" \
	both $rc 69 "$(printf '%s\n' "$out" | wc -l):$out" '^1:gpup2p: persistent pins are not available: .* pin without --persistent$'
out=$("$B" pin --size 1M 2>&1); rc=$?
chk "gpup2p pin (with a free callback) there: exit 0" both $rc 0 "$out" '16 pages of 64 KiB'
rmmod gpup2p nvp2p_stub
# drivers 515-530: a NULL free callback asks for persistent pages (nvidia_p2p_cap_persistent_pages)
if insmod "$VM/stub-nullcb/nvp2p_stub.ko" && insmod "$VM/kmod-nullcb/gpup2p.ko"; then
	"$VM/kmod_test" persistent yes
	out=$("$B" pin --size 1M --persistent 2>&1); rc=$?
	chk "gpup2p pin --persistent on a 515-530 driver: exit 0" both $rc 0 "$out" '16 pages of 64 KiB'
	rmmod gpup2p
	chk "rmmod the 515-530 stub: every page table was given back" bash -c 'rmmod nvp2p_stub && ! dmesg | grep -q "never given back"'
else
	nok "insmod the 515-530 stub and the gpup2p.ko built against it"
fi
unset GPUP2P_LIBCUDA FAKECUDA_STUB

chk "dmesg: no BUG, WARNING or Oops" bash -c '! dmesg | grep -qE "BUG:|WARNING:|Oops|Call Trace"'
chk "dmesg: the invalidation was logged, put_pages never followed a callback, no refused call" \
	bash -c 'dmesg | grep -q "gpup2p: pin .* invalidated" && ! dmesg | grep -qE "put_pages after the free callback|the NVIDIA driver refuses this"'
