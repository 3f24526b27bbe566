#!/bin/bash
# doctor --expect and report --baseline on a live GPU machine (device tool), from the repository root
# with build/gpup2p and build/devlibs carried: the live doctor --json's facts against nvidia-smi, a
# baseline derived from them that the machine meets, the same baseline with one more GPU and more
# NVLinks (planted in the file: the machine falls short), and a snapshot judged offline as live.
# Output: $OUT/doctor_expect.log and the files compared.
set -u
. tests/device/lib.sh
device_setup doctor_expect.log
BIN=$PWD/build/gpup2p

echo "== machine"; uname -r; nvidia-smi -L
nvidia-smi --query-gpu=pci.bus_id,name,pcie.link.gen.max,pcie.link.width.current --format=csv | tee "$OUT/nvsmi.csv"
nvidia-smi nvlink -s | grep -c 'GB/s' | sed 's/^/nvidia-smi active NVLinks: /'
"$BIN" doctor --json --no-cuda >"$OUT/live.json"; echo "doctor rc=$?"
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["facts"], indent=1))' "$OUT/live.json"
ngpu=$(nvidia-smi -L | wc -l)
nfacts=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["facts"]["gpus"]))' "$OUT/live.json")
check "facts: $nfacts GPUs, nvidia-smi lists $ngpu" '[ "$nfacts" = "$ngpu" ]'
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
model=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["facts"]["gpus"][0]["model"])' "$OUT/live.json")
check "facts: model \"$model\", nvidia-smi names \"$name\"" '[ "$model" = "$name" ]'

"$BIN" report --baseline "$OUT/live.json" >"$OUT/node.expect"; echo "report rc=$?"
cat "$OUT/node.expect"
"$BIN" doctor --no-cuda --expect "$OUT/node.expect" --only expect -v | tee "$OUT/expect-live.txt"
rc=${PIPESTATUS[0]}
check "live: the machine meets its own baseline (exit $rc)" '[ $rc = 0 ] && grep -q "summary: 0 errors, 0 warnings" "$OUT/expect-live.txt"'

grep -v -e '^gpu.count' -e '^gpu.nvlinks' "$OUT/node.expect" >"$OUT/more.expect"
printf 'gpu.count = %d\ngpu.nvlinks = 64\n' $((ngpu + 1)) >>"$OUT/more.expect"
"$BIN" doctor --no-cuda --expect "$OUT/more.expect" --only expect --json >"$OUT/more.json"
rc=$?
ids=$(python3 -c 'import json,sys; print(" ".join(sorted({f["id"] for f in json.load(open(sys.argv[1]))["findings"] if f["severity"] == "error"})))' "$OUT/more.json")
echo "errors: $ids"
check "live: one GPU more and 64 NVLinks expected: expect.gpu_count and expect.nvlinks err (exit $rc)" \
	'[ $rc = 2 ] && [ "$ids" = "expect.gpu_count expect.nvlinks" ]'

"$BIN" snapshot --dir "$OUT/snap" >/dev/null
"$BIN" --root "$OUT/snap" doctor --expect "$OUT/node.expect" --only expect >"$OUT/expect-snap.txt"
rc=$?
tail -1 "$OUT/expect-snap.txt"
check "the snapshot meets the live baseline (exit $rc)" '[ $rc = 0 ] && grep -q "summary: 0 errors, 0 warnings" "$OUT/expect-snap.txt"'
echo "== $pass passed, $fail failed"
rm -rf "$OUT/snap"
[ "$fail" = 0 ]
