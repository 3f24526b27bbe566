#!/bin/bash
# oracle.sh's bench comparison: oracle_bench.sh GPUP2P NVBANDWIDTH RAWDIR. ROUNDS (3) alternating
# rounds of gpup2p bench (--jsonl) and nvbandwidth (-b SIZE_MIB, default 512) on the same paths;
# each round's figure per path goes to RAWDIR/bench-{gpup2p,nvb}.tsv, oracle_cmp.py bench prints the
# medians and ratios (below 1.00x a disagreement only with OR_STRICT_BENCH=1). OR_PRINT_MAP=1: print
# the map (path, gpup2p mode engine op kind, nvbandwidth test, divisor) and exit.
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
# path  gpup2p: mode engine op kind(rows|aggregate)  nvbandwidth test  its divisor. op "-": a row with
# no op (null); duplex: run with --duplex. Every single-node bandwidth test nvbandwidth v0.8 has (the
# table in gpup2p-bench(1)). Latency (kind "latency", op = the rows' path): nvbandwidth's SM chases
# walk ~1 MB from the chain's start on each SM in turn (1,000,000 loads over the SMs, 128-byte
# stride), so gpup2p chases a 1 MiB chain (--size 1M; its default, twice L2, measures DRAM); the
# figure is ns per load, and oracle_cmp.py's ratio is nvbandwidth's over gpup2p's.
MAP=""
for e in ce sm; do
	MAP="$MAP
h2d_$e h2d $e - rows host_to_device_memcpy_$e $n
d2h_$e d2h $e - rows device_to_host_memcpy_$e $n
h2d_duplex_$e h2d $e duplex rows host_to_device_bidirectional_memcpy_$e $n
d2h_duplex_$e d2h $e duplex rows device_to_host_bidirectional_memcpy_$e $n
p2p_write_$e p2p $e write rows device_to_device_memcpy_write_$e $pairs
p2p_read_$e p2p $e read rows device_to_device_memcpy_read_$e $pairs
bidir_$e bidir $e write rows device_to_device_bidirectional_memcpy_write_$e $pairs
bidir_read_$e bidir $e read rows device_to_device_bidirectional_memcpy_read_$e $pairs
one2all_$e one2all $e write aggregate one_to_all_write_$e $n
all2one_$e all2one $e write aggregate all_to_one_write_$e $n
all2host_$e all2host $e - aggregate all_to_host_memcpy_$e 1
all2host_duplex_$e all2host $e duplex aggregate all_to_host_bidirectional_memcpy_$e 1
host2all_$e host2all $e - aggregate host_to_all_memcpy_$e 1
host2all_duplex_$e host2all $e duplex aggregate host_to_all_bidirectional_memcpy_$e 1"
done
# nvbandwidth's pattern read tests, by what they do (its testcases_*.cpp): one_to_all_read_ce has the
# one GPU's copy engines pull from every peer (gpup2p all2one --op read), all_to_one_read_ce every peer
# pull from the one (one2all --op read); the _sm ones run their kernel on the GPU holding the source
# (PREFER_SRC_CONTEXT), remote writes: all2one and one2all --sm, writing
MAP="${MAP#?}
all2one_read_ce all2one ce read aggregate one_to_all_read_ce $n
one2all_read_ce one2all ce read aggregate all_to_one_read_ce $n
all2one_sm_as_read all2one sm write aggregate one_to_all_read_sm $n
one2all_sm_as_read one2all sm write aggregate all_to_one_read_sm $n
d2d_ce d2d ce - rows device_local_copy $n
lat_host_sm latency sm host latency host_device_latency_sm $n
lat_p2p_sm latency sm p2p latency device_to_device_latency_sm $pairs"
if [ -n "${OR_PRINT_MAP:-}" ]; then
	echo "$MAP"
	exit 0
fi
[ "$n" -ge 2 ] || MAP=$(grep -E '^(h2d|d2h|d2d|all2host|host2all|lat_host)' <<<"$MAP")
MODES=${OR_BENCH_MODES:-$(awk '{print $2}' <<<"$MAP" | sort -u | tr '\n' ' ')}
MAP=$(awk -v m=" $MODES " 'index(m, " " $2 " ")' <<<"$MAP")
TESTS=$(awk '{print $6}' <<<"$MAP" | tr '\n' ' ')
CE_MODES=$(awk '$3 == "ce" {print $2}' <<<"$MAP" | sort -u | tr '\n' ' ')
SM_MODES=$(awk '$3 == "sm" {print $2}' <<<"$MAP" | sort -u | tr '\n' ' ')
: >"$R/bench-gpup2p.tsv"
: >"$R/bench-nvb.tsv"
for r in $(seq "$ROUNDS"); do
	s=$SECONDS
	: >"$R/bench-$r.jsonl"
	# each engine on the modes nvbandwidth measures with it only, so that both tools do the same work
	# and their wall times compare; peer modes with both ops; host modes plain, then duplex
	for e in ce sm; do
		EM=$CE_MODES
		[ $e = sm ] && EM=$SM_MODES
		PEER=$(tr ' ' '\n' <<<"$EM" | grep -xE 'p2p|bidir|one2all|all2one' | tr '\n' ' ')
		REST=$(tr ' ' '\n' <<<"$EM" | grep -vxE 'p2p|bidir|one2all|all2one|latency' | tr '\n' ' ')
		HOST=$(tr ' ' '\n' <<<"$EM" | grep -xE 'h2d|d2h|all2host|host2all' | tr '\n' ' ')
		for args in "${PEER:+$PEER --op both --p2p on}" "$REST" "${HOST:+$HOST --duplex}"; do
			[ -n "${args// /}" ] || continue
			# shellcheck disable=SC2086
			"$BIN" --jsonl bench $args --engine $e --pinned --size "${SIZE_MIB}M" \
				>>"$R/bench-$r.jsonl" 2>>"$R/bench-$r.err" || echo "round $r: gpup2p bench $args --engine $e: exit $?" >&2
		done
	done
	case " $SM_MODES " in *" latency "*)
		"$BIN" --jsonl bench latency --sm --size 1M >>"$R/bench-$r.jsonl" 2>>"$R/bench-$r.err" ||
			echo "round $r: gpup2p bench latency --sm: exit $?" >&2 ;;
	esac
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
    if isinstance(d, dict) and (d.get("gbps") is not None or (d.get("mode") == "latency" and d.get("us"))):
        rows.append(d)
sums = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 3 and f[0] == "SUM":
        sums[f[1]] = float(f[2])
ga, na = open(sys.argv[3], "a"), open(sys.argv[4], "a")
for m in """$MAP""".splitlines():
    path, mode, eng, op, kind, test, div = m.split()
    if kind == "latency":  # ns per load, each row a chase (path host or p2p)
        sel = [d["us"] * 1e3 for d in rows if d["mode"] == mode and d["engine"] == eng and d["path"] == op]
    else:
        sel = [d["gbps"] for d in rows if d["mode"] == mode and d["engine"] == eng
               and d.get("op") == (None if op == "-" else op)
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
