#!/bin/bash
# Runs inside the "pcie" guest (topo-pcie.args): topo, bar and acs against a real kernel's sysfs and
# real config space. Expected values are derived by hand from the topology drawn in topo-pcie.args.
set -u
B=$PWD/build/gpup2p
VMD=${GPUP2P_VM_DIR:-$PWD/build/vm}
KROOT=$VMD/kroot KVER=$(cat "$VMD/kver")
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
mp() { modprobe -d "$KROOT" -S "$KVER" "$@"; }

# the NIC: virtio-net with a soft-RoCE device on it (its netdev hangs below the PCI function, in virtioN/)
mp virtio_net && mp rdma_rxe || nok "modprobe virtio_net rdma_rxe"
for _ in 1 2 3 4 5 6 7 8 9 10; do nd=$(ls /sys/bus/pci/devices/0000:05:00.0/virtio*/net 2>/dev/null | head -1); [ -n "$nd" ] && break; sleep 0.5; done
ip link set "$nd" up 2>/dev/null
rdma link add rxe0 type rxe netdev "$nd" || nok "rdma link add rxe0 on $nd"
echo "# rxe0 over $(cat /sys/class/infiniband/rxe0/parent 2>/dev/null), netdev $nd"

# topo: the matrix, by hand from the drawing. pcie.0 has no NUMA node in QEMU (numa_node -1), so pairs
# between it and the expander bridges are NODE (unknown NUMA is not a different node); GPU4-GPU5 sit on
# host bridges of NUMA nodes 0 and 1: SYS.
json=$("$B" topo --match 1af4:1110 --json); rc=$?
chk "topo exit 0" [ $rc -eq 0 ]
# what the host replays from the snapshot (host_pcie.sh)
printf '%s\n' "$json" >"$GPUP2P_VM_WS/topo.json"
"$B" bar --match 1af4:1110 --json >"$GPUP2P_VM_WS/bar.json"
"$B" acs --match 1af4:1110 --json >"$GPUP2P_VM_WS/acs.json"
"$B" -q snapshot "$GPUP2P_VM_WS/guest.tar.gz"; rc=$?
chk "snapshot of the guest: exit 0" [ $rc -eq 0 ]
python3 - "$json" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
names = [x["name"] for x in d["devices"]]
bdfs = {x["name"]: x["bdf"] for x in d["devices"]}
want_bdf = {"GPU0": "0000:03:00.0", "GPU1": "0000:04:00.0", "GPU2": "0000:08:00.0", "GPU3": "0000:09:00.0",
            "GPU4": "0000:41:00.0", "GPU5": "0000:81:00.0", "NIC0": "0000:05:00.0"}
print(("ok" if bdfs == want_bdf else "not ok") + " - topo finds 6 ivshmem GPUs and the rxe NIC: %s" % bdfs)
want = {
 ("GPU0", "GPU1"): "PIX", ("GPU0", "GPU2"): "PXB", ("GPU1", "GPU2"): "PXB",
 ("GPU0", "GPU3"): "PHB", ("GPU1", "GPU3"): "PHB", ("GPU2", "GPU3"): "PHB",
 ("GPU4", "GPU5"): "SYS",
 ("GPU0", "NIC0"): "PIX", ("GPU1", "NIC0"): "PIX", ("GPU2", "NIC0"): "PXB", ("GPU3", "NIC0"): "PHB",
}
for a in ("GPU0", "GPU1", "GPU2", "GPU3", "NIC0"):
    for b in ("GPU4", "GPU5"):
        want[(a, b)] = "NODE"
if set(names) == set(want_bdf):
    m = d["matrix"]
    for (a, b), w in sorted(want.items()):
        got = m[names.index(a)][names.index(b)]
        back = m[names.index(b)][names.index(a)]
        print(("ok" if got == w and back == w else "not ok") + " - topo %s-%s = %s (got %s/%s)" % (a, b, w, got, back))
numa = {x["name"]: x["numa_node"] for x in d["devices"]}
cpus = {x["name"]: x["cpu_affinity"] for x in d["devices"]}
print(("ok" if numa.get("GPU4") == 0 and numa.get("GPU5") == 1 and numa.get("GPU0") is None else "not ok") +
      " - NUMA affinity: GPU4 node 0, GPU5 node 1, GPU0 none (%s)" % numa)
print(("ok" if cpus.get("GPU4") == "0" and cpus.get("GPU5") == "1" else "not ok") +
      " - CPU affinity follows the NUMA nodes (%s)" % cpus)
PY

# bar: BAR2 of each ivshmem device = its memory backend
csv=$("$B" bar --match 1af4:1110 --csv --no-header); rc=$?
chk "bar exit 0" [ $rc -eq 0 ]
for want in "GPU0 0000:03:00.0 33554432" "GPU1 0000:04:00.0 67108864" "GPU2 0000:08:00.0 134217728" \
	"GPU3 0000:09:00.0 268435456" "GPU4 0000:41:00.0 33554432" "GPU5 0000:81:00.0 67108864"; do
	set -- $want
	chk "bar: $1 ($2) aperture BAR2 = $3 bytes" grep -q "^$1,$2,2,$3," <<<"$csv"
done

