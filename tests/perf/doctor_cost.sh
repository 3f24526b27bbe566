#!/bin/bash
# Static doctor's wall time against nvidia-smi -q on a GPU machine (device tool; build/gpup2p and
# build/devlibs carried), alternating, ROUNDS rounds: `gpup2p doctor` (every static check, libcuda's cuInit
# on a thread), `gpup2p doctor --no-cuda`, `nvidia-smi -q`, and the floor a CUDA check cannot go below: a
# bare process's dlopen + cuInit (tests/perf/cuda_cost.c) as it reports it (cuinit) and as the wall time of
# that whole process (cuinit_proc: start, cuInit, and the exit, where libcuda tears down). Then one run with GPUP2P_DOCTOR_TIMING=1
# (where the time went). Also `gpup2p topo` against `nvidia-smi topo -m` (the same view). Medians on
# stdout; raw figures in $OUT/doctor-cost.txt. BIN= another binary; BASE= a second binary (an older
# build) timed in the same rounds, its columns prefixed base_. Run it on an idle machine: seconds after
# GPU work, cuInit takes about half as long (results/oracle-h200x4-2026-11-27f.log, round 1), so a
# first round that follows a bench differs from the rest; the medians keep the idle figure.
set -u
OUT=${OUT:-/tmp/gpup2p-out}
ROUNDS=${ROUNDS:-9}
B=${BIN:-$PWD/build/gpup2p}
mkdir -p "$OUT"
[ -d build/devlibs ] && export LD_LIBRARY_PATH=$PWD/build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cc -O2 -o /tmp/cuda_cost tests/perf/cuda_cost.c -ldl || exit 1
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 ))e-3; }
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
for r in $(seq 1 "$ROUNDS"); do
	t0=$(date +%s%N)
	j=$(/tmp/cuda_cost now)
	cp=$(( ($(date +%s%N) - t0) / 1000 ))e-3
	c=$(python3 -c 'import json,sys; x=json.loads(sys.argv[1]); print(x["dlopen_ms"]+x["cuinit_ms"])' "$j")
	base=
	[ -n "${BASE:-}" ] && base="base_doctor $(ms "$BASE" doctor) base_no_cuda $(ms "$BASE" doctor --no-cuda) \
base_topo $(ms "$BASE" topo)"
	echo "doctor $(ms "$B" doctor) no_cuda $(ms "$B" doctor --no-cuda) smi $(ms nvidia-smi -q) cuinit $c cuinit_proc $cp" \
		"topo $(ms "$B" topo) smi_topo $(ms nvidia-smi topo -m) $base"
done | tee "$OUT/doctor-cost.txt"
python3 - "$OUT/doctor-cost.txt" <<'PY'
import statistics, sys
cols = {}
for line in open(sys.argv[1]):
    f = line.split()
    for k, v in zip(f[::2], f[1::2]):
        cols.setdefault(k, []).append(float(v))
m = {k: statistics.median(v) for k, v in cols.items()}
print("medians (ms) over %d rounds: %s" % (len(cols["doctor"]), ", ".join("%s %.1f" % kv for kv in m.items())))
print("doctor vs nvidia-smi -q: %.2fx; doctor --no-cuda vs nvidia-smi -q: %.2fx; cuInit floor vs nvidia-smi -q: %.2fx"
      % (m["doctor"] / m["smi"], m["no_cuda"] / m["smi"], m["cuinit"] / m["smi"]))
print("topo vs nvidia-smi topo -m: %.2fx; doctor - cuInit floor: %.1f ms; doctor - a cuInit process: %.1f ms"
      % (m["topo"] / m["smi_topo"], m["doctor"] - m["cuinit"], m["doctor"] - m["cuinit_proc"]))
PY
GPUP2P_DOCTOR_TIMING=1 "$B" doctor -q 2>&1 >/dev/null | sort -k2 -g -r | head -8; GPUP2P_DOCTOR_TIMING=1 "$B" doctor -q 2>&1 >/dev/null | grep "^doctor timing"
