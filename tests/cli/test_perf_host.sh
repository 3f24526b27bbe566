#!/bin/bash
# tests/perf/host_rounds.sh (the host patterns against nvbandwidth, issue 24) without GPUs: gpup2p on the
# libcuda test double (two GPUs) against a stand-in nvbandwidth printing v0.8's SUM lines with the figure
# a test asks for. Checks that the table's medians and ratios are gpup2p's own aggregates over the
# stand-in's, round by round, and every way the script must stop: no nvbandwidth, a tool failing, wrong
# data, no GPU.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
fakecuda_scratch
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_NOPEER FAKECUDA_CORRUPT FAKECUDA_FAIL
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$FAKE GPUP2P=$BIN
export NVBANDWIDTH=$T/nvbandwidth SIZE_MIB=1 ITERS=2 ROUNDS=3

# the stand-in: each requested test's SUM line, NVB_<test>=V1,V2,V3 its figure in rounds 1, 2, 3 (a file
# counts its runs), NVB_RC its exit code
cat >"$NVBANDWIDTH" <<'EOF'
#!/bin/bash
echo "nvbandwidth Version: v0.8 (stand-in)"
n=$(( $(cat "$NVB_COUNT" 2>/dev/null || echo 0) + 1 )); echo $n >"$NVB_COUNT"
shift
for t in "$@"; do
	v=NVB_$t
	printf '\nRunning %s.\nSUM %s %s\n' "$t" "$t" "$(echo "${!v:-1}" | cut -d, -f$n)"
done
exit "${NVB_RC:-0}"
EOF
chmod +x "$NVBANDWIDTH"

# run VAR=VALUE...: the script with those in its environment; prints its exit code
run() {
	rm -rf "$T/out" "$T/count"
	env NVB_COUNT="$T/count" "$@" OUT="$T/out" bash tests/perf/host_rounds.sh >"$T/table.txt" 2>"$T/err.txt"
	echo $?
}

rc=$(run NVB_host_to_all_bidirectional_memcpy_ce=40,10,20 NVB_all_to_host_bidirectional_memcpy_ce=5,50,500 \
	NVB_host_to_all_memcpy_ce=30,30,30 NVB_all_to_host_memcpy_ce=60,70,80)
# what gpup2p measured is read from its own CSV files, not from the script's table
python3 - "$T/table.txt" "$T/out/host" <<'PY' && [ "$rc" = 0 ] && ok "host_rounds: medians and ratios of gpup2p's aggregates over nvbandwidth's, round by round" || nok "table: rc=$rc $(cat "$T/table.txt" "$T/err.txt")"
import csv, statistics, sys
t, h = open(sys.argv[1]).read(), sys.argv[2]
rows = {l.split()[0]: l.split() for l in t.splitlines()[1:] if l.strip()}
nv = {"host2all_duplex_ce": [40, 10, 20], "all2host_duplex_ce": [5, 50, 500], "host2all_ce": [30, 30, 30],
      "all2host_ce": [60, 70, 80]}
for path, vals in nv.items():
    f = "gp-duplex" if "duplex" in path else "gp"
    mode = path.split("_")[0]
    agg, sums = [], []
    for r in (1, 2, 3):
        g = [x for x in csv.DictReader(open("%s/%s-%d.csv" % (h, f, r))) if x["mode"] == mode]
        agg.append(float([x for x in g if x["path"] == "aggregate"][0]["gbps"]))
        sums.append(sum(float(x["gbps"]) for x in g if x["path"] != "aggregate"))
        assert len(g) == 3, g                                  # two GPUs and the aggregate
    row = rows[path]
    assert abs(float(row[1]) - statistics.median(agg)) < 0.006, (path, row, agg)
    assert abs(float(row[2]) - statistics.median(sums)) < 0.006, (path, row, sums)
    assert float(row[3]) == statistics.median(vals), (path, row)
    assert abs(float(row[4].rstrip("x")) - statistics.median(agg) / statistics.median(vals)) < 0.0006, (path, row)
    assert [round(float(x), 3) for x in row[6:]] == [round(a / v, 3) for a, v in zip(agg, vals)], (path, row)
PY
[ "$(cat "$T/count")" = 3 ] && ok "host_rounds: nvbandwidth run once a round (3)" || nok "nvbandwidth runs: $(cat "$T/count")"

rc=$(run NVBANDWIDTH=)
[ "$rc" = 2 ] && grep -q "NVBANDWIDTH=path" "$T/err.txt" && ok "host_rounds: no nvbandwidth -> exit 2, said" ||
	nok "none: rc=$rc $(cat "$T/err.txt")"
rc=$(run NVB_RC=3)
[ "$rc" = 1 ] && grep -q "nvbandwidth failed (round 1)" "$T/err.txt" && ok "host_rounds: nvbandwidth fails -> exit 1" ||
	nok "tool: rc=$rc $(cat "$T/err.txt")"
rc=$(run FAKECUDA_CORRUPT=h2d)
[ "$rc" = 1 ] && grep -q "round 1" "$T/err.txt" && ! [ -s "$T/table.txt" ] &&
	ok "host_rounds: wrong data in gpup2p's copies -> exit 1, no table" || nok "corrupt: rc=$rc $(cat "$T/err.txt" "$T/table.txt")"
rc=$(run FAKECUDA_GPUS=0)
[ "$rc" = 69 ] && grep -q "sees no GPU" "$T/err.txt" && ok "host_rounds: no GPU -> exit 69" ||
	nok "no GPU: rc=$rc $(cat "$T/err.txt")"
