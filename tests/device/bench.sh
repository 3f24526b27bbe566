#!/bin/bash
# The copy/bench checks on the GPU machine (device tool, kind nvidia-h200-x2), from the repository root
# with build/ carried (build/gpup2p + build/devlibs). Runs copy --all-pairs, every copy path, bench all
# in every format, and checks the values are sane: every result verified, bandwidth > 0, JSON valid,
# CSV/JSONL rows match, thresholds and exit codes behave. Log: $OUT/bench-device.log.
set -u
. tests/device/lib.sh
device_setup bench-device.log
B=$PWD/build/gpup2p

nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1
"$B" copy --all-pairs --size 256M --iters 5; rc=$?
check "copy --all-pairs: exit 0" "[ $rc -eq 0 ]"
for p in "h2d" "h2d --pageable" "d2h" "d2h --pageable" "d2d" "peer" "peer --gpu 1 --to 0"; do
	"$B" copy $p --size 100000007 --iters 3 -q >/dev/null; rc=$?   # odd size: tails checked too
	check "copy $p (odd size): exit 0" "[ $rc -eq 0 ]"
done
"$B" bench all --size 16M --iters 5 --reps 2 --json >"$OUT/bench.json"; rc=$?
check "bench all --json: exit 0" "[ $rc -eq 0 ]"
check "bench JSON: valid, every measured row verified, bandwidth > 0" "python3 -c '
import json,sys; d=json.load(open(\"$OUT/bench.json\")); r=d[\"results\"]
assert d[\"schema\"]==1 and len(d[\"gpus\"])>=2 and len(r)>=20
for x in r:
    assert x[\"skipped\"] is None and x[\"verified\"] is True, x
    assert (x[\"gbps\"] or 0)>0 or x[\"mode\"]==\"latency\", x
    assert x[\"mode\"]!=\"latency\" or (x[\"us\"]>0 and x[\"host_us\"]>0), x
print(len(r), \"rows\")'"
"$B" bench all --size 16M --iters 5 --reps 2 --csv >"$OUT/bench.csv"; rc=$?
check "bench all --csv: exit 0, header + one line per JSON row" \
	"[ $rc -eq 0 ] && [ \$((\$(wc -l <$OUT/bench.csv) - 1)) -eq \$(python3 -c 'import json;print(len(json.load(open(\"$OUT/bench.json\"))[\"results\"]))') ]"
"$B" bench all --size 16M --iters 5 --reps 2 --jsonl >"$OUT/bench.jsonl"; rc=$?
check "bench all --jsonl: exit 0, every line a JSON object with schema 1" \
	"[ $rc -eq 0 ] && python3 -c 'import json,sys; [json.loads(l)[\"schema\"]==1 or sys.exit(1) for l in open(\"$OUT/bench.jsonl\")]'"
"$B" bench all --size 64M --reps 3 | tee "$OUT/bench.txt"
"$B" bench h2d --pinned --size 64M --min-bw h2d=1000 -q >/dev/null 2>&1; rc=$?
check "--min-bw h2d=1000 (unreachable): exit 1" "[ $rc -eq 1 ]"
"$B" bench h2d --pinned --size 64M --min-bw 1 -q >/dev/null; rc=$?
check "--min-bw 1: exit 0" "[ $rc -eq 0 ]"
"$B" bench --min 4K --max 64M --factor 4 p2p --gpu 0 --gpu 1 --reps 2 --csv >"$OUT/sweep.csv"; rc=$?
check "sweep 4K..64M x4: exit 0, 8 sizes x 8 rows" "[ $rc -eq 0 ] && [ \$(( \$(wc -l <$OUT/sweep.csv) - 1 )) -eq 64 ]"
"$B" bench h2d --pinned --numa 0 --size 64M --json >"$OUT/numa.json"; rc=$?
check "--numa 0: host memory reported on node 0" \
	"[ $rc -eq 0 ] && python3 -c 'import json; assert all(x[\"host_numa\"]==0 for x in json.load(open(\"$OUT/numa.json\"))[\"results\"])'"
"$B" copy peer --gpu 5 2>&1 | tee "$OUT/nogpu.txt"; rc=${PIPESTATUS[0]}
check "copy --gpu 5: exit 64, names the GPUs" "[ $rc -eq 64 ] && grep -q 'no GPU5' $OUT/nogpu.txt"
GPUP2P_LIBCUDA=/nonexistent/libcuda.so.1 "$B" bench 2>&1 | tee "$OUT/nocuda.txt"; rc=${PIPESTATUS[0]}
check "no libcuda: exit 69 'CUDA not available'" "[ $rc -eq 69 ] && grep -q 'CUDA not available' $OUT/nocuda.txt"
CUDA_VISIBLE_DEVICES= "$B" bench 2>&1 | tee "$OUT/novis.txt"; rc=${PIPESTATUS[0]}
check "no visible GPU: exit 69" "[ $rc -eq 69 ]"
echo "$pass passed, $fail failed"
