#!/bin/bash
# gpup2p's SM copies and pointer-chase latency, and its copy-engine figures, against nvbandwidth's on
# the same GPU, side by side in one run, alternating the two tools (ROUNDS rounds each).
# Needs the GPU machine (device tool; one GPU is enough) with nvcc and cmake, and these carried:
#   build/gpup2p, build/devlibs (libpci, libkmod, pci.ids); NVBANDWIDTH=path to an nvbandwidth binary
#   built outside the repository (the repository builds no third-party source).
# Checks SM copies of odd
# sizes on the real GPU, then measures. Prints a table of medians, ratios gpup2p/nvbandwidth and goals
# (bandwidth >= 1.00x, latency within 5%); raw results under $OUT/perf/. Exit 1 when a goal is missed
# or the data-checked copies or the chase failed.
set -u
OUT=${OUT:-/tmp/gpup2p-out}
ROUNDS=${ROUNDS:-2}
SIZE_MIB=${SIZE_MIB:-512}          # nvbandwidth's default buffer; its loop count is 16
B=$PWD/build/gpup2p
P=$OUT/perf
mkdir -p "$P"
[ -d build/devlibs ] && export LD_LIBRARY_PATH=$PWD/build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f /usr/share/misc/pci.ids ] || [ -f /usr/share/hwdata/pci.ids ] || export GPUP2P_PCI_IDS=$PWD/build/devlibs/pci.ids
export NO_COLOR=1 PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader

# nvbandwidth, built outside the repository: its path in NVBANDWIDTH
NVB=${NVBANDWIDTH:-}
[ -x "$NVB" ] || echo "sm_compare: no NVBANDWIDTH=path to an nvbandwidth binary: gpup2p only" >&2

# SM copies on the real GPU: odd sizes (the 16-byte words, the 8-word rounds and the byte tail), data
# checked; the chase in both chain orders. Exit 0 wanted.
"$B" bench h2d d2h d2d --sm --min 1 --max 3M --factor 5.3 --iters 2 --reps 2 -q >"$P/sm-sizes.txt" 2>&1
rc_sizes=$?
echo "SM copies of 10 odd sizes 1 B..3 MiB, h2d/d2h/d2d, data checked: exit $rc_sizes"
"$B" bench latency --sm --random --seed 42 --iters 20000 --reps 3 --jsonl >"$P/chase-random.jsonl" 2>&1
rc_chase=$?
echo "random-order chase: exit $rc_chase"

tests=(host_to_device_memcpy_sm device_to_host_memcpy_sm device_local_copy host_device_latency_sm
	host_to_device_memcpy_ce device_to_host_memcpy_ce)
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r at ${SECONDS}s" >&2
	"$B" bench h2d d2h d2d --engine both --pinned --size "${SIZE_MIB}M" --iters 16 --reps 5 --jsonl \
		>"$P/g-bw-$r.jsonl" || echo "gpup2p bandwidth run $r: exit $?"
	"$B" bench latency --sm --reps 5 --jsonl >"$P/g-lat-$r.jsonl" || echo "gpup2p latency run $r: exit $?"
	[ -x "$NVB" ] && { "$NVB" -b "$SIZE_MIB" -t "${tests[@]}" >"$P/nvb-$r.txt" 2>&1 ||
		echo "nvbandwidth run $r: exit $?"; }
done

python3 - "$P" "$ROUNDS" "$SIZE_MIB" "$rc_sizes" "$rc_chase" <<'PY'
import json, re, statistics, sys
P, rounds, size = sys.argv[1], int(sys.argv[2]), sys.argv[3]
g, n = {}, {}
def put(d, k, v):
    d.setdefault(k, []).append(v)
for r in range(1, rounds + 1):
    for f in ("bw", "lat"):
        try:
            lines = open(f"{P}/g-{f}-{r}.jsonl").read().splitlines()
        except OSError:
            continue
        for line in lines:
            x = json.loads(line)
            assert x["verified"] is not False, x
            if x["src"] not in ("GPU0", "host") or x["dst"] not in ("GPU0", "host"):
                continue
            if x["mode"] == "latency":
                put(g, "lat_host_sm", x["us"] * 1e3)
            else:
                put(g, f'{x["mode"]}_{x["engine"]}', x["gbps"])
    try:
        text = open(f"{P}/nvb-{r}.txt").read()
    except OSError:
        continue
    # each test: "Running NAME." then a matrix whose row "0" starts with GPU0's value (one column per
    # GPU; the header of column numbers has no decimals: with two GPUs it is "0  1", not a value)
    for name, body in re.findall(r"Running (\w+)\.\n(.*?)(?=\nRunning |\Z)", text, re.S):
        m = re.search(r"^\s*0\s+([0-9]+\.[0-9]+)", body, re.M)
        if m:
            put(n, name, float(m.group(1)))
rows = [
    ("h2d SM copy (GB/s)", "h2d_sm", "host_to_device_memcpy_sm", "bw"),
    ("d2h SM copy (GB/s)", "d2h_sm", "device_to_host_memcpy_sm", "bw"),
    ("device-local SM copy (GB/s)", "d2d_sm", "device_local_copy", "bw"),
    ("device-local CE copy (GB/s)", "d2d_ce", "device_local_copy", "bw"),
    ("h2d CE copy (GB/s)", "h2d_ce", "host_to_device_memcpy_ce", "bw"),
    ("d2h CE copy (GB/s)", "d2h_ce", "device_to_host_memcpy_ce", "bw"),
    ("host pointer-chase latency (ns)", "lat_host_sm", "host_device_latency_sm", "lat"),
]
print(f"GPU0, {size} MiB buffers, 16 copies per sample, {rounds} alternating rounds; medians over rounds")
print("nvbandwidth's device_local_copy is a copy-engine copy: gpup2p's SM and CE figures both face it")
print(f'{"path":34} {"gpup2p":>9} {"nvbw":>9} {"ratio":>7}  goal')
ok = True
for name, gk, nk, kind in rows:
    if gk not in g or nk not in n:
        print(f"{name:34} {statistics.median(g[gk]) if gk in g else float('nan'):9.2f} {'-':>9}   (missing)")
        ok = False
        continue
    a, b = statistics.median(g[gk]), statistics.median(n[nk])
    ratio = a / b
    met = ratio >= 1.0 if kind == "bw" else abs(ratio - 1) <= 0.05
    ok &= met
    goal = ">= 1.00x" if kind == "bw" else "within 5%"
    print(f"{name:34} {a:9.2f} {b:9.2f} {ratio:7.3f}  {goal}: {'met' if met else 'NOT met'}")
try:
    x = [json.loads(l) for l in open(f"{P}/chase-random.jsonl")][0]
    print(f'{"host chase, random order (ns)":34} {x["us"] * 1e3:9.2f} {"-":>9} {"-":>7}  reported')
except (OSError, ValueError, IndexError):
    pass
checks = int(sys.argv[4]) == 0 and int(sys.argv[5]) == 0
print("all goals met" if ok else "some goals NOT met")
if not checks:
    print("the data-checked SM copies or the chase failed on the GPU (see above)")
sys.exit(0 if ok and checks else 1)
PY
