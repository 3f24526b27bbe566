#!/bin/bash
# The foundation's checks on a GPU machine (device tool, kind nvidia-h200-x2), run from the
# repository root with the x86-64 build carried in build/ (and its shared libraries in
# build/devlibs). Compares gpup2p topo/bar live with nvidia-smi, checks that a snapshot
# replays identically, and times gpup2p topo against nvidia-smi topo -m in the same run.
# Output: $OUT/foundation.log (and the snapshot archive).
set -u
. tests/device/lib.sh
device_setup foundation.log
BIN=$PWD/build/gpup2p

echo "== machine"; uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,pci.bus_id --format=csv,noheader
id -u
echo "== nvidia-smi topo -m"; nvidia-smi topo -m | tee "$OUT/nvsmi-topo.txt"
echo "== gpup2p topo"; "$BIN" topo | tee "$OUT/topo.txt"; echo "rc=${PIPESTATUS[0]}"
echo "== gpup2p topo --json"; "$BIN" topo --json | tee "$OUT/topo.json"
echo "== gpup2p topo --tree"; "$BIN" topo --tree --all
echo "== gpup2p bar"; "$BIN" bar | tee "$OUT/bar.txt"
echo "== gpup2p bar --csv"; "$BIN" bar --csv | tee "$OUT/bar.csv"
echo "== nvidia-smi -q (BAR1, FB)"
nvidia-smi -q -d MEMORY | grep -A1 -E "FB Memory Usage|BAR1 Memory Usage" | tee "$OUT/nvsmi-mem.txt"

# matrix codes: gpup2p vs nvidia-smi (GPU rows, GPU columns)
ngpu=$(nvidia-smi -L | wc -l)
codes() { grep -E '^GPU[0-9]' | awk -F'\t' -v n="$1" '{ s=$1; for (i=2;i<=n+1;i++) { gsub(/ /,"",$i); s=s" "$i } print s }'; }
codes "$ngpu" <"$OUT/nvsmi-topo.txt" >"$OUT/codes-nvsmi"
"$BIN" -q topo | codes "$ngpu" >"$OUT/codes-gpup2p"
check "topo matrix equals nvidia-smi topo -m" 'diff "$OUT/codes-nvsmi" "$OUT/codes-gpup2p"'
cpu_n=$(grep -E '^GPU0' "$OUT/nvsmi-topo.txt" | cut -f$((ngpu+2)))
cpu_g=$("$BIN" -q topo | grep -E '^GPU0' | cut -f$((ngpu+2)))
check "CPU affinity equals nvidia-smi ($cpu_n / $cpu_g)" '[ "$cpu_n" = "$cpu_g" ]'
check "topo --json is valid JSON" 'python3 -m json.tool "$OUT/topo.json" >/dev/null'
check "topo --json: NVLink checked" 'grep -q "\"nvlink_checked\": true" "$OUT/topo.json"'

# BAR1 and FB totals against bar --csv (aperture_size, vram)
i=0
while IFS=, read -r name bdf apbar apsize vram verdict rest; do
	[ "$name" = name ] && continue
	fb=$(nvidia-smi -i "$i" --query-gpu=memory.total --format=csv,noheader,nounits | tr -d ' ')
	b1=$(nvidia-smi -i "$i" -q -d MEMORY | grep -A1 "BAR1 Memory Usage" | awk '/Total/ {print $3}')
	check "$name BAR$apbar $apsize = nvidia-smi BAR1 $b1 MiB" '[ "$apsize" = "$((b1 * 1048576))" ]'
	check "$name VRAM $vram = nvidia-smi FB $fb MiB" '[ "$((vram / 1048576))" = "$fb" ]'
	check "$name verdict large BAR" '[ "$verdict" = "large BAR" ]'
	i=$((i + 1))
done <"$OUT/bar.csv"

# snapshot -> replay prints exactly what the live run printed
rm -rf /tmp/snap && mkdir -p /tmp/snap
"$BIN" snapshot "$OUT/h200-live.tar.gz" && tar -C /tmp/snap -xzf "$OUT/h200-live.tar.gz"
for args in "topo" "topo --json" "topo --tree --all" "topo --csv" "bar" "bar --all --json" "bar --csv"; do
	# shellcheck disable=SC2086
	"$BIN" $args >/tmp/live.out 2>&1
	# shellcheck disable=SC2086
	"$BIN" --root /tmp/snap/h200-live $args >/tmp/replay.out 2>&1
	check "replay identical: $args" 'cmp -s /tmp/live.out /tmp/replay.out || { diff /tmp/live.out /tmp/replay.out | head; false; }'
done

# timing: 30 runs each, alternating, wall time per run
python3 - "$BIN" <<'PY'
import subprocess, sys, time, statistics
b = sys.argv[1]
cmds = {"gpup2p topo": [b, "topo"], "nvidia-smi topo -m": ["nvidia-smi", "topo", "-m"]}
t = {k: [] for k in cmds}
for _ in range(30):
    for k, c in cmds.items():
        s = time.perf_counter(); subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); t[k].append(time.perf_counter() - s)
for k, v in t.items():
    v.sort()
    print("TIME %-20s min %.4f s  median %.4f s  max %.4f s  (n=30)" % (k, v[0], statistics.median(v), v[-1]))
PY
echo "== $pass passed, $fail failed"
