#!/bin/bash
# Issue 16's run on a machine with two GPUs (device tool, kind nvidia-h200-x2), in one command:
#   here, once:  bash tests/perf/two_gpu.sh prepare   (nvbandwidth's source and Boost's .debs into build/nvb)
#   there:       bash tests/perf/two_gpu.sh [doctor] [sm] [peer]   (default all three; carry build/gpup2p,
#                build/devlibs and build/nvb; $OUT comes back)
# doctor: tests/device/doctor.sh (doctor, -v, --json, snapshot + doctor --root on it = the live static
#         findings, timing) and tests/device/doctor_active.sh (doctor --active: p2p.verify on every pair,
#         both directions, p2p.bandwidth, nvlink.*);
# sm:     tests/perf/sm_compare.sh (builds nvbandwidth there; host<->GPU and device-local SM/CE and the
#         host chase against nvbandwidth, GPU0);
# peer:   tests/perf/peer_compare.sh (peer SM and CE copies, bidirectional, peer chase latency against
#         nvbandwidth, every ordered pair).
# The tables and the doctor logs under $OUT, everything else (JSON, raw rounds, snapshot info) in
# $OUT/two_gpu-logs.tgz; a summary line per part; exit 1 when a part failed. ROUNDS (3) for the
# comparisons. About 6-8 minutes in all on 2x H200 (nvbandwidth's build ~1 min).
set -u
OUT=${OUT:-/tmp/gpup2p-out}
export OUT ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"

if [ "${1:-}" = prepare ]; then
	# nvbandwidth v0.8 from the fetch tool's mirror (or NVB_GIT), and the Boost program_options .debs that
	# sm_compare.sh unpacks where the machine's image lacks them
	git_dir=${NVB_GIT:-/work/.mirror/NVIDIA+nvbandwidth/repo}
	[ -d "$git_dir" ] || { echo "two_gpu prepare: no nvbandwidth git directory at $git_dir (fetch github:NVIDIA/nvbandwidth, or set NVB_GIT)"; exit 1; }
	rm -rf build/nvb && mkdir -p build/nvb/src
	git --git-dir="$git_dir" archive "${NVB_REV:-HEAD}" | tar -x -C build/nvb/src || exit 1
	(cd build/nvb && apt-get download libboost1.74-dev libboost-program-options1.74-dev \
		libboost-program-options1.74.0) || { echo "two_gpu prepare: apt-get download of Boost failed (apt-get update first?)"; exit 1; }
	echo "build/nvb: nvbandwidth $(git --git-dir="$git_dir" describe --tags --always "${NVB_REV:-HEAD}"), $(du -sh build/nvb | cut -f1)"
	exit 0
fi

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
