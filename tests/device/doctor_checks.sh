#!/bin/bash
# The doctor checks that read NVML state, PCIe links and libcuda, on a GPU machine (device tool, a
# single-GPU kind), beside what nvidia-smi says of the same things, so each finding can be checked by
# hand: persistence, MIG, virtualization, compute mode, ECC row remapping, PCIe replays and link state,
# NVLink state and errors, the fabric, cuInit. Then a snapshot of the machine, the GPU state it
# recorded and doctor on it (tests/device/doctor.sh compares every finding), and the time of static
# doctor with and without driver.cuda_init against nvidia-smi -q (median of 7 alternating runs). Run
# from the repository root with build/gpup2p and build/devlibs carried. Output: $OUT/doctor_checks.log,
# doctor.json, doctor-snap.json, timing.txt.
set -u
. tests/device/lib.sh
device_setup doctor_checks.log
BIN=$PWD/build/gpup2p

echo "== machine"; uname -r; nvidia-smi -L; id -u
echo "== nvidia-smi -q (the fields doctor reads)"
nvidia-smi -q | grep -E -A3 "Persistence Mode|MIG Mode|Virtualization Mode|Compute Mode|Remapped Rows|Replays Since Reset|Replay Number Rollovers|PCIe Generation|Link Width|Fabric$|Pending Page Blacklist|Retired Pages" | head -120
echo "== nvidia-smi nvlink -s"; nvidia-smi nvlink -s | head -30
echo "== nvidia-smi nvlink -e"; nvidia-smi nvlink -e | head -40
echo "== sysfs: link state and AER counters of the GPUs"
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x10de ] || continue
	echo "$(basename "$d"): $(cat "$d/current_link_speed" "$d/max_link_speed" "$d/current_link_width" "$d/max_link_width" 2>/dev/null | tr '\n' ' ')"
	ls "$d" | grep aer || echo "  no aer_dev_* files"
done
echo "== gpup2p doctor"; "$BIN" doctor; rc=$?; echo "rc=$rc"
echo "== gpup2p doctor -v (new checks)"; "$BIN" doctor -v --only driver,gpu,pcie,topo,nvlink
"$BIN" doctor --json --pretty >"$OUT/doctor.json"
check "doctor --json is valid JSON" 'python3 -m json.tool "$OUT/doctor.json" >/dev/null'
check "doctor: no error or warning on this healthy machine (rc $rc)" '[ "$rc" -eq 0 ]'
rm -rf /tmp/snap && "$BIN" -q snapshot --dir /tmp/snap
echo "== recorded gpu facts"; cat /tmp/snap/gpup2p/gpu-facts
check "the snapshot records the GPUs' NVML state" 'grep -q "persistence=" /tmp/snap/gpup2p/gpu-facts'
echo "== gpup2p --root SNAPSHOT doctor -v"; "$BIN" --root /tmp/snap doctor -v --only driver,gpu,pcie,topo,nvlink
"$BIN" --root /tmp/snap doctor --json --pretty >"$OUT/doctor-snap.json"
echo "== timing (s): doctor, doctor --skip driver.cuda_init,p2p, nvidia-smi -q"
for i in 1 2 3 4 5 6 7; do echo "$(wall "$BIN" doctor) $(wall "$BIN" doctor --skip driver.cuda_init,p2p) $(wall nvidia-smi -q)"; done |
	tee "$OUT/timing.txt"
for k in 1 2 3; do sort -n -k$k "$OUT/timing.txt" | sed -n 4p | awk -v k=$k '{print "median column " k ": " $k}'; done
echo "PASS $pass FAIL $fail"
