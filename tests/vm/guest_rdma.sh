#!/bin/bash
# Runs inside the "rdma" guest (topo-rdma.args): soft-RoCE (rdma_rxe) on a virtio-net NIC. The harness's
# own sanity check (ibv_devinfo, ibv_rc_pingpong over rxe0), the real sysfs formats the doctor fixtures
# imitate (tests/fixtures/gen.py), and doctor's rdma.* checks against the real device, both ways: each
# fault planted (interface down, no IP address, no uverbs node, an rxe without a PCI function) and
# taken back. The guest has no NVIDIA GPU: doctor exits 69 there but its --json findings are complete.
# Last, bench rdma's loopback across two rxe devices joined by a veth pair (rxe_pair in rxe.sh).
set -u
. tests/vm/rxe.sh
rxe_up 10.11.0.1/24
P=/sys/class/infiniband/rxe0/ports/1
J=$GPUP2P_VM_WS

chk "rdma link: rxe0/1 ACTIVE LINK_UP over $nd" bash -c "rdma link show rxe0/1 | grep -q 'state ACTIVE physical_state LINK_UP netdev $nd'"
out=$(ibv_devinfo -d rxe0 2>&1)
chk "ibv_devinfo: rxe0 port 1 PORT_ACTIVE, link layer Ethernet" \
	bash -c "grep -q 'state:.*PORT_ACTIVE' <<<'$out' && grep -q 'link_layer:.*Ethernet' <<<'$out'"
chk "/dev/infiniband/uverbs0 for rxe0" bash -c "[ -c /dev/infiniband/uverbs0 ] && [ \"\$(cat /sys/class/infiniband_verbs/uverbs0/ibdev)\" = rxe0 ]"
# RC ping-pong between two processes over rxe0 (the route to its own address goes through lo)
ibv_rc_pingpong -d rxe0 -g "$gidx" -n 200 >"$J/pp-server.txt" 2>&1 &
srv=$!
sleep 1
timeout 60 ibv_rc_pingpong -d rxe0 -g "$gidx" -n 200 10.11.0.1 >"$J/pp-client.txt" 2>&1
crc=$?
wait "$srv"
src=$?
chk "ibv_rc_pingpong over rxe0: client and server exit 0, 200 iterations ($(grep -h iters "$J"/pp-client.txt))" \
	bash -c "[ $crc -eq 0 ] && [ $src -eq 0 ] && grep -q '^200 iters' '$J/pp-client.txt'"

# topo: rxe0 has no PCI function; its interface's (virtio-net, beside an ivshmem stand-in GPU) is NIC0
"$B" topo --match 1af4:1110 --json >"$J/topo.json"
chk "topo: NIC0 is rxe0 at 0000:03:00.0, PIX to the ivshmem GPU0" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); n = [x["name"] for x in d["devices"]]; nic = d["devices"][n.index("NIC0")]
sys.exit(not (nic["bdf"] == "0000:03:00.0" and nic["rdma_device"] == "rxe0" and
              d["matrix"][n.index("GPU0")][n.index("NIC0")] == "PIX"))' "$J/topo.json"

# the real formats, as the fixtures write them (gen.py: rdma/rxe, ibport=)
chk "sysfs state '4: ACTIVE', phys_state '5: LinkUp'" \
	bash -c "[ \"\$(cat $P/state)\" = '4: ACTIVE' ] && [ \"\$(cat $P/phys_state)\" = '5: LinkUp' ]"
chk "sysfs rate '2.5 Gb/sec (1X SDR)' (virtio-net: speed unknown, rxe assumes 1 GbE)" [ "$(cat $P/rate)" = "2.5 Gb/sec (1X SDR)" ]
chk "sysfs link_layer Ethernet, GID $gidx of type 'RoCE v2'" \
	bash -c "[ \"\$(cat $P/link_layer)\" = Ethernet ] && [ \"\$(cat $P/gid_attrs/types/$gidx)\" = 'RoCE v2' ]"
chk "sysfs: GID 0 is the link-local fe80:0000:0000:0000:5054:00ff:fe12:3401 (from the MAC), 'RoCE v2'" \
	bash -c "[ \"\$(cat $P/gids/0)\" = fe80:0000:0000:0000:5054:00ff:fe12:3401 ] && [ \"\$(cat $P/gid_attrs/types/0)\" = 'RoCE v2' ]"
chk "sysfs: an unused GID entry's type reads as EINVAL" bash -c "! cat $P/gid_attrs/types/5 2>/dev/null"
chk "sysfs: rxe0 has no device link, its parent file names $nd, it lives under devices/virtual" \
	bash -c "[ ! -e /sys/class/infiniband/rxe0/device ] && [ \"\$(cat /sys/class/infiniband/rxe0/parent)\" = $nd ] &&
		[[ \$(readlink -f /sys/class/infiniband/rxe0) == /sys/devices/virtual/infiniband/rxe0 ]]"

