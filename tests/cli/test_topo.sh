#!/bin/bash
# topo, bar, acs and snapshot on a machine with PCI domain 10000 (Intel VMD), and NICs numbered as
# nvidia-smi numbers them. Every expected value is read off the specs by hand
# (tests/fixtures/specs/vmd.spec, nicorder.spec), never taken from gpup2p's output.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT
V=$BUILD/fixtures/vmd
N=$BUILD/fixtures/nicorder
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# check STATUS NAME [DETAIL]: ok when STATUS (of the test or pipeline just run) is 0, else not ok with DETAIL
check() {
	if [ "$1" -eq 0 ]; then ok "$2"; else nok "$2${3:+: $3}"; fi
}
# json FILE PYTHON-EXPRESSION: the expression (over j, the parsed file) is true
json() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" 2>/dev/null
}

# --- every command runs where a domain has 5 hex digits (they exited 3: "not a PCI address")
for a in topo "topo --tree" "topo --json" "topo --csv" "topo --jsonl" bar "bar --all --json" "acs --json"; do
	# shellcheck disable=SC2086
	"$BIN" --root "$V" $a >"$T/out" 2>"$T/err"
	rc=$?
	want=0
	[ "$a" = "acs --json" ] && want=1 # the spec sets ACS redirect (0x001d) on the bridges: a warning
	[ $rc -eq $want ] && [ ! -s "$T/err" ]
	check $? "vmd: $a exits $want, nothing on stderr" "exit $rc, $(head -c 200 "$T/err")"
done

# --- the matrix: GPU0 0000:01:00.0; GPU1 10000:e5:00.0 behind a switch in the VMD domain; NIC0 mlx5_0
# on that switch (PIX); NIC1 mlx5_1 on another VMD root port (the pair parts at the VMD controller,
# a host bridge: PHB); NIC2 mlx5_2 on socket 1 (SYS)
cat >"$T/want" <<'EOF'
	GPU0	GPU1	NIC0	NIC1	NIC2	CPU Affinity	NUMA Affinity	GPU NUMA ID
GPU0	 X 	PHB	PHB	PHB	SYS	0-15	0		N/A
GPU1	PHB	 X 	PIX	PHB	SYS	0-15	0		N/A
NIC0	PHB	PIX	 X 	PHB	SYS	0-15	0		N/A
NIC1	PHB	PHB	PHB	 X 	SYS	0-15	0		N/A
NIC2	SYS	SYS	SYS	SYS	 X 	16-31	1		N/A
EOF
"$BIN" --root "$V" topo | head -6 | diff -u "$T/want" - >"$T/diff"
check $? "vmd: topo matrix as the spec says" "$(cat "$T/diff")"
"$BIN" --root "$V" topo | grep -A4 '^NIC Legend' | tail -3 | tr -d ' ' | paste -sd' ' | grep -qx 'NIC0:mlx5_0 NIC1:mlx5_1 NIC2:mlx5_2'
check $? "vmd: NIC legend by RDMA name (bus order is mlx5_2, mlx5_1, mlx5_0)"

# --- JSON: addresses with 5 digits, the path through the VMD controller, the top host bridge
"$BIN" --root "$V" topo --json >"$T/topo.json"
json "$T/topo.json" '[d["bdf"] for d in j["devices"]] == ["0000:01:00.0", "10000:e5:00.0", "10000:e6:00.0", "10000:e1:00.0", "0000:81:00.0"]'
check $? "vmd: topo --json device addresses in matrix order"
json "$T/topo.json" 'j["devices"][1]["host_bridge"] == "pci0000:00" and j["devices"][1]["path"] == ["0000:00:0e.0", "10000:e0:04.0", "10000:e3:00.0", "10000:e4:00.0"]'
check $? "vmd: GPU1's path runs through the VMD controller 0000:00:0e.0 to pci0000:00"
json "$T/topo.json" 'j["devices"][2]["rdma_device"] == "mlx5_0" and j["matrix"][1][3] == "PHB" and j["matrix"][1][2] == "PIX"'
check $? "vmd: topo --json NIC0 is mlx5_0; GPU1-NIC1 PHB, GPU1-NIC0 PIX"
"$BIN" --root "$V" topo --csv | grep -q '^GPU1,10000:e5:00.0,gpu,'
check $? "vmd: topo --csv row of GPU1"
"$BIN" --root "$V" topo --jsonl | sed -n 4p | grep -q '"bdf": *"10000:e1:00.0"'
check $? "vmd: topo --jsonl line of NIC1"

