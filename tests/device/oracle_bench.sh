#!/bin/bash
# oracle.sh's bench comparison: oracle_bench.sh GPUP2P NVBANDWIDTH RAWDIR. ROUNDS (3) alternating
# rounds of gpup2p bench (--jsonl) and nvbandwidth (-b SIZE_MIB, default 512) on the same paths;
# each round's figure per path goes to RAWDIR/bench-{gpup2p,nvb}.tsv, oracle_cmp.py bench prints the
# medians and ratios (below 1.00x a disagreement only with OR_STRICT_BENCH=1).
# nvbandwidth's figure per path is its "SUM <test> <GB/s>" line over the entries it sums: per GPU
# (host<->device, one_to_all/all_to_one rows), per ordered pair (device_to_device), or the aggregate
# itself (all_to_host, host_to_all); gpup2p's is the median of its rows (pairs, GPUs) or its
# aggregate row. OR_BENCH_MODES narrows gpup2p's modes (default every mode below).
set -u
BIN=$1 NVB=$2 R=$3
HERE=${BASH_SOURCE[0]%/*}
ROUNDS=${ROUNDS:-3} SIZE_MIB=${SIZE_MIB:-512}
n=$(nvidia-smi -L | grep -c '^GPU [0-9]')
pairs=$((n * (n - 1)))
# path  gpup2p: mode engine op kind(rows|aggregate)  nvbandwidth test  its divisor
MAP="h2d_ce h2d ce - rows host_to_device_memcpy_ce $n
d2h_ce d2h ce - rows device_to_host_memcpy_ce $n
p2p_write_ce p2p ce write rows device_to_device_memcpy_write_ce $pairs
p2p_read_ce p2p ce read rows device_to_device_memcpy_read_ce $pairs
p2p_write_sm p2p sm write rows device_to_device_memcpy_write_sm $pairs
p2p_read_sm p2p sm read rows device_to_device_memcpy_read_sm $pairs
bidir_ce bidir ce - rows device_to_device_bidirectional_memcpy_write_ce $pairs
bidir_sm bidir sm - rows device_to_device_bidirectional_memcpy_write_sm $pairs
one2all_ce one2all ce - aggregate one_to_all_write_ce $n
one2all_sm one2all sm - aggregate one_to_all_write_sm $n
all2one_ce all2one ce - aggregate all_to_one_write_ce $n
all2one_sm all2one sm - aggregate all_to_one_write_sm $n
all2host_ce all2host ce - aggregate all_to_host_memcpy_ce 1
host2all_ce host2all ce - aggregate host_to_all_memcpy_ce 1"
[ "$n" -ge 2 ] || MAP=$(grep -E '^(h2d|d2h)' <<<"$MAP")
MODES=${OR_BENCH_MODES:-$(awk '{print $2}' <<<"$MAP" | sort -u | tr '\n' ' ')}
MAP=$(awk -v m=" $MODES " 'index(m, " " $2 " ")' <<<"$MAP")
TESTS=$(awk '{print $6}' <<<"$MAP" | tr '\n' ' ')
CE_MODES=$(awk '$3 == "ce" {print $2}' <<<"$MAP" | sort -u | tr '\n' ' ')
SM_MODES=$(awk '$3 == "sm" {print $2}' <<<"$MAP" | sort -u | tr '\n' ' ')
: >"$R/bench-gpup2p.tsv"
: >"$R/bench-nvb.tsv"
for r in $(seq "$ROUNDS"); do
	s=$SECONDS
	# each engine on the modes nvbandwidth measures with it only (host paths: copy engines), so that
	# both tools do the same work and their wall times compare
	# shellcheck disable=SC2086
	{ [ -z "$CE_MODES" ] || "$BIN" --jsonl bench $CE_MODES --engine ce --pinned --p2p on --size "${SIZE_MIB}M"; } \
		>"$R/bench-$r.jsonl" 2>"$R/bench-$r.err" || echo "round $r: gpup2p bench --engine ce exit $?" >&2
	# shellcheck disable=SC2086
	{ [ -z "$SM_MODES" ] || "$BIN" --jsonl bench $SM_MODES --engine sm --pinned --p2p on --size "${SIZE_MIB}M"; } \
		>>"$R/bench-$r.jsonl" 2>>"$R/bench-$r.err" || echo "round $r: gpup2p bench --engine sm exit $?" >&2
	g=$((SECONDS - s)) s=$SECONDS
	# shellcheck disable=SC2086
	"$NVB" -b "$SIZE_MIB" -t $TESTS >"$R/nvb-$r.txt" 2>&1 || echo "round $r: nvbandwidth exit $?" >&2
	echo "round $r: gpup2p ${g}s, nvbandwidth $((SECONDS - s))s" >&2
	python3 - "$R/bench-$r.jsonl" "$R/nvb-$r.txt" "$R/bench-gpup2p.tsv" "$R/bench-nvb.tsv" <<PY
import json, statistics, sys
rows = []
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if isinstance(d, dict) and d.get("gbps") is not None:
        rows.append(d)
sums = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 3 and f[0] == "SUM":
        sums[f[1]] = float(f[2])
ga, na = open(sys.argv[3], "a"), open(sys.argv[4], "a")
for m in """$MAP""".splitlines():
    path, mode, eng, op, kind, test, div = m.split()
    sel = [d["gbps"] for d in rows if d["mode"] == mode and d["engine"] == eng
           and (op == "-" or d.get("op") == op)
           and (d["path"] == "aggregate") == (kind == "aggregate")
           and (mode not in ("h2d", "d2h") or d.get("memory") == "pinned")]
    if sel:
        ga.write("%s %.2f\n" % (path, statistics.median(sel)))
    test = test if test in sums else test + "_total"  # bidirectional tests: both directions' sum
    if test in sums:
        na.write("%s %.2f\n" % (path, sums[test] / int(div)))
PY
done
cat "$R/nvb-1.txt" | grep -i 'version\|^SUM' | head -20 >&2
python3 "$HERE/oracle_cmp.py" bench "$R/bench-gpup2p.tsv" "$R/bench-nvb.tsv"
