#!/bin/bash
# gpup2p's peer paths against nvbandwidth's on a machine with two or more GPUs (issue 16; device tool,
# kind nvidia-h200-x2), side by side in one run, alternating the two tools (ROUNDS rounds each):
# SM and copy-engine peer copies (write = pushed, read = pulled), bidirectional copies, and the peer
# pointer-chase latency. Needs build/gpup2p, build/devlibs and nvbandwidth built by sm_compare.sh
# named by NVBANDWIDTH (built outside the repository). Prints a table of medians over every ordered
# GPU pair and round, the ratios gpup2p/nvbandwidth and the goals (bandwidth >= 1.00x, latency within
# 5%); raw results under $OUT/peer/. Exit 1 when a goal is missed, a copy's data was wrong, or a tool
# failed; 69 with fewer than two GPUs.
#   ROUNDS (3), SIZE_MIB (512: nvbandwidth's default buffer), ITERS (16: nvbandwidth's loop count),
#   GPUP2P (build/gpup2p), NVBANDWIDTH (required)
set -u
OUT=${OUT:-/tmp/gpup2p-out}
ROUNDS=${ROUNDS:-3}
SIZE_MIB=${SIZE_MIB:-512}
ITERS=${ITERS:-16}
B=${GPUP2P:-$PWD/build/gpup2p}
NVB=${NVBANDWIDTH:-}
P=$OUT/peer
mkdir -p "$P"
[ -d build/devlibs ] && export LD_LIBRARY_PATH=$PWD/build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f /usr/share/misc/pci.ids ] || [ -f /usr/share/hwdata/pci.ids ] || [ -n "${GPUP2P_PCI_IDS:-}" ] ||
	export GPUP2P_PCI_IDS=$PWD/build/devlibs/pci.ids
export NO_COLOR=1
[ -x "$NVB" ] || { echo "peer_compare: no nvbandwidth at $NVB (set NVBANDWIDTH=path to a binary built outside the repository)"; exit 1; }

# Peer SM copies of odd sizes and the random-order peer chase on the real GPUs, data checked: exit 0 wanted.
"$B" bench p2p bidir --sm --min 1 --max 3M --factor 5.3 --iters 2 --reps 2 -q >"$P/sm-sizes.txt" 2>&1
rc_sizes=$?
echo "peer SM copies of 10 odd sizes 1 B..3 MiB, p2p/bidir, data checked: exit $rc_sizes"
"$B" bench latency --sm --random --seed 42 --iters 20000 --reps 3 --jsonl >"$P/chase-random.jsonl" 2>&1
rc_chase=$?
echo "random-order chase (host and peers): exit $rc_chase"

tests=(device_to_device_memcpy_write_sm device_to_device_memcpy_read_sm
	device_to_device_bidirectional_memcpy_write_sm device_to_device_bidirectional_memcpy_read_sm
	device_to_device_latency_sm device_to_device_memcpy_write_ce device_to_device_memcpy_read_ce
	device_to_device_bidirectional_memcpy_write_ce device_to_device_bidirectional_memcpy_read_ce)
rc_tools=0
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r at ${SECONDS}s" >&2
	"$B" bench p2p bidir --engine both --p2p on --size "${SIZE_MIB}M" --iters "$ITERS" --reps 5 --jsonl \
		>"$P/g-bw-$r.jsonl" || { echo "gpup2p peer bandwidth run $r: exit $?"; rc_tools=1; }
	"$B" bench latency --sm --reps 5 --jsonl >"$P/g-lat-$r.jsonl" || { echo "gpup2p latency run $r: exit $?"; rc_tools=1; }
	# nvbandwidth's chase starts at its buffer's first node in each of its launches (one per SM, 1M loads
	# in all, 128 B apart): it never leaves the first ~1 MiB, which the peer's L2 holds; a 1 MiB chain is
	# the same measurement, the default chain (twice the L2) the latency of the peer's memory itself
	"$B" bench latency --sm --size 1M --reps 5 --jsonl >"$P/g-lat1m-$r.jsonl" ||
		{ echo "gpup2p 1 MiB latency run $r: exit $?"; rc_tools=1; }
	"$NVB" -b "$SIZE_MIB" -t "${tests[@]}" >"$P/nvb-$r.txt" 2>&1 || { echo "nvbandwidth run $r: exit $?"; rc_tools=1; }
done

python3 - "$P" "$ROUNDS" "$SIZE_MIB" "$rc_sizes" "$rc_chase" "$rc_tools" <<'PY'
import json, re, statistics, sys
P, rounds, size = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rc_sizes, rc_chase, rc_tools = (int(x) for x in sys.argv[4:7])
g, n, gpus = {}, {}, set()
def put(d, k, v):
    d.setdefault(k, []).append(v)
