#!/bin/bash
# gpup2p's host patterns against nvbandwidth's on a multi-GPU machine (issue 24; device tool), the two
# tools alternating for ROUNDS rounds: host_to_all / all_to_host, bidirectional (CE) and not. Their
# rounds swing (the host's memory is shared by every GPU's copies), so the figure is the median over
# rounds, beside each round's ratio; no goal is judged. nvbandwidth's number is its SUM over the GPUs
# (each measured in turn while the others copy too); gpup2p's is its aggregate (every GPU measured
# together, each on its own clock from one gate) and the sum of its per-GPU rows. Raw outputs under $OUT/host/. Needs
# build/gpup2p (or GPUP2P), build/devlibs when carried, and NVBANDWIDTH (built by hand outside the
# repository). Exit 0; 1 when a tool failed (gpup2p's wrong data included); 2 without NVBANDWIDTH; 69
# when gpup2p sees no GPU.
#   ROUNDS (5), GPUP2P (build/gpup2p), NVBANDWIDTH (required), SIZE_MIB (512) and ITERS (16): gpup2p's
#   copy size and loop count (nvbandwidth's defaults)
set -u
OUT=${OUT:-/tmp/gpup2p-out}
ROUNDS=${ROUNDS:-5}
SIZE_MIB=${SIZE_MIB:-512}
ITERS=${ITERS:-16}
B=${GPUP2P:-$PWD/build/gpup2p}
NVB=${NVBANDWIDTH:-}
H=$OUT/host
[ -n "$NVB" ] && [ -x "$NVB" ] || { echo "host_rounds.sh: NVBANDWIDTH=path to an nvbandwidth binary is required" >&2; exit 2; }
[ -d build/devlibs ] && export LD_LIBRARY_PATH=$PWD/build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$H"
for r in $(seq 1 "$ROUNDS"); do
	for f in gp-duplex gp; do
		d=--duplex
		[ $f = gp ] && d=--pinned
		"$B" bench host2all all2host $d --engine ce --size "${SIZE_MIB}M" --iters "$ITERS" --csv >"$H/$f-$r.csv" \
			2>"$H/$f-$r.err"
		rc=$?
		[ $rc = 69 ] && { echo "host_rounds.sh: gpup2p sees no GPU: $(cat "$H/$f-$r.err")" >&2; exit 69; }
		[ $rc = 0 ] || { echo "host_rounds.sh: gpup2p bench $d failed (round $r, exit $rc):" \
			"$(head -c 300 "$H/$f-$r.err")" >&2; exit 1; }
	done
	"$NVB" -t host_to_all_bidirectional_memcpy_ce all_to_host_bidirectional_memcpy_ce host_to_all_memcpy_ce \
		all_to_host_memcpy_ce >"$H/nvb-$r.txt" 2>&1 || { echo "host_rounds.sh: nvbandwidth failed (round $r)" >&2; exit 1; }
done
python3 - "$H" "$ROUNDS" <<'PY'
import csv, re, statistics, sys
h, rounds = sys.argv[1], int(sys.argv[2])
pairs = [("host2all_duplex_ce", "gp-duplex", "host2all", "host_to_all_bidirectional_memcpy_ce"),
         ("all2host_duplex_ce", "gp-duplex", "all2host", "all_to_host_bidirectional_memcpy_ce"),
         ("host2all_ce", "gp", "host2all", "host_to_all_memcpy_ce"),
         ("all2host_ce", "gp", "all2host", "all_to_host_memcpy_ce")]
print("%-20s %8s %8s %8s %7s %7s  per round (aggregate / nvbandwidth)" % ("path", "gpup2p", "rows", "nvb", "ratio", "rows"))
for name, f, mode, test in pairs:
    agg, rows, nv = [], [], []
    for r in range(1, rounds + 1):
        m = re.search(r"^SUM %s ([0-9.]+)" % test, open("%s/nvb-%d.txt" % (h, r)).read(), re.M)
        nv.append(float(m.group(1)) if m else float("nan"))
        a, s = float("nan"), 0.0
        for row in csv.DictReader(open("%s/%s-%d.csv" % (h, f, r))):
            if row["mode"] == mode:
                if row["path"] == "aggregate":
                    a = float(row["gbps"])
                else:
                    s += float(row["gbps"])
        agg.append(a)
        rows.append(s)
    ma, ms, mn = statistics.median(agg), statistics.median(rows), statistics.median(nv)
    print("%-20s %8.2f %8.2f %8.2f %6.3fx %6.3fx  %s" % (name, ma, ms, mn, ma / mn, ms / mn,
          " ".join("%.3f" % (a / n) for a, n in zip(agg, nv))))
PY
