#!/bin/bash
# Runs inside the "nopat" guest (a CPU without PAT, topo-nopat.args): there write-combining is UC-
# in the page table and the kernel keeps no memtype list. The cache-mode checks (kmod_test cache,
# guest_cache.sh) must find every BAR pin reported uncached, coherent RAM write-back.
set -u
. tests/vm/guest_lib.sh
chk "no pat in /proc/cpuinfo (QEMU -cpu max,pat=off)" bash -c '! grep -qw pat /proc/cpuinfo'
chk "insmod nvp2p_stub.ko and gpup2p.ko" bash -c "insmod '$VM/stub/nvp2p_stub.ko' && insmod '$VM/kmod/gpup2p.ko'"
"$VM/kmod_test" cache
echo "# kmod_test exit $?"
. tests/vm/guest_cache.sh
chk "dmesg: gpup2p says once that write-combining is uncached here" \
	bash -c '[ "$(dmesg | grep -c "gpup2p: no PAT")" = 1 ]'
chk "rmmod gpup2p nvp2p_stub: every page table given back" \
	bash -c 'rmmod gpup2p && rmmod nvp2p_stub && ! dmesg | grep -q "never given back"'
