#!/bin/bash
# Nothing is cut at a fixed size: snapshot copies files and lists whole (a file longer than its
# bound is an error naming it, never a shorter copy), and a text file too long for topo's buffer
# is said to be so, not read as its first part.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FX=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fresh() { rm -rf "${T:?}/$1" && cp -a "$FX/workstation" "$T/$1"; }

# /proc/modules of a machine with many modules: 100 KiB (the copy stopped at 64 KiB)
fresh mods
for i in $(seq 1 2500); do printf 'module_%04d 16384 0 - Live 0x0000000000000000\n' "$i"; done >"$T/mods/proc/modules"
[ "$(stat -c %s "$T/mods/proc/modules")" -gt 100000 ] || nok "setup: /proc/modules not over 100 KB"
"$BIN" --root "$T/mods" -q snapshot --dir "$T/mods-snap"; rc=$?
[ $rc -eq 0 ] && cmp -s "$T/mods/proc/modules" "$T/mods-snap/proc/modules" &&
	ok "a 100 KB /proc/modules is copied whole" ||
	nok "/proc/modules: exit $rc, copy of $(stat -c %s "$T/mods-snap/proc/modules" 2>/dev/null) bytes"

# a file over the bound (16 MiB): an error that names it, and no snapshot
fresh big
mkdir -p "$T/big/proc/driver/nvidia" && truncate -s 17M "$T/big/proc/driver/nvidia/params"
expect 3 "proc/driver/nvidia/params: longer than 16777216 bytes" --root "$T/big" snapshot --dir "$T/big-snap"
[ ! -e "$T/big-snap" ] && ok "a file over the bound: nothing written" || nok "a file over the bound: snapshot written"

# 300 RDMA devices (soft-RoCE-like, virtual): all captured (the list stopped at 256)
fresh rdma
for i in $(seq 0 299); do
	mkdir -p "$T/rdma/sys/class/infiniband/rxe$i/ports/1"
	echo "4: ACTIVE" >"$T/rdma/sys/class/infiniband/rxe$i/ports/1/state"
done
"$BIN" --root "$T/rdma" -q snapshot --dir "$T/rdma-snap"; rc=$?
n=$(find "$T/rdma-snap/sys/class/infiniband" -path '*/ports/1/state' 2>/dev/null | wc -l)
[ $rc -eq 0 ] && [ "$n" -eq 300 ] && ok "300 RDMA devices: all 300 captured" || nok "300 RDMA devices: exit $rc, $n captured"

# a local_cpulist longer than topo's 4 KiB buffer: a warning, not its first 4 KiB as the list
fresh cpus
d=$(readlink -f "$T/cpus/sys/bus/pci/devices/0000:03:00.0")
seq -s, 0 2 3000 >"$d/local_cpulist"
"$BIN" --root "$T/cpus" topo >/dev/null 2>"$T/err"; rc=$?
grep -q "local_cpulist: CPU list longer than 4095 bytes" "$T/err" && [ $rc -eq 0 ] &&
	ok "a CPU list over 4 KiB: warned about, read as unknown" || nok "long CPU list: exit $rc, stderr: $(head -2 "$T/err")"
