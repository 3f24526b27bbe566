#!/bin/bash
# The pin/map side on the GPU machine (device tool, kind nvidia-h200-x2), which cannot load modules:
# with no gpup2p.ko, map tries CUDA's dma-buf export and reports why it cannot map it; the copy
# variants all run on that CPU (AVX-512, MOVDIR64B); enable --status and --dry-run. Carry build/gpup2p,
# build/devlibs (libpci, libkmod, pci.ids) and build/tests/test_wccopy. Log: $OUT/pin-device.log.
set -u
. tests/device/lib.sh
device_setup pin-device.log
B=build/gpup2p
grep -m1 flags /proc/cpuinfo | grep -o 'movdir64b\|avx512f\|avx2' | sort -u | tr '\n' ' '; echo
build/tests/test_wccopy
echo "== map without gpup2p.ko"; "$B" map; echo "rc=$?"
echo "== pin without gpup2p.ko"; "$B" pin; echo "rc=$?"
echo "== enable --status"; "$B" enable --status; echo "rc=$?"
echo "== enable --dry-run --peermem"; "$B" enable --dry-run --peermem; echo "rc=$?"
echo "== kallsyms"; grep -c ' nvidia_p2p_get_pages' /proc/kallsyms
