#!/bin/bash
# One field list per record (issue 23): each record's struct gp_field list against what gpup2p prints
# from it, in every format: the CSV header is the list's columns, each JSON lines record has the list's
# keys with its CSV row's values, every JSON key has a CSV column, and the text table's header is the
# list's headers (tests/cli/record_fields.py). copy and bench over the libcuda double, bench rdma over
# libibverbs', bar and acs on a fixture tree.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_NOPEER FAKECUDA_CORRUPT FAKECUDA_FAIL FAKEVERBS_GBPS
export RECORD_FIELDS_WALL=host_us # the host's own timing of a latency copy: each run its own
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FX=$PWD/$BUILD/fixtures

# check NAME SOURCE LIST VIEW ARGS...: gpup2p ARGS in CSV, JSON lines and (VIEW not "-") text, against LIST
# (VIEW: a table's view, or block: a text block per record)
check() {
	local name=$1 src=$2 list=$3 view=$4
	shift 4
	"$BIN" "$@" --csv >"$T/csv" 2>/dev/null
	"$BIN" "$@" --jsonl >"$T/jsonl" 2>/dev/null
	if [ "$view" = - ]; then
		python3 tests/cli/record_fields.py "$src" "$list" "$T/csv" "$T/jsonl"
	else
		if [ "$view" = block ]; then "$BIN" "$@" >"$T/text" 2>/dev/null; else "$BIN" -q "$@" >"$T/text" 2>/dev/null; fi
		python3 tests/cli/record_fields.py "$src" "$list" "$T/csv" "$T/jsonl" "$T/text" "$view"
	fi | sed "s/^\(ok\|not ok\) - /&$name: /"
}

[ -f "$BUILD/tests/fakecuda/libcuda.so.1" ] || { nok "test double libcuda not built"; exit 0; }
# every measurement row: bandwidth, latency, an SM chase (stride, chain), wrong data (bad_offset), a
# floor (min_gbps, below_min), a figure its links cannot carry (max_gbps, impossible)
check "bench" cli/xfer_out.c row_fields none bench --size 64K --iters 2 --reps 3
check "copy --all-pairs" cli/xfer_out.c row_fields none copy --all-pairs --size 64K --iters 3
check "bench latency --sm" cli/xfer_out.c row_fields none bench latency --sm --size 1M --iters 10 --reps 2
FAKECUDA_CORRUPT=d2d check "bench d2d, wrong data" cli/xfer_out.c row_fields none bench d2d --gpu 0 --size 1M \
	--iters 2 --reps 2
check "bench --min-bw" cli/xfer_out.c row_fields none bench h2d --pinned --size 64K --iters 2 --reps 2 --min-bw 30
FAKECUDA_BUSIDS=0000:00:06.0,0000:00:07.0,0000:00:08.0,0000:00:09.0 FAKECUDA_NVLINK_GBPS=2000 \
	check "bench one2all, above the links" cli/xfer_out.c row_fields none --root "$FX/h200x4-hgx/snapshot" \
	bench one2all --sm --size 8M --iters 4 --reps 2

VERBS=$PWD/$BUILD/tests/fakeverbs/libibverbs.so.1
if [ -f "$VERBS" ]; then
	export GPUP2P_LIBIBVERBS=$VERBS FAKEVERBS_DEVICES=rxe0
	check "bench rdma" cli/bench_rdma_out.c rdma_fields 0 bench rdma --iters 20 --reps 3
	check "bench rdma --lat" cli/bench_rdma_out.c rdma_fields 1 bench rdma --lat --iters 20 --reps 3
	unset GPUP2P_LIBIBVERBS FAKEVERBS_DEVICES
else
	nok "test double $VERBS not built"
fi

for fx in dgx-h100 workstation nonroot; do
	check "$fx bar" cli/cmd_bar.c bar_fields block --root "$FX/$fx" bar
	check "$fx bar --all" cli/cmd_bar.c bar_fields - --root "$FX/$fx" bar --all
	check "$fx acs" cli/cmd_acs.c acs_fields block --root "$FX/$fx" acs
	[ $fx = nonroot ] || # (ACS unreadable there: no plan)
		check "$fx acs --disable" cli/acs_change.c change_fields - --root "$FX/$fx" acs --disable --all --dry-run
done
# a finding's list (doctor's JSON) on its own
python3 tests/cli/record_fields.py cli/doctor_out.c finding_fields

# and the check fails when a format drifts from its list: a JSON key without its CSV column, a CSV column
# out of place, a table header that is not the list's
sed 's/{ "impossible", "impossible", 24,/{ "impossible", NULL, 0,/' cli/xfer_out.c >"$T/drift1.c"
sed 's/{ "gbps", "gbps", 11,/{ "gbps", "gbps", 31,/' cli/xfer_out.c >"$T/drift2.c"
sed 's/"t_p99\[us\]", GP_FIELD_NUM, LATV, f_us_p99, NULL, 7,/"t_p99[us]", GP_FIELD_NUM, LATV, f_us_p99, NULL, 4,/' \
	cli/bench_rdma_out.c >"$T/drift3.c"
"$BIN" bench h2d --size 64K --iters 2 --reps 2 --csv >"$T/csv"
"$BIN" bench h2d --size 64K --iters 2 --reps 2 --jsonl >"$T/jsonl"
n=0
python3 tests/cli/record_fields.py "$T/drift1.c" row_fields >/dev/null || n=$((n + 1))
python3 tests/cli/record_fields.py "$T/drift2.c" row_fields "$T/csv" "$T/jsonl" >/dev/null || n=$((n + 1))
if [ -f "$VERBS" ]; then
	export GPUP2P_LIBIBVERBS=$VERBS FAKEVERBS_DEVICES=rxe0
	"$BIN" bench rdma --lat --iters 20 --reps 3 --csv >"$T/csv"
	"$BIN" bench rdma --lat --iters 20 --reps 3 --jsonl >"$T/jsonl"
	"$BIN" -q bench rdma --lat --iters 20 --reps 3 >"$T/text"
	python3 tests/cli/record_fields.py "$T/drift3.c" rdma_fields "$T/csv" "$T/jsonl" "$T/text" 1 >/dev/null ||
		n=$((n + 1))
fi
# ... and a text line that is no field's (a label the list does not hold)
sed 's/"ACSCap", GP_FIELD_STR/"ACSCapX", GP_FIELD_STR/' cli/cmd_acs.c >"$T/drift4.c"
sed 's/"Resizable BAR", GP_FIELD_JSON/"Resizable", GP_FIELD_JSON/' cli/cmd_bar.c >"$T/drift5.c"
for d in "drift4.c acs_fields acs" "drift5.c bar_fields bar"; do
	# shellcheck disable=SC2086
	set -- $d
	"$BIN" --root "$FX/dgx-h100" "$3" --csv >"$T/csv"
	"$BIN" --root "$FX/dgx-h100" "$3" --jsonl >"$T/jsonl"
	"$BIN" --root "$FX/dgx-h100" "$3" >"$T/text"
	python3 tests/cli/record_fields.py "$T/$1" "$2" "$T/csv" "$T/jsonl" "$T/text" block >/dev/null || n=$((n + 1))
done
[ $n = 5 ] && ok "a key without a CSV column, a column or header out of place, a text line no field's: each found" ||
	nok "the planted drifts: $n of 5 found"
