#!/bin/bash
# Boot a test guest: run.sh TOPOLOGY SCRIPT [TIMEOUT]. TOPOLOGY names tests/vm/topo-TOPOLOGY.args
# (QEMU device options, one per line, '#' comments); SCRIPT runs inside the guest as root, in the
# repository, with the host's files read-only and $GPUP2P_VM_WS writable. Its output, exit status and
# the guest's dmesg land in build/vm/ws-TOPOLOGY/; the console log beside them. Exit: the script's
# status, or 2 when the guest did not get to the end (panic, oops, timeout: see console.log).
# In the .args file, @WS@ is that folder; @PORT0@ and @PORT1@ are $GPUP2P_VM_PORT0 and $GPUP2P_VM_PORT1
# (the UDP ports of a link between two guests).
set -u
BUILD=${BUILD:-build}
VM=$PWD/$BUILD/${GPUP2P_VM:-vm}
topo=$1 script=$2 limit=${3:-120}
KVER=$(cat "$VM/kver")
WS=$VM/ws-$topo
rm -rf "$WS"
mkdir -p "$WS"
args=()
while read -r line; do
	line=${line%%#*}
	[ -n "${line// /}" ] || continue
	# shellcheck disable=SC2206
	line=${line//@PORT0@/${GPUP2P_VM_PORT0:-}}
	line=${line//@PORT1@/${GPUP2P_VM_PORT1:-}}
	args+=(${line//@WS@/$WS})
done <"tests/vm/topo-$topo.args"
append="console=ttyS0 quiet panic=-1 oops=panic loglevel=4 gpscript=$PWD/$script gpws=$WS gprepo=$PWD gpvm=$VM"
[ -f "tests/vm/topo-$topo.cmdline" ] && append="$append $(cat "tests/vm/topo-$topo.cmdline")"
timeout "$limit" qemu-system-x86_64 -accel tcg -M q35 -cpu max -m 1G -nographic -no-reboot -nic none \
	-kernel "$VM/vmlinux-$KVER" -initrd "$VM/initrd.cpio" -append "$append" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$WS,mount_tag=ws,security_model=none,multidevs=remap" \
	"${args[@]}" </dev/null >"$WS/console.log" 2>&1
qrc=$?
rc=$(sed -n 's/.*GPUP2P-VM-DONE rc=\([0-9]*\).*/\1/p' "$WS/console.log" | tail -1)
if [ -z "$rc" ]; then
	echo "not ok - guest $topo did not finish (qemu exit $qrc): last console lines:"
	tail -15 "$WS/console.log" | sed 's/^/#   /'
	exit 2
fi
exit "$rc"