wrong = 0
for r in range(1, rounds + 1):
    for f in ("bw", "lat", "lat1m"):
        try:
            lines = open(f"{P}/g-{f}-{r}.jsonl").read().splitlines()
        except OSError:
            continue
        for line in lines:
            x = json.loads(line)
            wrong += x["verified"] is False
            if not (x["src"].startswith("GPU") and x["dst"].startswith("GPU") and x["src"] != x["dst"]):
                continue  # host rows of the latency run, device-local rows
            gpus |= {x["src"], x["dst"]}
            if x["mode"] == "latency":
                put(g, "lat_sm_1m" if f == "lat1m" else "lat_sm", x["us"] * 1e3)
            elif x["mode"] in ("p2p", "bidir"):
                put(g, f'{x["mode"]}_{x["engine"]}_{x["op"]}', x["gbps"])
    try:
        text = open(f"{P}/nvb-{r}.txt").read()
    except OSError:
        continue
    # each test: "Running NAME." then one or more titled matrices (nvbandwidth v0.8's bidirectional tests
    # print Write1/Read1, Write2/Read2 and Total: the Total one is taken, else the first); a matrix has a
    # header of column numbers and rows "I  V V ..." with N/A on the diagonal of the peer tests (values
    # have decimals, column numbers do not); every number of the matrix is one ordered pair
    for name, body in re.findall(r"Running (\w+)\.\n(.*?)(?=\nRunning |\Z)", text, re.S):
        parts = re.split(r"^(memcpy .*|memory latency .*|Device to Device Latency .*)$", body, flags=re.M)
        mats = list(zip(parts[1::2], parts[2::2]))
        pick = [m for m in mats if "Total" in m[0]] or mats[:1]
        for _, mat in pick:
            for row in re.findall(r"^[ \t]*\d+((?:[ \t]+(?:\d+\.\d+|N/A))+)[ \t]*$", mat, re.M):
                for v in row.split():
                    if v != "N/A":
                        put(n, name, float(v))
rows = [
    ("peer SM copy, write (GB/s)", "p2p_sm_write", "device_to_device_memcpy_write_sm", "bw"),
    ("peer SM copy, read (GB/s)", "p2p_sm_read", "device_to_device_memcpy_read_sm", "bw"),
    ("bidirectional SM copy, write (GB/s)", "bidir_sm_write", "device_to_device_bidirectional_memcpy_write_sm", "bw"),
    ("bidirectional SM copy, read (GB/s)", None, "device_to_device_bidirectional_memcpy_read_sm", "bw"),
    ("peer SM chase, 1 MiB chain (ns)", "lat_sm_1m", "device_to_device_latency_sm", "lat"),
    ("peer SM chase, chain 2x L2 (ns)", "lat_sm", None, "lat"),
    ("peer CE copy, write (GB/s)", "p2p_ce_write", "device_to_device_memcpy_write_ce", "bw"),
    ("peer CE copy, read (GB/s)", "p2p_ce_read", "device_to_device_memcpy_read_ce", "bw"),
    ("bidirectional CE copy, write (GB/s)", "bidir_ce_write", "device_to_device_bidirectional_memcpy_write_ce", "bw"),
    ("bidirectional CE copy, read (GB/s)", None, "device_to_device_bidirectional_memcpy_read_ce", "bw"),
]
if len(gpus) < 2:
    print("peer_compare: fewer than two GPUs took part (gpup2p saw %s): nothing to compare" % (sorted(gpus) or "none"))
    sys.exit(69)
print(f"{len(gpus)} GPUs ({', '.join(sorted(gpus))}), {size} MiB buffers, {rounds} alternating rounds; medians over every ordered pair and round")
print("bidirectional: both directions together (gpup2p's figure and nvbandwidth's Total matrix are the sum)")
print(f'{"path":38} {"gpup2p":>9} {"nvbw":>9} {"ratio":>7}  goal')
ok = True
for name, gk, nk, kind in rows:
    b = statistics.median(n[nk]) if nk in n else None
    if nk is None:
        a = statistics.median(g[gk]) if gk in g else float("nan")
        print(f'{name:38} {a:9.2f} {"-":>9} {"-":>7}  reported (the peer\'s memory; nvbandwidth\'s stays in L2)')
        continue
    if gk is None:
        print(f'{name:38} {"-":>9} {b if b is not None else float("nan"):9.2f} {"-":>7}  reported (gpup2p has no bidirectional read)')
        continue
    a = statistics.median(g[gk]) if gk in g else None
    if a is None or b is None:
        print(f'{name:38} {a if a is not None else float("nan"):9.2f} {b if b is not None else float("nan"):9.2f} {"-":>7}  (missing)')
        ok = False
        continue
    ratio = a / b
    met = ratio >= 1.0 if kind == "bw" else abs(ratio - 1) <= 0.05
    ok &= met
    goal = ">= 1.00x" if kind == "bw" else "within 5%"
    print(f"{name:38} {a:9.2f} {b:9.2f} {ratio:7.3f}  {goal}: {'met' if met else 'NOT met'}")
try:
    x = [json.loads(l) for l in open(f"{P}/chase-random.jsonl")]
    for y in x:
        if y["dst"].startswith("GPU") and y["src"] != y["dst"]:
            print(f'{"peer chase " + y["src"] + "->" + y["dst"] + ", random (ns)":38} {y["us"] * 1e3:9.2f} {"-":>9} {"-":>7}  reported')
except (OSError, ValueError, KeyError):
    pass
print("all goals met" if ok else "some goals NOT met")
if wrong:
    print(f"{wrong} timed copies reported wrong data")
if rc_sizes or rc_chase:
    print("the data-checked peer SM copies or the chase failed on the GPUs (see above)")
if rc_tools:
    print("a tool failed in a round (see above)")
sys.exit(0 if ok and not wrong and not rc_sizes and not rc_chase and not rc_tools else 1)
PY