# --- the tree: the VMD domain's root ports hang below the controller
"$BIN" --root "$V" topo --tree >"$T/tree"
awk '/0000:00:0e\.0/ { ind = index($0, "0000:00:0e.0"); getline; found = index($0, "10000:e0:02.0 root port") > ind }
     END { exit !found }' "$T/tree"
check $? "vmd: topo --tree puts 10000:e0:02.0 below the VMD controller"
grep -q '10000:e1:00\.0 NIC1 .*mlx5_1$' "$T/tree"
check $? "vmd: topo --tree names the VMD NIC"

# --- bar, acs on the domain
"$BIN" --root "$V" bar | grep -q '^GPU1  10000:e5:00.0 \[10de:2330\]'
check $? "vmd: bar shows GPU1 at 10000:e5:00.0"
"$BIN" --root "$V" bar --all --json >"$T/bar.json"
json "$T/bar.json" '"10000:e2:00.0" in [d["bdf"] for d in j["devices"]]'
check $? "vmd: bar --all --json lists the NVMe drive at 10000:e2:00.0"
"$BIN" --root "$V" acs --json >"$T/acs.json"
json "$T/acs.json" '"10000:e0:02.0" in [b["bdf"] for b in j["bridges"]] and "10000:e0:02.0" in j["boot_parameter"]'
check $? "vmd: acs audits the VMD root port 10000:e0:02.0"
"$BIN" --root "$V" acs --disable --device 10000:e0:02.0 --dry-run >"$T/out" 2>&1
[ $? -eq 0 ] && grep -q '^10000:e0:02.0 root port .*ACSCtl 0x001d -> 0x0011' "$T/out"
check $? "vmd: acs --disable --device 10000:e0:02.0 --dry-run plans that bridge"
expect 64 "no PCI function 0000:e0:02.0" --root "$V" acs --disable --device 0000:e0:02.0 --dry-run

# --- --match: endpoints in the VMD domain and in segment c05b as GPUs, numbered in bus order with
# domains as numbers: 0000:01:00.0, c05b:00:00.0, 10000:e2:00.0, 10000:e5:00.0
"$BIN" --root "$V" topo --match 144d:a80a --json >"$T/match.json"
json "$T/match.json" '[d["bdf"] for d in j["devices"] if d["kind"] == "gpu"] == ["0000:01:00.0", "c05b:00:00.0", "10000:e2:00.0", "10000:e5:00.0"]'
check $? "vmd: topo --match 144d:a80a makes the NVMe drives GPU1 and GPU2"

# --- a snapshot of the VMD machine reads back the same
"$BIN" --root "$V" snapshot --dir "$T/snap" >/dev/null 2>&1
check $? "vmd: snapshot --dir"
for a in "topo --json" "topo --tree" "bar --all --csv"; do
	# shellcheck disable=SC2086 # the JSON envelope names the root each was read from: all else the same
	cmp -s <("$BIN" --root "$V" $a 2>&1 | sans_root) <("$BIN" --root "$T/snap" $a 2>&1 | sans_root)
	check $? "vmd: $a on the snapshot as on the machine"
done

# --- NIC numbering: by RDMA name, numbers as numbers; the NIC without an RDMA device last
cat >"$T/want" <<'EOF'
  NIC0: mlx5_2
  NIC1: mlx5_3
  NIC2: mlx5_10
  NIC3: mlx5_bond_0
  NIC4: ens6np0
EOF
"$BIN" --root "$N" topo | grep -A6 '^NIC Legend' | tail -5 | diff -u "$T/want" - >"$T/diff"
check $? "nicorder: NIC legend in nvidia-smi's order" "$(cat "$T/diff")"
"$BIN" --root "$N" topo | sed -n 2p | grep -qP '^GPU0\t X \tPHB\tPIX\tPIX\tPIX\tPIX\t'
check $? "nicorder: GPU0's row: NIC0 (mlx5_2, own root port) PHB, the rest PIX"
"$BIN" --root "$N" topo --json >"$T/nic.json"
json "$T/nic.json" '[(d["name"], d["bdf"]) for d in j["devices"][1:]] == [("NIC0", "0000:05:00.0"), ("NIC1", "0000:04:00.0"), ("NIC2", "0000:04:00.1"), ("NIC3", "0000:07:00.0"), ("NIC4", "0000:06:00.0")]'
check $? "nicorder: topo --json NIC names and addresses"
