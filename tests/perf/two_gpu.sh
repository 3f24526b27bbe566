#!/bin/bash
# Issue 16's run on a machine with two GPUs (device tool, kind nvidia-h200-x2), in one command:
#   NVBANDWIDTH=/path/to/nvbandwidth bash tests/perf/two_gpu.sh [doctor] [sm] [peer]   (default all
#   three; carry build/gpup2p and build/devlibs; nvbandwidth is built outside the repository)
# doctor: tests/device/doctor.sh (doctor, -v, --json, snapshot + doctor --root on it = the live static
#         findings, timing) and tests/device/doctor_active.sh (doctor --active: p2p.verify on every pair,
#         both directions, p2p.bandwidth, nvlink.*);
# sm:     tests/perf/sm_compare.sh (host<->GPU and device-local SM/CE and the
#         host chase against nvbandwidth, GPU0);
# peer:   tests/perf/peer_compare.sh (peer SM and CE copies, bidirectional, peer chase latency against
#         nvbandwidth, every ordered pair).
# The tables and the doctor logs under $OUT, everything else (JSON, raw rounds, snapshot info) in
# $OUT/two_gpu-logs.tgz; a summary line per part; exit 1 when a part failed. ROUNDS (3) for the
# comparisons. About 6-8 minutes in all on 2x H200.
set -u
OUT=${OUT:-/tmp/gpup2p-out}
export OUT ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"


# the logs are packed and the rest of $OUT removed at the end: start from an empty one
[ -z "$(ls -A "$OUT")" ] || { echo "two_gpu: $OUT is not empty: give an empty OUT (the run packs and removes what it wrote)"; exit 64; }
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(doctor sm peer)
nvidia-smi -L
nvidia-smi topo -m >"$OUT/nvidia-smi-topo.txt" 2>&1
cat "$OUT/nvidia-smi-topo.txt"
n=$(nvidia-smi -L | grep -c '^GPU ')
[ "$n" -ge 2 ] || echo "two_gpu: only $n GPU(s) here: the peer rows and pair checks have nothing to measure"
fail=0
summary=()
for p in "${parts[@]}"; do
	echo "######## $p at ${SECONDS}s"
	case $p in
	doctor) bash tests/device/doctor.sh >/dev/null 2>&1; a=$?
		bash tests/device/doctor_active.sh >/dev/null 2>&1; b=$?
		grep -E '^(PASS|FAIL)' "$OUT/doctor.log" "$OUT/doctor_active.log"
		rc=$(( a || b )); ! grep -q "^FAIL" "$OUT/doctor.log" "$OUT/doctor_active.log" || rc=1 ;;
	sm) bash tests/perf/sm_compare.sh >"$OUT/sm_compare.txt" 2>&1; rc=$?; tail -n 14 "$OUT/sm_compare.txt" ;;
	peer) bash tests/perf/peer_compare.sh >"$OUT/peer_compare.txt" 2>&1; rc=$?; cat "$OUT/peer_compare.txt" ;;
	*) echo "two_gpu: unknown part '$p' (doctor, sm, peer, or prepare alone)"; exit 64 ;;
	esac
	summary+=("$p: exit $rc")
	[ "$rc" -eq 0 ] || fail=1
done
echo "######## summary at ${SECONDS}s: ${summary[*]}"
# the device tool brings back a few files only: every log and raw result in one archive, the tables beside it
(cd "$OUT" && tar czf /tmp/two_gpu-logs.tgz --exclude two_gpu-logs.tgz . && mv /tmp/two_gpu-logs.tgz . &&
	find . -mindepth 1 -maxdepth 1 ! -name two_gpu-logs.tgz ! -name sm_compare.txt ! -name peer_compare.txt \
		! -name doctor.log ! -name doctor_active.log -exec rm -rf {} +)
exit $fail
