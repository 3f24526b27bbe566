#!/bin/bash
# CLI golden tests: every output format of topo and bar on every fixture, plus the
# real capture's matrix against nvidia-smi's own output (the oracle).
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
. tests/cli/cases.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for fx in $FIXTURES; do
	for c in "${CASES[@]}"; do
		name=${c%%|*}
		args=${c#*|}
		# shellcheck disable=SC2086
		"$BIN" --root "$BUILD/fixtures/$fx" $args >"$tmp/out" 2>"$tmp/err"
		rc=$?
		want=0
		[ -f "tests/cli/golden/$fx/$name.rc" ] && want=$(cat "tests/cli/golden/$fx/$name.rc")
		if [ $rc -ne "$want" ]; then
			echo "not ok - $fx $name: exit $rc, want $want"; cat "$tmp/err"; continue
		fi
		if diff -u "tests/cli/golden/$fx/$name.out" "$tmp/out" >"$tmp/diff"; then
			echo "ok - $fx $name matches golden"
		else
			echo "not ok - $fx $name differs from golden"; head -20 "$tmp/diff"
		fi
		if [ -f "tests/cli/golden/$fx/$name.err" ]; then
			sed "s|$PWD/||g" "$tmp/err" | diff -q "tests/cli/golden/$fx/$name.err" - >/dev/null &&
				echo "ok - $fx $name stderr matches" || { echo "not ok - $fx $name stderr"; cat "$tmp/err"; }
		elif [ -s "$tmp/err" ]; then
			echo "not ok - $fx $name: unexpected stderr"; cat "$tmp/err"
		fi
		case $name in
		*-json)
			python3 -m json.tool "$tmp/out" >/dev/null && echo "ok - $fx $name is valid JSON" ||
				echo "not ok - $fx $name is not valid JSON";;
		*-jsonl)
			python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/out" 2>/dev/null &&
				echo "ok - $fx $name: every line is JSON" || echo "not ok - $fx $name: bad JSON line";;
		esac
	done
done

# The capture's matrix equals nvidia-smi's (codes only; nvidia-smi prints 0 for an unknown
# NUMA node, gpup2p prints N/A).
cap=tests/fixtures/h200x2-capture/nvidia-smi-topo-m.txt
grep -E '^GPU[0-9]' "$cap" | awk -F'\t' '{ s=$1; for (i=2;i<=3;i++) { gsub(/ /,"",$i); s=s" "$i } print s }' >"$tmp/oracle"
"$BIN" --root "$BUILD/fixtures/h200x2" topo -q | grep -E '^GPU[0-9]' |
	awk -F'\t' '{ s=$1; for (i=2;i<=3;i++) { gsub(/ /,"",$i); s=s" "$i } print s }' >"$tmp/ours"
if [ -s "$tmp/oracle" ] && diff -u "$tmp/oracle" "$tmp/ours"; then
	echo "ok - h200x2 matrix equals nvidia-smi topo -m"
else
	echo "not ok - h200x2 matrix differs from nvidia-smi topo -m"
fi
cpu_oracle=$(grep -E '^GPU0' "$cap" | cut -f4)
cpu_ours=$("$BIN" --root "$BUILD/fixtures/h200x2" topo -q | grep -E '^GPU0' | cut -f4)
[ "$cpu_oracle" = "$cpu_ours" ] && echo "ok - h200x2 CPU affinity equals nvidia-smi's ($cpu_ours)" ||
	echo "not ok - CPU affinity: nvidia-smi $cpu_oracle, gpup2p $cpu_ours"
# BAR1 total from nvidia-smi -q (262144 MiB) equals the aperture gpup2p reads from sysfs
bar1=$(grep -A1 'BAR1 Memory Usage' tests/fixtures/h200x2-capture/nvidia-smi-q-excerpt.txt | awk '/Total/ {print $3; exit}')
ap=$("$BIN" --root "$BUILD/fixtures/h200x2" bar --csv --no-header | head -1 | cut -d, -f4)
[ -n "$bar1" ] && [ "$ap" = "$((bar1 * 1024 * 1024))" ] && echo "ok - H200 aperture $ap = nvidia-smi BAR1 $bar1 MiB" ||
	echo "not ok - H200 aperture $ap vs nvidia-smi BAR1 $bar1 MiB"
