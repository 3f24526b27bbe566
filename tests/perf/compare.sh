#!/bin/bash
# gpup2p bench against PyTorch on the same copies, side by side in one run, alternating the two
# (ROUNDS rounds each) so that clocks and neighbours affect both alike. Needs the GPU machine
# (device tool, kind nvidia-h200-x2) with torch; run from the repository root with build/ carried.
# Prints a table of medians and the ratio gpup2p/torch; raw results under $OUT/perf/.
set -u
OUT=${OUT:-/tmp/gpup2p-out}
SIZE=${SIZE:-1G}
ROUNDS=${ROUNDS:-2}
B=$PWD/build/gpup2p
P=$OUT/perf
mkdir -p "$P"
[ -d build/devlibs ] && export LD_LIBRARY_PATH=$PWD/build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bytes=$(python3 -c "import sys; s=sys.argv[1]; u={'K':10,'M':20,'G':30}; print(int(s[:-1])<<u[s[-1]] if s[-1] in u else int(s))" "$SIZE")
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r at ${SECONDS}s" >&2
	"$B" bench h2d d2h --pinned --size "$SIZE" --iters 10 --reps 5 --jsonl >"$P/g-host-$r.jsonl" || echo "gpup2p host run $r: exit $?"
	python3 tests/perf/torch_ref.py "$bytes" 10 5 >"$P/t-$r.json" || echo "torch run $r failed"
	"$B" bench p2p bidir --p2p on --size "$SIZE" --iters 10 --reps 5 --jsonl >"$P/g-peer-$r.jsonl" || echo "gpup2p peer run $r: exit $?"
	"$B" bench latency --jsonl >"$P/g-lat-$r.jsonl" || echo "gpup2p latency run $r: exit $?"
done
python3 - "$P" "$ROUNDS" "$SIZE" <<'PY'
import json, statistics, sys
P, rounds, size = sys.argv[1], int(sys.argv[2]), sys.argv[3]
g, t = {}, {}
def put(d, k, v):
    d.setdefault(k, []).append(v)
for r in range(1, rounds + 1):
    for f in ("host", "peer", "lat"):
        for line in open(f"{P}/g-{f}-{r}.jsonl"):
            x = json.loads(line)
            assert x["verified"] is not False, x
            if x["mode"] in ("h2d", "d2h"):
                put(g, f'{x["mode"]}_pinned_{x["dst"] if x["mode"] == "h2d" else x["src"]}', x["gbps"])
            elif x["mode"] == "p2p" and x["p2p"] == "on" and x["op"] == "write":
                put(g, f'p2p_{x["src"]}_{x["dst"]}', x["gbps"])
            elif x["mode"] == "bidir" and x["p2p"] == "on":
                put(g, "bidir", x["gbps"])
            elif x["mode"] == "latency" and x["path"] == "p2p" and x["src"] == "GPU0":
                put(g, "lat_p2p_gpu_us", x["us"]); put(g, "lat_p2p_host_us", x["host_us"])
            elif x["mode"] == "latency" and x["path"] == "h2d" and x["dst"] == "GPU0":
                put(g, "lat_h2d_host_us", x["host_us"]); put(g, "lat_h2d_gpu_us", x["us"])
    tj = json.load(open(f"{P}/t-{r}.json"))
    for k, v in tj.items():
        if isinstance(v, float):
            put(t, k, v)
pairs = [
    ("h2d pinned GPU0 (GB/s)", "h2d_pinned_GPU0", "h2d_pinned_gpu0", 0.98),
    ("h2d pinned GPU1 (GB/s)", "h2d_pinned_GPU1", "h2d_pinned_gpu1", 0.98),
    ("d2h pinned GPU0 (GB/s)", "d2h_pinned_GPU0", "d2h_pinned_gpu0", 0.98),
    ("d2h pinned GPU1 (GB/s)", "d2h_pinned_GPU1", "d2h_pinned_gpu1", 0.98),
    ("p2p GPU0->GPU1 (GB/s)", "p2p_GPU0_GPU1", "p2p_0to1", 1.0),
    ("p2p GPU1->GPU0 (GB/s)", "p2p_GPU1_GPU0", "p2p_1to0", 1.0),
    ("bidir GPU0<->GPU1 (GB/s)", "bidir", "bidir_01", 1.0),
    ("p2p 4 B latency, host-timed (us)", "lat_p2p_host_us", "lat_p2p_host_us", None),
    ("p2p 4 B latency, GPU-timed (us)", "lat_p2p_gpu_us", "lat_p2p_event_us", None),
    ("h2d 4 B latency, host-timed (us)", "lat_h2d_host_us", "lat_h2d_host_us", None),
]
print(f"size {size}, {rounds} alternating rounds; medians over rounds (each round: median of 5 reps)")
print(f'{"path":36} {"gpup2p":>9} {"torch":>9} {"ratio":>7}  goal')
ok = True
for name, gk, tk, goal in pairs:
    if gk not in g or tk not in t:
        print(f"{name:36} {'-':>9} {'-':>9}"); continue
    a, b = statistics.median(g[gk]), statistics.median(t[tk])
    ratio = a / b
    verdict = "" if goal is None else ("met" if ratio >= goal else "NOT met")
    ok &= goal is None or ratio >= goal
    print(f"{name:36} {a:9.2f} {b:9.2f} {ratio:7.3f}  {'>= %.2f x torch: %s' % (goal, verdict) if goal else 'reported'}")
print("all bandwidth goals met" if ok else "some bandwidth goals NOT met")
PY
