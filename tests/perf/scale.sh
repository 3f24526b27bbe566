#!/bin/bash
# Scale benchmark: a generated machine with N GPU/NIC functions and the time (and peak memory) each
# command takes on it, next to `lspci -tv` on the same tree (libpci's sysfs method, as gpup2p reads it). 8 host bridges on 2 sockets, each with a PCIe switch holding
# one GPU and one ConnectX PF; the rest of the N are the PFs' SR-IOV virtual functions, each an RDMA
# device (mlx5_N) as on a real host, so every one of them is a NIC in the matrix; each VF's physfn link
# names its PF.
#
# usage: BUILD=build tests/perf/scale.sh [N...]      time the commands (default N: 1000 4000)
#        CMDS="acs;doctor" ... scale.sh N...         only these (';'-separated; "lspci" is lspci -tv;
#                                                    "untar" is tar -xzf of the tree's snapshot archive,
#                                                    the floor for writing snapshot --dir's entries)
#        BIN=path/to/gpup2p ... scale.sh N...        another binary (a baseline build)
#        SCALE_HOST=full ... scale.sh N...          a host as doctor finds a healthy one: every RDMA
#                                                    device's port up with its counters and uverbs node,
#                                                    the modules loaded (nvidia, peermem, ib_uverbs),
#                                                    AER counters, device nodes (fixtures in fxfullN)
#        tests/perf/scale.sh --spec N                print the fixture spec
#        tests/perf/scale.sh --fixture N DIR         generate the fixture into DIR, unless DIR already
#                                                    holds the one this spec and gen.py make
# Output: one line per N and command: "N=1000 topo: wall 0.21 s, user 0.09 s, sys 0.12 s, rss 9 MB"
# (the run with the least CPU, user + sys, of RUNS (default 3); rss: its peak resident set,
# /usr/bin/time's %M).
set -u
BUILD=${BUILD:-build}
BIN=${BIN:-$BUILD/gpup2p}
CMDS=${CMDS:-lspci;topo;topo --tree;topo --json;acs;doctor;bar;snapshot;snapshot --dir}

spec() {
	local n=$1 h b vfs per extra k rdma=8
	vfs=$((n - 16))
	per=$((vfs / 8))
	extra=$((vfs % 8))
	echo "numa 0 cpus=0-31"
	echo "numa 1 cpus=32-63"
	for h in 0 1 2 3 4 5 6 7; do
		b=$((h * 32))
		printf 'hostbridge pci0000:%02x numa=%d\n' $b $((h / 4))
		printf 'dev 0000:%02x:01.0 parent=pci0000:%02x kind=rootport vendor=8086 device=352a class=060400 link=32:16 maxlink=32:16 acs=005f:0000\n' $b $b
		printf 'dev 0000:%02x:00.0 parent=0000:%02x:01.0 kind=upstream vendor=1000 device=c030 class=060400 link=32:16 maxlink=32:16\n' $((b + 1)) $b
		printf 'dev 0000:%02x:00.0 parent=0000:%02x:00.0 kind=downstream vendor=1000 device=c030 class=060400 link=32:16 maxlink=32:16 acs=005f:0000\n' $((b + 2)) $((b + 1))
		printf 'dev 0000:%02x:01.0 parent=0000:%02x:00.0 kind=downstream vendor=1000 device=c030 class=060400 link=32:16 maxlink=32:16 acs=005f:0000\n' $((b + 2)) $((b + 1))
		printf 'dev 0000:%02x:00.0 parent=0000:%02x:00.0 kind=endpoint vendor=10de device=2330 class=030200 link=32:16 maxlink=32:16 bar0=16M,64,pf bar2=128G,64,pf driver=nvidia\n' $((b + 3)) $((b + 2))
		printf 'dev 0000:%02x:00.0 parent=0000:%02x:01.0 kind=endpoint vendor=15b3 device=1021 class=020700 link=32:16 maxlink=32:16 bar0=32M,64,pf driver=mlx5_core rdma=mlx5_%d\n' $((b + 4)) $((b + 2)) $h
		# the VFs follow their PF on its bus and the next ones (routing IDs PF+1, PF+2, ...)
		for ((k = 1; k <= per + (h < extra); k++)); do
			printf 'dev 0000:%02x:%02x.%d parent=0000:%02x:01.0 kind=endpoint vendor=15b3 device=101e class=020700 driver=mlx5_core rdma=mlx5_%d physfn=0000:%02x:00.0\n' \
				$((b + 4 + k / 256)) $(((k % 256) / 8)) $((k % 8)) $((b + 2)) $rdma $((b + 4))
			rdma=$((rdma + 1))
		done
	done
	[ "${SCALE_HOST:-}" = full ] || return 0
	# what doctor reads on a healthy host (tests/fixtures/doctor/healthy.spec's files, for this tree)
	echo "default aer=0:0:0 mps=256 ro=1 ibport=ACTIVE:LinkUp:400:InfiniBand"
	echo "default ibcounters=symbol_error:0,port_rcv_errors:0,link_downed:0,link_error_recovery:0,port_xmit_discards:0,port_xmit_data:48137205811,port_rcv_data:48120941366"
	echo "default ibhw=out_of_sequence:0,packet_seq_err:0,local_ack_timeout_err:0,rnr_nak_retry_err:0,out_of_buffer:0"
	# the host-wide files as the healthy doctor fixture has them (modules, driver version, kernel knobs)
	grep -E '^file /(proc/modules|proc/driver/nvidia/version|sys/module/nvidia/version|proc/sys/kernel/(numa_balancing|modules_disabled)) ' \
		tests/fixtures/doctor/healthy.spec
	for ((k = 0; k < n - 8; k++)); do     # every RDMA device's uverbsN node (numbered in spec order)
		echo "file /dev/infiniband/uverbs$k"
	done
	grep -E '^file /dev/nvidia(ctl|-uvm)$' tests/fixtures/doctor/healthy.spec
	for h in 0 1 2 3 4 5 6 7; do
		printf 'file /proc/driver/nvidia/gpus/0000:%02x:00.0/information Device Minor: \t %d\\nGPU Excluded:\t No\n' \
			$((h * 32 + 3)) $h
		echo "file /dev/nvidia$h"
	done
}

