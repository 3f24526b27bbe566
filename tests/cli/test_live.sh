#!/bin/bash
# Replay of a snapshot taken live on the 2x H200 machine: output must equal what gpup2p printed
# live there (tests/fixtures/h200x2-live/README.md).
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
LIVE=tests/fixtures/h200x2-live
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xzf "$LIVE/h200-live.tar.gz" && echo "ok - live snapshot unpacks" || echo "not ok - unpack"
"$BIN" --root "$tmp/h200-live" topo --json >"$tmp/topo.json" 2>&1
# the NUMA columns and the envelope came after the live output was recorded (topo_live_cmp.py)
python3 tests/cli/topo_live_cmp.py "$tmp/topo.json" "$LIVE/topo.json" &&
	echo "ok - replayed topo --json equals the live output" || echo "not ok - replayed topo --json differs"
"$BIN" --root "$tmp/h200-live" bar --csv >"$tmp/bar.csv" 2>&1
# the columns added since (new columns come last: gpup2p(1), JSON OUTPUT) are left out
python3 -c 'import csv,sys
new, old = (list(csv.reader(open(f))) for f in sys.argv[1:3])
assert len(new) == len(old) and all(n[:len(o)] == o for n, o in zip(new, old))' "$tmp/bar.csv" "$LIVE/bar.csv" &&
	echo "ok - replayed bar --csv equals the live output" ||
	{ echo "not ok - replayed bar --csv differs"; diff "$LIVE/bar.csv" "$tmp/bar.csv" | head; }
GPUP2P_PCI_IDS=/dev/null "$BIN" --root "$tmp/h200-live" bar >"$tmp/bar.txt" 2>&1
cmp -s "$tmp/bar.txt" "$LIVE/bar.txt" && echo "ok - replayed bar equals the live output" ||
	{ echo "not ok - replayed bar differs"; diff "$LIVE/bar.txt" "$tmp/bar.txt" | head; }
# the live NVLink facts: NV18 through the links NVML reported
grep -q '^nvlink 0000:00:06.0 0000:00:07.0 18$' "$tmp/h200-live/gpup2p/gpu-facts" &&
	echo "ok - live NVML facts recorded NV18" || echo "not ok - NVML facts"
