#!/bin/bash
# snapshot -> unpack -> replay prints exactly what the source printed, on every fixture.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
FX=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for fx in h200x2 dgx-h100 seed4x2 workstation nonroot; do
	if ! "$BIN" --root "$FX/$fx" -q snapshot "$tmp/$fx-snap.tar.gz" 2>"$tmp/err"; then
		echo "not ok - snapshot of $fx: $(cat "$tmp/err")"; continue
	fi
	mkdir -p "$tmp/unpack-$fx"
	tar -C "$tmp/unpack-$fx" -xzf "$tmp/$fx-snap.tar.gz" || { echo "not ok - unpack $fx"; continue; }
	replay=$tmp/unpack-$fx/$fx-snap
	[ -f "$replay/gpup2p/gpu-facts" ] && echo "ok - $fx: gpu-facts recorded" || echo "not ok - $fx: no gpu-facts"
	for args in "topo" "topo --tree --all" "topo --json" "topo --csv" "topo --jsonl" "bar" "bar --all --json" "bar --csv" "acs" "acs --json"; do
		# shellcheck disable=SC2086
		"$BIN" --root "$FX/$fx" $args >"$tmp/a" 2>&1
		# shellcheck disable=SC2086
		"$BIN" --root "$replay" $args >"$tmp/b" 2>&1
		if cmp -s "$tmp/a" "$tmp/b"; then
			echo "ok - $fx: $args identical on replay"
		else
			echo "not ok - $fx: $args differs on replay"; diff "$tmp/a" "$tmp/b" | head -10
		fi
	done
done

# the config space is captured byte for byte, at the length the reader saw
cmp -s "$FX/h200x2/sys/bus/pci/devices/0000:00:06.0/config" \
	"$tmp/unpack-h200x2/h200x2-snap/sys/bus/pci/devices/0000:00:06.0/config" &&
	echo "ok - config space captured byte for byte" || echo "not ok - config space differs"
[ "$(stat -c %s "$tmp/unpack-nonroot/nonroot-snap/sys/bus/pci/devices/0000:03:00.0/config")" -eq 64 ] &&
	echo "ok - a 64-byte (non-root) config space stays 64 bytes" || echo "not ok - non-root config length"
# an existing file is not replaced without --force; --dir writes a folder
"$BIN" --root "$FX/h200x2" -q snapshot "$tmp/h200x2-snap.tar.gz" 2>/dev/null
[ $? -eq 64 ] && echo "ok - refuses to overwrite" || echo "not ok - overwrote without --force"
"$BIN" --root "$FX/h200x2" -q snapshot --force "$tmp/h200x2-snap.tar.gz" && echo "ok - --force replaces" ||
	echo "not ok - --force"
"$BIN" --root "$FX/seed4x2" -q snapshot --dir "$tmp/dir-snap" &&
	cmp -s <("$BIN" --root "$FX/seed4x2" topo) <("$BIN" --root "$tmp/dir-snap" topo) &&
	echo "ok - --dir snapshot replays" || echo "not ok - --dir snapshot"
# a snapshot of a root without NVML facts records that they were unavailable
grep -q '^unavailable ' "$tmp/dir-snap/gpup2p/gpu-facts" && echo "ok - unavailable facts recorded as such" ||
	echo "not ok - unavailable facts"
# unwritable destination: exit 2, no partial archive
"$BIN" --root "$FX/h200x2" -q snapshot /nonexistent-dir/x.tar.gz 2>/dev/null
rc=$?
[ $rc -eq 2 ] && [ ! -e /nonexistent-dir/x.tar.gz ] && echo "ok - unwritable destination exits 2" ||
	echo "not ok - unwritable destination exit $rc"