# fixture N DIR: generate (or keep) the tree; its stamp names what made it
fixture() {
	local n=$1 dir=$2 stamp
	stamp=$( { spec "$n"; cat tests/fixtures/gen.py; } | cksum)
	[ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ] && return 0
	mkdir -p "$(dirname "$dir")"
	spec "$n" >"$dir.spec"
	python3 tests/fixtures/gen.py "$dir.spec" "$dir" || return 2
	echo "$stamp" >"$dir/.stamp"
}

# measure CMD...: "wall user sys rss" (seconds, seconds, seconds, KiB) of the run with the least CPU
# (user + sys) of RUNS
measure() {
	local best="" t
	for ((r = 0; r < ${RUNS:-3}; r++)); do
		t=$(/usr/bin/time -f '%e %U %S %M' "$@" 2>&1 >/dev/null | tail -1)
		if [ -z "$best" ] || awk -v a="${t#* }" -v b="${best#* }" 'BEGIN { split(a, x, " "); split(b, y, " "); exit !(x[1] + x[2] < y[1] + y[2]) }'; then
			best=$t
		fi
	done
	echo "$best"
}

case ${1:-} in
--spec) spec "$2"; exit 0 ;;
--fixture) fixture "$2" "$3"; exit $? ;;
--measure) shift; measure "$@"; exit 0 ;;
esac
[ -x "$BIN" ] || { echo "scale.sh: $BIN not built (run make)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- 1000 4000
for n in "$@"; do
	fx=$BUILD/perf/fx${SCALE_HOST:+$SCALE_HOST}$n
	fixture "$n" "$fx" || exit 2
	IFS=';' read -ra cmds <<<"$CMDS"
	for a in "${cmds[@]}"; do
		case $a in
		lspci) read -r w u s m < <(measure lspci -A linux-sysfs -O "sysfs.path=$fx/sys/bus/pci" -tv) ;;
		# (a new archive or folder each run, $$ being the shell's: removing the last one is not timed)
		snapshot) read -r w u s m < <(measure sh -c 'exec "$0" --root "$1" -q snapshot "$2/s$$.tar.gz"' \
			"$BIN" "$fx" "$tmp") ;;
		untar) # the same entries as snapshot --dir, written by tar from an archive made (untimed) first
			"$BIN" --root "$fx" -q snapshot "$tmp/untar.tar.gz" || exit 2
			read -r w u s m < <(measure sh -c 'mkdir "$1/x$$" && exec tar -xzf "$1/untar.tar.gz" -C "$1/x$$"' \
				sh "$tmp")
			rm -f "$tmp/untar.tar.gz" ;;
		"snapshot --dir") read -r w u s m < <(measure sh -c 'exec "$0" --root "$1" -q snapshot --dir "$2/s$$"' \
			"$BIN" "$fx" "$tmp") ;;
		# shellcheck disable=SC2086
		*) read -r w u s m < <(measure "$BIN" --root "$fx" $a) ;;
		esac
		echo "N=$n ${a/lspci/lspci -tv}: wall $w s, user $u s, sys $s s, rss $((m / 1024)) MB"
	done
done
