# Sourced by the soft-RoCE guest scripts (guest_rdma*.sh): load virtio_net and rdma_rxe from the
# guest's kernel, give the virtio-net NIC an address and put rxe0 on it. rxe_up ADDR/LEN sets $nd
# (the interface) and $gidx (the GID index of ADDR, for ibv_rc_pingpong -g); ok/nok/chk as the others.
VMD=${GPUP2P_VM_DIR:-$PWD/build/vm}
KROOT=$VMD/kroot KVER=$(cat "$VMD/kver")
B=$PWD/build/gpup2p
# the binary as another user runs it: copied where that user may read it (the clone may be in a 0700
# directory, as CI's is; an installed gpup2p is not)
pubbin() {
	local d

	d=$(mktemp -d) && chmod 0755 "$d" && cp "$B" "$d/" && echo "$d/gpup2p"
}
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
mp() { modprobe -d "$KROOT" -S "$KVER" "$@"; }

# the GID index whose GID is ADDR (IPv4, as ::ffff:a.b.c.d), or nothing
gid_of() {
	local want g i
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${1//./ })
	for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
		i=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "$want" ] && { echo "$i"; return; }
	done
}

rxe_up() {
	# no SLAAC address: the interface has only what the script gives it
	sysctl -qw net.ipv6.conf.default.autoconf=0 net.ipv6.conf.default.accept_ra=0
	mp virtio_net && mp rdma_rxe || nok "modprobe virtio_net rdma_rxe"
	nd=
	for _ in $(seq 20); do
		nd=$(ls /sys/bus/pci/devices/0000:03:00.0/virtio*/net 2>/dev/null | head -1)
		[ -n "$nd" ] && break
		sleep 0.5
	done
	ip link set lo up
	ip link set "$nd" up && ip addr add "$1" dev "$nd" || nok "ip: $nd up with $1"
	rdma link add rxe0 type rxe netdev "$nd" || nok "rdma link add rxe0 type rxe netdev $nd"
	gidx=
	for _ in $(seq 20); do
		gidx=$(gid_of "${1%/*}")
		[ -n "$gidx" ] && break
		sleep 0.5
	done
	echo "# rxe0 over $nd ($1), RoCE v2 GID index $gidx"
}

# wait until rxe0's port state is STATE (up to 10 s)
port_is() {
	for _ in $(seq 20); do
		[ "$(cat /sys/class/infiniband/rxe0/ports/1/state)" = "$1" ] && return 0
		sleep 0.5
	done
	return 1
}

# The pair guests (topo-pair0/1): ROLE (server, client), IP, PEER (its address) and PW (the peer's
# workspace, read through the host's files: cache=none, so what the peer writes shows at once)
pair_args() {
	local w
	for w in $(cat /proc/cmdline); do
		case $w in gprole=*) ROLE=${w#*=} ;; gpip=*) IP=${w#*=} ;; gppeer=*) PEER=${w#*=} ;; gppeerws=*) PW=${w#*=} ;; esac
	done
	PW=$(dirname "$GPUP2P_VM_WS")/ws-$PW
}
# signal NAME: tell the peer NAME happened; await NAME [SECONDS]: wait for the peer's NAME (default 300 s)
signal() { date +%s >"$GPUP2P_VM_WS/$1"; }
await() {
	local i
	for ((i = 0; i < ${2:-300} * 2; i++)); do
		[ -e "$PW/$1" ] && return 0
		sleep 0.5
	done
	echo "# no '$1' from the peer in ${2:-300} s"
	return 1
}
