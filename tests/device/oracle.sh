#!/bin/bash
# The machine as the oracle (issue 24): gpup2p against NVIDIA's own views of the same machine, the
# same minute. Run from the repository root on a machine with NVIDIA GPUs, build/gpup2p and
# build/devlibs carried. Prints one line per disagreement and exits 1 if any, 0 if none; 69 with one
# line when there is no GPU (no nvidia-smi, or it lists none).
#   topo        gpup2p topo vs nvidia-smi topo -m, every cell (topo_cells.awk)
#   p2p         doctor's p2p.access (cuDeviceCanAccessPeer per direction) vs nvidia-smi topo -p2p rw
#   nvlink      links up and replay/recovery/CRC counters per GPU, from the gpu-facts of a gpup2p
#               snapshot (nothing gpup2p prints gives counts per link), vs nvidia-smi nvlink -s / -e
#   q           PCIe generation/width (topo --json), BAR1, ECC, persistence (gpu-facts) vs nvidia-smi -q
#   doctor      doctor --json live vs doctor --json --root on its own fresh snapshot (static findings)
#   bench       with NVBANDWIDTH=path: bench vs the matching nvbandwidth tests in ROUNDS (3)
#               alternating rounds, medians and their ratio per path; below 1.00x is printed as a
#               figure, a disagreement only with OR_STRICT_BENCH=1 (tests/device/oracle_bench.sh)
# Environment: OUT (raw outputs, summary: $OUT/oracle.log, $OUT/raw/), GPUP2P (the binary,
# default build/gpup2p), NVBANDWIDTH, ROUNDS, OR_STRICT_BENCH, OR_ONLY (the comparisons to run,
# e.g. "topo q"; default all). Copy $OUT/oracle.log to tests/perf/results/oracle-KIND-DATE.log.
set -u
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
	echo "oracle: no NVIDIA GPU here (nvidia-smi absent or lists none)"
	exit 69
fi
HERE=${BASH_SOURCE[0]%/*}
. "$HERE/lib.sh"
device_setup oracle.log
BIN=${GPUP2P:-$PWD/build/gpup2p}
ONLY=${OR_ONLY:-topo p2p nvlink q doctor bench}
R=$OUT/raw
rm -rf "$R" && mkdir -p "$R"
total=0

# compare NAME COMMAND...: run one comparison, keep its lines, count them
compare() {
	local name=$1 rc
	shift
	case " $ONLY " in *" $name "*) ;; *) return 0 ;; esac
	"$@" >"$R/diff-$name.txt" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "agree    $name"
	else
		[ -s "$R/diff-$name.txt" ] || echo "$name: comparison failed (exit $rc)" >"$R/diff-$name.txt"
		total=$((total + $(grep -c '' "$R/diff-$name.txt")))
		echo "DISAGREE $name"
		sed 's/^/  /' "$R/diff-$name.txt"
	fi
}

echo "== oracle: $(nvidia-smi -L | grep -c '^GPU [0-9]') GPUs, $("$BIN" --version 2>&1 | head -1)"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader 2>/dev/null
# NVIDIA's views, then gpup2p's, in one go, so that both see the same minute
nvidia-smi topo -m >"$R/smi-topo-m.txt" 2>&1
nvidia-smi topo -p2p rw >"$R/smi-p2p-rw.txt" 2>&1
nvidia-smi nvlink -s >"$R/smi-nvlink-s.txt" 2>&1
nvidia-smi -q >"$R/smi-q.txt" 2>&1
"$BIN" topo >"$R/topo.txt" 2>&1
"$BIN" --json topo >"$R/topo.json" 2>"$R/topo.err"
"$BIN" --json doctor >"$R/doctor.json" 2>"$R/doctor.err"
echo "doctor live: exit $?"
"$BIN" -q snapshot "$R/snapshot.tar.gz" 2>"$R/snapshot.err" || echo "snapshot: exit $? $(head -2 "$R/snapshot.err")"
nvidia-smi nvlink -e >"$R/smi-nvlink-e.txt" 2>&1 # right after the snapshot read the counters
mkdir -p "$R/snap" && tar -C "$R/snap" -xzf "$R/snapshot.tar.gz"
SNAP=$(find "$R/snap" -mindepth 1 -maxdepth 1 -type d | head -1)
FACTS=$SNAP/gpup2p/gpu-facts
"$BIN" --root "$SNAP" --json doctor >"$R/doctor-snap.json" 2>"$R/doctor-snap.err"
echo "doctor on its snapshot: exit $?"

compare topo awk -f "$HERE/topo_cells.awk" "$R/topo.txt" "$R/smi-topo-m.txt"
compare p2p python3 "$HERE/oracle_cmp.py" p2p "$R/doctor.json" "$R/smi-p2p-rw.txt"
compare nvlink python3 "$HERE/oracle_cmp.py" nvlink "$FACTS" "$R/smi-q.txt" "$R/smi-nvlink-s.txt" \
	"$R/smi-nvlink-e.txt"
compare q python3 "$HERE/oracle_cmp.py" q "$FACTS" "$R/topo.json" "$R/smi-q.txt"
compare doctor python3 "$HERE/oracle_cmp.py" doctor "$R/doctor.json" "$R/doctor-snap.json"
if [ -n "${NVBANDWIDTH:-}" ]; then
	case " $ONLY " in *" bench "*)
		echo "== bench: ${ROUNDS:-3} alternating rounds with $NVBANDWIDTH"
		bash "$HERE/oracle_bench.sh" "$BIN" "$NVBANDWIDTH" "$R" >"$R/bench.txt" 2>&1
		sed 's/^/  /' "$R/bench.txt"
		total=$((total + $(grep -c '^bench:' "$R/bench.txt"))) ;;
	esac
else
	case " $ONLY " in *" bench "*) echo "skip     bench (no NVBANDWIDTH=path to an nvbandwidth binary)" ;; esac
fi
echo "== $total disagreement(s)"
[ $total -eq 0 ]
