#!/bin/bash
# --root never reads or writes outside the root: fixture copies whose files, folders and links lead
# out of it (absolute and ../ symlinks), with openat2 and with the realpath fallback; devices and
# pipes under a root are not opened.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FX=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_TEST_NONROOT_WRITES=1
unset GPUP2P_ROOT GPUP2P_TEST_NO_OPENAT2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/out"

# fresh NAME: a private copy of the workstation fixture at $T/NAME
fresh() { rm -rf "${T:?}/$1" && cp -a "$FX/workstation" "$T/$1"; }
# dev NAME BDF: the real folder of a function in copy NAME
dev() { readlink -f "$T/$1/sys/bus/pci/devices/$2"; }
# out_link TARGET LINK [rel]: make LINK a symlink to TARGET (outside), absolute or ../-relative
out_link() {
	rm -rf "$2"
	if [ "${3:-}" = rel ]; then ln -s "$(realpath -m --relative-to="$(dirname "$2")" "$1")" "$2"; else ln -s "$1" "$2"; fi
}
sum() { md5sum <"$1"; }

for how in abs rel; do
	for mode in openat2 fallback; do
		[ $mode = fallback ] && export GPUP2P_TEST_NO_OPENAT2=1 || unset GPUP2P_TEST_NO_OPENAT2
		fresh cfg
		cp "$(dev cfg 0000:02:08.0)/config" "$T/out/config"
		out_link "$T/out/config" "$(dev cfg 0000:02:08.0)/config" $how
		s0=$(sum "$T/out/config")
		expect 3 "0000:02:08.0/config: a symlink leads outside the root" --root "$T/cfg" topo
		expect 3 "0000:02:08.0/config: a symlink leads outside the root" --root "$T/cfg" acs --disable
		expect 3 "0000:02:08.0/config: a symlink leads outside the root" --root "$T/cfg" snapshot --dir "$T/cfg-snap"
		[ "$(sum "$T/out/config")" = "$s0" ] && [ ! -e "$T/cfg-snap" ] &&
			ok "$how config link out ($mode): acs --disable wrote nothing outside, snapshot wrote nothing" ||
			nok "$how config link out ($mode): outside file changed or snapshot written"
	done
done
unset GPUP2P_TEST_NO_OPENAT2

fresh res
cp "$(dev res 0000:03:00.0)/resource" "$T/out/resource"
out_link "$T/out/resource" "$(dev res 0000:03:00.0)/resource" rel
expect 3 "0000:03:00.0/resource: a symlink leads outside the root" --root "$T/res" bar

fresh fac
cp "$T/fac/gpup2p/gpu-facts" "$T/out/gpu-facts"
out_link "$T/out/gpu-facts" "$T/fac/gpup2p/gpu-facts"
expect 3 "gpu-facts: a symlink leads outside the root" --root "$T/fac" topo
expect 3 "gpu-facts: a symlink leads outside the root" --root "$T/fac" snapshot --dir "$T/fac-snap"

fresh bus
mv "$T/bus/sys/bus/pci/devices" "$T/out/devices"
ln -s "$T/out/devices" "$T/bus/sys/bus/pci/devices"
expect 3 "devices: a symlink leads outside the root" --root "$T/bus" topo

# text files and links libpci does not need: read as unknown, never copied
fresh txt
d=$(dev txt 0000:03:00.0)
echo 0-123 >"$T/out/cpus"; echo 1 >"$T/out/numa"; echo "2.5 GT/s PCIe" >"$T/out/speed"
out_link "$T/out/cpus" "$d/local_cpulist"
out_link "$T/out/numa" "$d/numa_node" rel
out_link "$T/out/speed" "$d/current_link_speed"
mkdir -p "$T/out/groups/9" "$T/out/drivers/vfio-pci"
out_link "$T/out/groups/9" "$d/iommu_group" rel
out_link "$T/out/drivers/vfio-pci" "$d/driver"
"$BIN" --root "$T/txt" topo --json >"$T/txt.json" 2>"$T/txt.err"; rc=$?
python3 - "$T/txt.json" <<'EOF' && [ $rc -eq 0 ] && ok "text files out of the root read as unknown" || nok "text files out: exit $rc $(cat "$T/txt.err")"
import json, sys
g = [d for d in json.load(open(sys.argv[1]))["devices"] if d["bdf"] == "0000:03:00.0"][0]
assert g["numa_node"] is None and g["cpu_affinity"] != "0-123" and g["link"]["gen"] != 1, g
EOF
"$BIN" --root "$T/txt" bar | grep -A8 "^GPU0" | grep -q "IOMMU group: none" && ok "an IOMMU group link out names no group" ||
	nok "IOMMU group link out of the root was followed"
"$BIN" --root "$T/txt" -q snapshot --dir "$T/txt-snap"; rc=$?
[ $rc -eq 0 ] && ! grep -rqs -e 0-123 -e "2.5 GT/s" "$T/txt-snap" && [ ! -e "$T/txt-snap/sys/kernel/iommu_groups/9" ] &&
	! find "$T/txt-snap" -name vfio-pci | grep -q . && ok "snapshot copies nothing from outside the root" ||
	nok "snapshot: exit $rc, or outside content copied"
for args in "topo --json" "bar --json" "acs --json"; do
	# shellcheck disable=SC2086 # the JSON envelope names the root each was read from: all else the same
	cmp -s <("$BIN" --root "$T/txt" $args 2>&1 | sans_root) <("$BIN" --root "$T/txt-snap" $args 2>&1 | sans_root) &&
		ok "$args: replay of that snapshot prints the same" || nok "$args differs on replay"
done

# the ACS state file stays beneath the root
fresh run
ln -s "$T/out/run" "$T/run/run"; mkdir -p "$T/out/run"
expect 3 "run/gpup2p/acs.state: a symlink leads outside the root" --root "$T/run" acs --disable
[ -z "$(ls -A "$T/out/run")" ] && cmp -s "$(dev run 0000:02:08.0)/config" "$FX/workstation/sys/bus/pci/devices/0000:02:08.0/config" &&
	ok "acs --disable with run/ linked out: nothing written, inside or out" || nok "acs --disable wrote with run/ linked out"

# a pipe under a root is never opened (libpci's open would block for ever)
fresh fifo
d=$(dev fifo 0000:03:00.0)
rm "$d/subsystem_vendor" && mkfifo "$d/subsystem_vendor"
out=$(timeout 20 "$BIN" --root "$T/fifo" topo 2>&1); rc=$?
[ $rc -eq 3 ] && grep -q "subsystem_vendor: not a regular file" <<<"$out" && ok "a pipe libpci would open: exit 3, no hang" ||
	nok "pipe as subsystem_vendor: exit $rc: $out"
fresh fifo
d=$(dev fifo 0000:03:00.0)
rm "$d/numa_node" && mkfifo "$d/numa_node"
timeout 20 "$BIN" --root "$T/fifo" topo >/dev/null 2>&1; rc=$?
timeout 20 "$BIN" --root "$T/fifo" -q snapshot --dir "$T/fifo-snap"; rc2=$?
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && ok "a pipe as numa_node: unknown to topo, left out by snapshot, no hang" ||
	nok "pipe as numa_node: topo exit $rc, snapshot exit $rc2"