# dr NAME [ARGS]: doctor --json (rdma, peermem, nic checks or ARGS' --only) into $J/NAME.json, and its
# findings as "ID SEVERITY SUBJECT: MESSAGE" lines into $J/NAME.txt (one python3 a run: TCG is slow)
dr() {
	local n=$1 rc
	shift
	"$B" --json doctor --only rdma,peermem,nic "$@" >"$J/$n.json" 2>/dev/null
	rc=$?
	python3 -c 'import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    print("%s %s %s: %s" % (f["id"], f["severity"], f["subject"], f["message"]))' "$J/$n.json" >"$J/$n.txt"
	return $rc
}
# has NAME ID PATTERN: a finding of check ID in run NAME matches the extended regex PATTERN (after
# "SEVERITY "); none: not one does
has() { grep -qE "^$2 $3" "$J/$1.txt"; }
none() { ! has "$@"; }
show() { grep "^$2 " "$J/$1.txt" | sed 's/^/#   /'; }

dr doctor
rc=$?
chk "doctor: exit 69 (no NVIDIA GPU) with the findings in its JSON" bash -c "[ $rc -eq 69 ] && [ -s '$J/doctor.txt' ]"
chk "rdma.port: ok, rxe0 port 1 ACTIVE, LinkUp" has doctor rdma.port 'ok rxe0/1: rxe0 port 1 is ACTIVE, LinkUp$'
chk "rdma.gid: ok, RoCE v2 GID (10.11.0.1)" has doctor rdma.gid 'ok rxe0/1: .*1 RoCE v2 GID$'
chk "rdma.rate: skipped, software RDMA (no false warning: 2.5 'Gb/s' over virtio's Gen1 x1)" \
	has doctor rdma.rate 'skipped rxe0/1: rxe0 is software RDMA'
chk "rdma.uverbs: ok, /dev/infiniband/uverbs0" has doctor rdma.uverbs 'ok rxe0: rxe0: /dev/infiniband/uverbs0$'
chk "rdma.verbs_lib: ok, libibverbs lists rxe0 (librxe found)" has doctor rdma.verbs_lib 'ok rxe0: libibverbs lists rxe0$'
chk "peermem.missing, peermem.dmabuf: skipped, no NVIDIA GPU" \
	bash -c "grep -q '^peermem.missing skipped .*no NVIDIA GPU' '$J/doctor.txt' && grep -q '^peermem.dmabuf skipped .*no NVIDIA GPU' '$J/doctor.txt'"
chk "peermem.conflict, peermem.legacy: ok (no peer-memory module)" \
	bash -c "grep -q '^peermem.conflict ok ' '$J/doctor.txt' && grep -q '^peermem.legacy ok ' '$J/doctor.txt'"
chk "nic.driver: skipped (virtio-net is no RDMA NIC vendor's)" has doctor nic.driver 'skipped '
chk "no error or warning among the findings" bash -c "! grep -qE '^[^ ]+ (error|warning) ' '$J/doctor.txt'"

# a snapshot of the guest, read back with --root: the same static findings (verbs_lib is live only)
"$B" -q snapshot --dir "$J/snap" >/dev/null 2>&1
"$B" --root "$J/snap" --json doctor --only rdma.port,rdma.gid,rdma.rate,rdma.uverbs >"$J/snap.json" 2>/dev/null
python3 -c 'import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    print("%s %s %s: %s" % (f["id"], f["severity"], f["subject"], f["message"]))' "$J/snap.json" >"$J/snap.txt"
chk "snapshot: doctor --root gives the live rdma.port, rdma.gid, rdma.rate, rdma.uverbs findings" \
	bash -c "[ -s '$J/snap.txt' ] && grep -E '^rdma.(port|gid|rate|uverbs) ' '$J/doctor.txt' | cmp -s - '$J/snap.txt'"

# the interface down: port DOWN/Disabled; software RDMA is never a GPU's GPUDirect NIC: info, not error
ip link set "$nd" down
port_is "1: DOWN"
chk "$nd down: sysfs state '1: DOWN', phys_state '3: Disabled'" \
	bash -c "[ \"\$(cat $P/state)\" = '1: DOWN' ] && [ \"\$(cat $P/phys_state)\" = '3: Disabled' ]"
dr down --only rdma.port
chk "$nd down: rdma.port info, names the state and the interface" \
	has down rdma.port "info rxe0/1: rxe0 port 1 is DOWN \(Disabled\); rxe0 is software RDMA over $nd"
# up again, but no IP address: the only RoCE v2 GID left is the link-local one: warning
ip link set "$nd" up
port_is "4: ACTIVE"
ip addr del 10.11.0.1/24 dev "$nd"
sleep 1
dr noip --only rdma.port,rdma.gid
chk "$nd up again: rdma.port ok" has noip rdma.port 'ok rxe0/1'
chk "no IPv4 address: rdma.gid warning, link-local GIDs only" has noip rdma.gid "warning rxe0/1: .*link-local addresses only"
chk "no IPv4 address: the GID table holds only fe80:: (what the fixture rdma-gid-ll plants)" \
	bash -c "[ \"\$(cat $P/gid_attrs/types/* 2>/dev/null | wc -l)\" = 1 ] && grep -q '^fe80:' $P/gids/0"

