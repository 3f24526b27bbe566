# shellcheck shell=bash
# Sourced by guest_kmod.sh and guest_nopat.sh (guest_lib.sh sourced; nvp2p_stub.ko and gpup2p.ko
# loaded): the mode `gpup2p pin` reports is the one the kernel gave the pages. fakecuda maps BAR2
# through resource2 (uncached) while the command runs, and a pin made then gets what that mapping
# leaves: `kmod_test bar-mode` reads it in the kernel's PAT memtype list (no PAT: uncached).
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
pat=off
[ -r /sys/kernel/debug/x86/pat_memtype_list ] && pat=on
echo "# PAT $pat; cpu flag pat: $(grep -m1 -cw pat /proc/cpuinfo); dmesg: $(dmesg | grep -m2 'x86/PAT' | sed 's/^\[[ .0-9]*\] //' | tr '\n' ';')"
export GPUP2P_LIBCUDA=$PWD/build/tests/fakecuda/libcuda.so.1 FAKECUDA_STUB=1
want_uc=$("$VM/kmod_test" bar-mode resource2)
out=$("$B" pin --size 1M 2>&1); rc=$?
chk "gpup2p pin --size 1M beside an uncached BAR mapping: mapping $want_uc, as the kernel says ($(echo $out | head -c 100))" \
	both $rc 0 "$out" "16 pages of 64 KiB in 1 physically contiguous run(s); mapping $want_uc\$"
# BAR2 held write-combined first (resource2_wc, which the kernel offers only with PAT): fakecuda's
# mapping and the pin inherit that
hb=
if [ $pat = on ]; then
	"$VM/kmod_test" hold-bar resource2_wc >"$GPUP2P_VM_WS/holdbar.out" &
	hb=$!
	for _ in $(seq 50); do grep -q held "$GPUP2P_VM_WS/holdbar.out" 2>/dev/null && break; sleep 0.1; done
	chk "BAR2 held through resource2_wc" grep -q held "$GPUP2P_VM_WS/holdbar.out"
fi
want_wc=$("$VM/kmod_test" bar-mode resource2)
out=$("$B" pin --size 1M 2>&1); rc=$?
chk "gpup2p pin --size 1M with BAR2 held write-combined (PAT $pat): mapping $want_wc, as the kernel says" \
	both $rc 0 "$out" "mapping $want_wc\$"
[ -z "$hb" ] || { kill "$hb"; wait "$hb" 2>/dev/null; }
if [ $pat = on ]; then
	chk "PAT on: both answers exercised (uncached, then write-combined)" \
		[ "$want_uc/$want_wc" = uncached/write-combined ]
else
	chk "PAT off: write-combining is uncached (UC-) whatever else maps the BAR" \
		[ "$want_uc/$want_wc" = uncached/uncached ]
fi
unset GPUP2P_LIBCUDA FAKECUDA_STUB
