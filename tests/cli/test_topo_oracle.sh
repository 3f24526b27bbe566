#!/bin/bash
# topo against NVIDIA's own view of the same machine: each real capture under tests/fixtures that has
# a snapshot and vendor/topo-m.txt (`nvidia-smi topo -m` there, the same minute) gives the same matrix
# cell for cell, compared the way tests/device/oracle.sh compares on a live machine
# (tests/device/topo_cells.awk); and doctor on the capture's own snapshot raises no alarm.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
export NO_COLOR=1
unset GPUP2P_ROOT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

n=0
for v in tests/fixtures/*/vendor/topo-m.txt; do
	name=$(basename "$(dirname "$(dirname "$v")")")
	root=$BUILD/fixtures/$name/snapshot
	[ -d "$root" ] || { nok "$name: no snapshot under $root (make fixtures)"; continue; }
	n=$((n + 1))
	"$BIN" --root "$root" topo >"$T/topo" 2>"$T/err"
	rc=$?
	[ $rc -eq 0 ] && ok "$name: topo runs on the snapshot" || nok "$name: topo exit $rc: $(head -3 "$T/err")"
	if awk -f tests/device/topo_cells.awk "$T/topo" "$v" >"$T/diff"; then
		ok "$name: topo = nvidia-smi topo -m, cell for cell"
	else
		nok "$name: topo differs from nvidia-smi topo -m: $(head -5 "$T/diff" | tr '\n' ';')"
	fi
	# byte for byte too, once the underline nvidia-smi writes around its header is dropped
	sed 's/\x1b\[[0-9]*m//g' "$v" | diff -q - "$T/topo" >/dev/null &&
		ok "$name: topo = nvidia-smi topo -m, byte for byte" || nok "$name: topo's bytes differ from nvidia-smi's"
	# the comparer itself: a planted difference in one cell is one line naming it
	sed '2s/\t0\t\t/\t1\t\t/' "$T/topo" >"$T/planted"
	awk -f tests/device/topo_cells.awk "$T/planted" "$v" >"$T/diff"
	[ $? -eq 1 ] && [ "$(wc -l <"$T/diff")" -eq 1 ] && grep -q "GPU0 / NUMA Affinity: gpup2p '1', nvidia-smi '0'" "$T/diff" &&
		ok "$name: a planted NUMA cell is caught, one line" || nok "$name: planted cell: $(cat "$T/diff")"
	"$BIN" --root "$root" doctor -q >"$T/doc" 2>&1
	rc=$?
	[ $rc -eq 0 ] && ok "$name: doctor on the healthy machine's snapshot: no alarm" ||
		nok "$name: doctor exit $rc: $(head -3 "$T/doc")"
done
[ $n -gt 0 ] && ok "$n real captures compared" || nok "no real capture with a snapshot and vendor/topo-m.txt"
