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

# the GID index whose GID is ADDR (IPv4, as ::ffff:a.b.c.d) on DEV (default rxe0), or nothing
gid_of() {
	local want g i
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${1//./ })
	for g in /sys/class/infiniband/${2:-rxe0}/ports/1/gids/*; do
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

# rxe_pair A B: two soft-RoCE devices A and B in this one guest over a veth pair (vethA 10.13.0.1, vethB
# 10.13.0.2; no IPv6, so the GIDs are the MAC's link-local one and the address's), with the traffic
# between them on the wire: the kernel sends to a local address through lo, where no rxe listens, so
# locally made packets to the other's address are routed out of the veth (tables 100/101, looked up
# before "local"), and the veths accept packets from a local source. Sets $ga and $gb (the RoCE v2 GID
# index of each address).
rxe_pair() {
	local d
	ip link add vethA type veth peer name vethB || nok "ip link add vethA type veth peer name vethB"
	for d in vethA vethB; do
		sysctl -qw net.ipv6.conf.$d.disable_ipv6=1 net.ipv4.conf.$d.accept_local=1 net.ipv4.conf.$d.rp_filter=0
	done
	sysctl -qw net.ipv4.conf.all.rp_filter=0
	ip addr add 10.13.0.1/24 dev vethA && ip addr add 10.13.0.2/24 dev vethB &&
		ip link set vethA up && ip link set vethB up || nok "vethA, vethB up with 10.13.0.1, 10.13.0.2"
	ip rule add pref 1000 lookup local && ip rule del pref 0 &&
		ip rule add pref 100 to 10.13.0.2 iif lo lookup 100 && ip route add 10.13.0.2 dev vethA src 10.13.0.1 table 100 &&
		ip rule add pref 101 to 10.13.0.1 iif lo lookup 101 && ip route add 10.13.0.1 dev vethB src 10.13.0.2 table 101 ||
		nok "policy routes between vethA and vethB"
	rdma link add "$1" type rxe netdev vethA && rdma link add "$2" type rxe netdev vethB ||
		nok "rdma link add $1 (vethA), $2 (vethB)"
	ga= gb=
	for _ in $(seq 20); do
		ga=$(gid_of 10.13.0.1 "$1") gb=$(gid_of 10.13.0.2 "$2")
		[ -n "$ga" ] && [ -n "$gb" ] && break
		sleep 0.5
	done
	echo "# $1 over vethA (GID $ga), $2 over vethB (GID $gb)"
}
