#!/bin/bash
# tests/perf/peer_compare.sh (the two-GPU run's peer table, issue 16) without GPUs: gpup2p on the libcuda
# test double (two GPUs; peer SM copies at 350 GB/s + 3 us per kernel, copy engine as fakecuda models it,
# the peer chase 700 ns per load) against a stand-in nvbandwidth printing matrices in nvbandwidth v0.8's
# layout with the figures a test asks for. Checks the matching of the two tools' rows, the ratios and
# goals, and every way the script must fail: a missed goal, wrong data, a tool failing, one GPU.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
fakecuda_scratch
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_NOPEER FAKECUDA_CORRUPT FAKECUDA_FAIL FAKECUDA_L2 FAKECUDA_BADPTX
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$FAKE GPUP2P=$BIN
export NVBANDWIDTH=$T/nvbandwidth SIZE_MIB=1 ITERS=2 ROUNDS=2

# the stand-in: every requested test as a 2x2 matrix, N/A on the diagonal; NVB_BW and NVB_LAT are the
# off-diagonal values (0->1 and 1->0 differ by 2, so a median over pairs is needed; the bidirectional
# tests print each direction's matrix at NVB_BW/2 before the total's), NVB_RC its exit code
cat >"$NVBANDWIDTH" <<'EOF'
#!/bin/bash
echo "nvbandwidth Version: v0.8 (stand-in)"
while [ $# -gt 0 ]; do
	case $1 in
	-t) shift; while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do t+=("$1"); shift; done ;;
	*) shift ;;
	esac
done
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
# matrix TITLE V: the 2x2 matrix of value V (0->1: V-1, 1->0: V+1) and its SUM line
matrix() {
	printf '%s\n           0         1\n' "$1"
	printf ' 0       N/A %9.2f\n 1 %9.2f       N/A\n\nSUM %s %.2f\n\n' "$(calc "$2 - 1")" "$(calc "$2 + 1")" "$name" "$(calc "$2 * 2")"
}
for name in "${t[@]}"; do
	printf '\nRunning %s.\n' "$name"
	case $name in
	*latency*) matrix "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)" "$NVB_LAT" ;;  # v0.8's title
	# v0.8's bidirectional tests: each direction alone, then their total (the figure to compare)
	*bidirectional*) matrix "memcpy SM GPU(row) <-> GPU(column) Write1 bandwidth (GB/s)" "$(calc "$NVB_BW / 2")"
		matrix "memcpy SM GPU(row) <-> GPU(column) Write2 bandwidth (GB/s)" "$(calc "$NVB_BW / 2")"
		matrix "memcpy SM GPU(row) <-> GPU(column) Total bandwidth (GB/s)" "$NVB_BW" ;;
	*) matrix "memcpy SM GPU(row) -> GPU(column) bandwidth (GB/s)" "$NVB_BW" ;;
	esac
done
exit "${NVB_RC:-0}"
EOF
chmod +x "$NVBANDWIDTH"

calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
# What gpup2p measures on the test double, taken from its own JSON (not from the script): the script's
# medians must be these, and nvbandwidth's the stand-in's middle value.
"$BIN" bench p2p bidir --engine both --p2p on --size 1M --iters 2 --reps 5 --jsonl >"$T/g.jsonl" || nok "gpup2p bench on the test double"
gsm=$(python3 -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
print(min(x["gbps"] for x in r if x["mode"]=="p2p"))' "$T/g.jsonl")

# run VAR=VALUE...: the script with those in its environment; prints its exit code
run() { env "$@" OUT="$T/out" bash tests/perf/peer_compare.sh >"$T/table.txt" 2>"$T/err.txt"; echo $?; }

# nvbandwidth 1 GB/s below gpup2p's slowest peer figure, latency 2% above the test double's 700 ns: every goal met
rc=$(run NVB_BW=$(calc "$gsm - 1") NVB_LAT=714)
want=$(calc "$gsm - 1")
python3 - "$T/table.txt" "$want" <<'PY' && [ "$rc" = 0 ] && ok "peer_compare: goals met -> exit 0, medians over both ordered pairs" || nok "met: rc=$rc $(cat "$T/table.txt" "$T/err.txt")"
import sys
t = open(sys.argv[1]).read()
want = float(sys.argv[2])
assert "2 GPUs (GPU0, GPU1)" in t, t
rows = {l[:38].strip(): l[38:].split() for l in t.splitlines() if "  " in l[:40]}
sm = rows["peer SM copy, write (GB/s)"]
assert abs(float(sm[1]) - want) < 0.006 and sm[-1] == "met", sm        # the stand-in's median, not 0->1 or 1->0
lat = rows["peer SM chase, 1 MiB chain (ns)"]
assert float(lat[0]) == 700.0 and float(lat[1]) == 714.0 and lat[3:] == ["within", "5%:", "met"], lat
assert abs(float(lat[2]) - 700 / 714) < 0.0006, lat
big = rows["peer SM chase, chain 2x L2 (ns)"]
assert float(big[0]) == 700.0 and big[1:4] == ["-", "-", "reported"], big   # no goal: another quantity
assert rows["bidirectional SM copy, read (GB/s)"][0] == "-", rows       # gpup2p has no bidirectional read
assert abs(float(rows["bidirectional SM copy, write (GB/s)"][1]) - want) < 0.006, rows  # the Total matrix
for k in ("peer SM copy, read (GB/s)", "bidirectional SM copy, write (GB/s)", "peer CE copy, write (GB/s)",
          "peer CE copy, read (GB/s)", "bidirectional CE copy, write (GB/s)"):
    assert rows[k][-1] == "met" and float(rows[k][0]) > 0, (k, rows[k])
assert t.rstrip().endswith("all goals met"), t
PY

# nvbandwidth faster on bandwidth: the goal is missed, exit 1
rc=$(run NVB_BW=100000 NVB_LAT=700)
[ "$rc" = 1 ] && grep -q "peer SM copy, write.*NOT met" "$T/table.txt" && grep -q "some goals NOT met" "$T/table.txt" &&
	ok "peer_compare: nvbandwidth faster -> NOT met, exit 1" || nok "missed: rc=$rc $(cat "$T/table.txt")"
# latency 6% off: missed
rc=$(run NVB_BW=1 NVB_LAT=660)
[ "$rc" = 1 ] && grep -q "chase, 1 MiB chain.*within 5%: NOT met" "$T/table.txt" && ! grep -q "GB/s.*NOT met" "$T/table.txt" &&
	ok "peer_compare: latency 6% off -> NOT met, exit 1" || nok "latency: rc=$rc $(cat "$T/table.txt")"
# wrong data in the timed peer copies (the test double flips a byte of every peer copy): exit 1, said
rc=$(run FAKECUDA_CORRUPT=peer NVB_BW=1 NVB_LAT=700)
[ "$rc" = 1 ] && grep -q "reported wrong data" "$T/table.txt" && ok "peer_compare: wrong data -> exit 1" ||
	nok "corrupt: rc=$rc $(cat "$T/table.txt")"
# nvbandwidth failing: exit 1 even with every goal met on what it printed
rc=$(run NVB_RC=3 NVB_BW=1 NVB_LAT=700)
[ "$rc" = 1 ] && grep -q "nvbandwidth run 1: exit 3" "$T/table.txt" && grep -q "a tool failed" "$T/table.txt" &&
	ok "peer_compare: nvbandwidth fails -> exit 1" || nok "tool: rc=$rc $(cat "$T/table.txt")"
# one GPU: nothing to compare, 69
rc=$(run FAKECUDA_GPUS=1 NVB_BW=1 NVB_LAT=700)
[ "$rc" = 69 ] && grep -q "fewer than two GPUs" "$T/table.txt" && ok "peer_compare: one GPU -> exit 69" ||
	nok "one GPU: rc=$rc $(cat "$T/table.txt")"
# no nvbandwidth at all
rc=$(run NVBANDWIDTH=$T/none NVB_BW=1 NVB_LAT=700)
[ "$rc" = 1 ] && grep -q "no nvbandwidth at" "$T/table.txt" && ok "peer_compare: no nvbandwidth -> exit 1, said" ||
	nok "none: rc=$rc $(cat "$T/table.txt")"