# the address back: ok; uverbs: rdma_rxe needs ib_uverbs (no unloading it while rxe0 exists): the node
# gone instead
ip addr add 10.11.0.1/24 dev "$nd"
sleep 1
chk "ib_uverbs is held by rdma_rxe (a real rxe never runs without it)" bash -c "grep -q '^ib_uverbs .*rdma_rxe' /proc/modules"
mv /dev/infiniband/uverbs0 /dev/infiniband/.uverbs0
dr nonode --only rdma.gid,rdma.uverbs
chk "address back: rdma.gid ok" has nonode rdma.gid 'ok rxe0/1'
chk "/dev/infiniband/uverbs0 missing: rdma.uverbs error" \
	has nonode rdma.uverbs 'error rxe0: rxe0 is uverbs0 in sysfs but /dev/infiniband/uverbs0 is missing'
mv /dev/infiniband/.uverbs0 /dev/infiniband/uverbs0
chmod 0600 /dev/infiniband/uverbs0
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$(pubbin)" --json doctor --only rdma.uverbs 2>/dev/null |
	grep -q '"message": "/dev/infiniband/uverbs0 exists but this user cannot open it"'
chk "uverbs0 mode 0600, doctor as nobody: rdma.uverbs warning, cannot open it" [ $? -eq 0 ]
chmod 0666 /dev/infiniband/uverbs0

# an rxe over an interface with no PCI function (veth): topo has no NIC for it; down: info
ip link add veth0 type veth peer name veth1
rdma link add rxe1 type rxe netdev veth0 || nok "rdma link add rxe1 on veth0"
dr veth --only rdma.port,rdma.uverbs
chk "node back: rdma.uverbs ok for rxe0 and rxe1" bash -c "grep -q '^rdma.uverbs ok rxe0' '$J/veth.txt' && grep -q '^rdma.uverbs ok rxe1' '$J/veth.txt'"
chk "rxe1 over veth0 (no PCI function), veth down: rdma.port info, not error" \
	has veth rdma.port "info rxe1/1: rxe1 port 1 is DOWN .*software RDMA over veth0"
chk "rxe1 over veth0: no error from rdma.port at all" none veth rdma.port 'error'
ip link set veth0 up
ip link set veth1 up
sleep 1
dr vethup --only rdma.port
chk "veth up: rdma.port ok for rxe1" has vethup rdma.port 'ok rxe1/1'
rdma link delete rxe1
ip link del veth0

# bench rdma across two devices (issue 14): rxa and rxb over a veth pair, QP 0 on rxa, QP 1 on rxb; the
# bytes written must have crossed vethA (its tx counter), the data checked on arrival
rxe_pair rxa rxb
tx0=$(cat /sys/class/net/vethA/statistics/tx_bytes)
timeout 120 "$B" bench rdma --device rxa --peer-device rxb --gid-index "$ga" --peer-gid-index "$gb" --op write \
	--size 64K --iters 20 --reps 1 --jsonl >"$J/two.jsonl" 2>"$J/two.err"
rc=$?
tx=$(($(cat /sys/class/net/vethA/statistics/tx_bytes) - tx0))
timeout 120 "$B" bench rdma --device rxa --peer-device rxb --gid-index "$ga" --peer-gid-index "$gb" --lat --op write \
	--size 64 --iters 20 --reps 1 --jsonl >"$J/twolat.jsonl" 2>"$J/twolat.err"
lrc=$?
# (one python3 for both: it starts slowly under TCG)
chk "bench rdma --device rxa --peer-device rxb: write 64K x 20 (exit $rc, $tx bytes out of vethA) and --lat (exit $lrc): records naming both devices, verified" \
	python3 -c 'import json, sys
bw, lat = ([json.loads(l) for l in open(f) if l.strip()] for f in sys.argv[1:3])
rc, tx, lrc = map(int, sys.argv[3:6])
ok = rc == 0 and len(bw) == 1 and bw[0]["device"] == "rxa" and bw[0]["peer_device"] == "rxb" and bw[0]["op"] == "write"
ok = ok and bw[0]["verified"] is True and bw[0]["gbps"] > 0 and bw[0]["distance"] == bw[0]["peer_distance"] == "host"
ok = ok and tx >= 20 * 65536 and lrc == 0 and len(lat) == 1 and lat[0]["test"] == "lat" and lat[0]["peer_device"] == "rxb"
sys.exit(not (ok and lat[0]["verified"] is True and 0 < lat[0]["us_min"] <= lat[0]["us_median"]))' \
	"$J/two.jsonl" "$J/twolat.jsonl" $rc "$tx" $lrc
[ $rc -eq 0 ] && [ $lrc -eq 0 ] || sed 's/^/#   /' "$J/two.err" "$J/twolat.err" | head -5
head -c 400 "$J/two.jsonl" | sed 's/^/# two devices: /'
exit 0
