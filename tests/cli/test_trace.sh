#!/bin/bash
# The read trace ties snapshot to doctor's checks: `-vv` prints each path read beneath the root and what
# it met; every path doctor reads on a fixture (all checks, with --kmsg) must be in the snapshot of that
# fixture, so the snapshot's file list and the checks cannot drift. Checks that run only live (--list's
# "active": --active copies) read nothing offline and are the only ones exempt.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FX=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# reads ROOT ARGS...: the paths gpup2p --root ROOT -vv ARGS read successfully, one per line, sorted
reads() {
	local root=$1
	shift
	"$BIN" --root "$root" -vv "$@" 2>&1 >/dev/null | sed -n 's/^gpup2p: read \(.*\): ok$/\1/p' | sort -u
}

# missing SNAP: the paths on stdin that SNAP lacks (file, folder or link)
missing() {
	local p
	while read -r p; do
		[ -e "$1$p" ] || [ -L "$1$p" ] || echo "$p"
	done
}

# --- the trace itself --------------------------------------------------------------------------------------
cp -r "$FX/h200x2" "$T/gone"
rm "$T/gone/proc/cmdline"
err=$("$BIN" --root "$T/gone" -vv doctor --only iommu.cmdline 2>&1 >/dev/null)
grep -q '^gpup2p: read /proc/cmdline: No such file or directory$' <<<"$err" &&
	grep -q '^gpup2p: read /sys/bus/pci/devices: ok$' <<<"$err" &&
	ok "-vv: each path read beneath the root, with ok or its errno" || nok "-vv trace: $err"
out=$("$BIN" --root "$T/gone" -v doctor --only iommu.cmdline 2>&1 >/dev/null)
grep -q 'gpup2p: read ' <<<"$out" && nok "-v alone traces: $out" || ok "-v alone: no trace"
out=$("$BIN" --root "$T/gone" -vv topo 2>/dev/null)
[ "$out" = "$("$BIN" --root "$T/gone" topo 2>/dev/null)" ] && ok "-vv: standard output unchanged" ||
	nok "-vv changed stdout"

# --- every path doctor reads is in the snapshot -------------------------------------------------------------
# the generated fixtures, and two real captures (whose /proc, driver and device-node files the generated
# ones lack)
tar -C "$T" -xzf tests/fixtures/h200x2-live/h200-live.tar.gz && mv "$T/h200-live" "$T/real-h200x2"
cp -r "$FX/h200x4-hgx/snapshot" "$T/real-h200x4-hgx"
n=0
for f in "$FX"/*/ "$T"/real-*/; do
	f=${f%/}
	name=$(basename "$f")
	[ -d "$f/sys" ] || continue
	# a root topo cannot read is refused by snapshot (test_snapshot.sh); doctor fails on it too
	"$BIN" --root "$f" snapshot --dir "$T/snap-$name" >/dev/null 2>&1 || continue
	n=$((n + 1))
	lost=$(reads "$f" doctor --kmsg | missing "$T/snap-$name")
	if [ -z "$lost" ]; then
		ok "$name: every path doctor read is in its snapshot ($(reads "$f" doctor --kmsg | wc -l) paths)"
		continue
	fi
	for id in $("$BIN" doctor --list | awk '$3 == "static" { print $1 }'); do
		l=$(reads "$f" doctor --kmsg --only "$id" | missing "$T/snap-$name" | head -3 | tr '\n' ' ')
		[ -n "$l" ] && nok "$name: $id reads what snapshot does not capture: $l"
	done
done
[ "$n" -ge 8 ] && ok "$n fixtures compared" || nok "only $n fixtures could be snapshot"

# --- the comparison can fail: a file the snapshot lost ---------------------------------------------------------
rm -f "$T/snap-h200x2/proc/cmdline"
lost=$(reads "$FX/h200x2" doctor --only iommu.cmdline | missing "$T/snap-h200x2")
[ "$lost" = /proc/cmdline ] && ok "planted: a snapshot without proc/cmdline is caught" ||
	nok "planted loss not caught: '$lost'"