# acs: intel_iommu=on made the kernel set 0x001d on the four root ports, all on GPU/NIC paths. The
# pairs that cross them all go through the root complex anyway (PHB/NODE/SYS: GPU0, GPU1, GPU2 and
# NIC0 share the switch below rp1), so each is ranked low and the audit exits 0.
RPS="0000:00:03.0 0000:00:04.0 0000:40:00.0 0000:80:00.0"
dmesg_before=$(dmesg | wc -l)
ctl() { setpci -s "$1" ECAP0d+6.w; }
out=$("$B" acs --match 1af4:1110); rc=$?
chk "acs: exit 0 (the redirecting root ports carry only pairs through the root complex)" [ $rc -eq 0 ]
for r in $RPS; do
	chk "acs: $r root port reported 0x001d, redirecting" grep -q "^$r root port \[1b36:000c\]  redirects peer traffic: yes" <<<"$out"
done
chk "acs: the four ranked low impact" [ "$(grep -c '^  impact: low:' <<<"$out")" = 4 ]
chk "acs: boot parameter names the four root ports" grep -q "pci=disable_acs_redir=0000:00:03.0;0000:00:04.0;0000:40:00.0;0000:80:00.0" <<<"$out"
for r in $RPS; do chk "setpci agrees before: $r = 001d" [ "$(ctl "$r")" = 001d ]; done

# the IOMMU translates for the devices below (intel_iommu=on): --disable refuses without --force
gt=$(cat /sys/bus/pci/devices/0000:09:00.0/iommu_group/type 2>/dev/null)
chk "the guest IOMMU translates for GPU3 (group type '$gt')" bash -c "[[ '$gt' == DMA* ]]"
out=$("$B" acs --match 1af4:1110 --disable 2>&1); rc=$?
chk "acs --disable, IOMMU translating: refused, exit 64, naming the mode" \
	bash -c "[ $rc -eq 64 ] && grep -q 'refusing to clear ACS on 0000:00:03.0 .*the IOMMU translates ($gt)' <<<'$out'"
for r in $RPS; do chk "after the refusal: setpci $r still 001d" [ "$(ctl "$r")" = 001d ]; done

out=$("$B" acs --match 1af4:1110 --disable --force); rc=$?
chk "acs --disable: exit 0" [ $rc -eq 0 ]
chk "acs --disable: four bridges changed" [ "$(grep -c ' changed$' <<<"$out")" = 4 ]
for r in $RPS; do
	chk "after --disable: setpci $r = 0011" [ "$(ctl "$r")" = 0011 ]
	chk "after --disable: lspci -vvv $r shows ReqRedir- CmpltRedir-" \
		bash -c "lspci -vvv -s $r | grep -q 'ACSCtl:.*SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl-'"
done
chk "state file in /run/gpup2p" [ -s /run/gpup2p/acs.state ]
st=$(cat /run/gpup2p/acs.state 2>/dev/null)
"$B" acs --match 1af4:1110 -q >/dev/null; rc=$?
chk "acs after --disable: exit 0" [ $rc -eq 0 ]
out=$("$B" acs --match 1af4:1110 --disable); rc=$?
chk "second --disable: no-op, says so" bash -c "[ $rc -eq 0 ] && grep -q 'Nothing to change' <<<'$out'"
chk "second --disable: state file unchanged" [ "$(cat /run/gpup2p/acs.state)" = "$st" ]
out=$("$B" acs --restore); rc=$?
chk "acs --restore: exit 0" [ $rc -eq 0 ]
for r in $RPS; do chk "after --restore: setpci $r = 001d" [ "$(ctl "$r")" = 001d ]; done
chk "after --restore: state file removed" [ ! -e /run/gpup2p/acs.state ]
out=$("$B" acs --match 1af4:1110); rc=$?
chk "acs after --restore: the four redirect again (low impact, exit 0)" \
	bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^  impact: low:' <<<'$out') = 4 ]"

# one bridge, NCCL's zero mode, and back
"$B" acs --disable --device 00:04.0 --mode zero --force -q >/dev/null; rc=$?
chk "--device 00:04.0 --mode zero: exit 0, 0000 written, others untouched" \
	bash -c "[ $rc -eq 0 ] && [ \"\$(setpci -s 00:04.0 ECAP0d+6.w)\" = 0000 ] && [ \"\$(setpci -s 00:03.0 ECAP0d+6.w)\" = 001d ]"
"$B" acs --restore -q >/dev/null
chk "restore after zero mode: 001d" [ "$(ctl 0000:00:04.0)" = 001d ]

# a bridge off every GPU/NIC path: not in the default scope. With --all, every ACS bridge.
out=$("$B" acs --disable --all --force --dry-run --csv --no-header); rc=$?
chk "--all --dry-run: the four root ports would change, nothing written" \
	bash -c "[ $rc -eq 0 ] && [ \$(grep -c ',would change,' <<<'$out') = 4 ] && [ \"\$(setpci -s 00:03.0 ECAP0d+6.w)\" = 001d ]"

# the kernel had nothing to say about any of these writes (no AER, no error, no warning)
new=$(dmesg | tail -n +$((dmesg_before + 1)) | grep -iE "error|warn|aer|acs|fail|bug" || true)
chk "dmesg: no kernel message about the ACS writes" [ -z "$new" ]
[ -z "$new" ] || printf '#   %s\n' "$new"
