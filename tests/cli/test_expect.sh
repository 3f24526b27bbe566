#!/bin/bash
# gpup2p doctor --expect FILE and gpup2p report --baseline (issue 26, class 10): planted faults in copies
# of a healthy tree (a GPU missing, a NIC at half rate, a GPU link at x8, a GPU in a Gen4 slot, a GPU on
# the other NUMA node, NVLinks down), each against the expect file written for its healthy twin, which
# must give no expect.* alarm; a baseline derived from several hosts' doctor --json, one host deviating,
# fed back to doctor --expect on that host; malformed expect files, each kind: exit 64 with FILE:LINE.
# Healthy twins: the real 4xH200 capture (h200x4-hgx: GPUs, NVLink through NVSwitch, one NUMA node) and,
# for NICs and two NUMA nodes, the doctor fixtures' healthy 8-GPU 8-NIC tree (a generated spec: no real
# capture with NICs is in the repository).
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
FX=$PWD/$BUILD/fixtures
. tests/cli/lib.sh
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
HGX=$FX/h200x4-hgx/snapshot
DGX=$FX/doctor/healthy
for d in "$HGX" "$DGX"; do
	[ -d "$d" ] || { nok "fixture $d missing (make fixtures)"; exit 1; }
done

# the expect.* findings of a run that alarm, "severity id subject" sorted; $T/rc the exit status of the
# run of the expect checks alone
alarms() { # ROOT FILE
	"$BIN" --root "$1" doctor --expect "$2" --only expect --json >"$T/x.json"
	echo $? >"$T/rc"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    if f["id"].startswith("expect.") and f["severity"] in ("error", "warning", "unknown"):
        print(f["severity"], f["id"], f["subject"])' "$T/x.json" | sort
}

# check WHAT ROOT FILE WANT: the alarms are exactly WANT ("" none), exit 2 with an error, else 0
check() {
	local what=$1 got rc want=$4
	got=$(alarms "$2" "$3")
	rc=$(cat "$T/rc")
	if [ "$got" = "$want" ] && [ "$rc" = "$([ -n "$want" ] && echo 2 || echo 0)" ]; then
		want=${want//$'\n'/, }
		ok "$what: ${want:-no expect alarm} (exit $rc)"
	else
		nok "$what: exit $rc, alarms: '${got//$'\n'/, }', want '${want//$'\n'/, }'"
	fi
}

# plant NAME FROM: a copy of tree FROM to break; the function's folder of BDF in it: dev NAME BDF
plant() { rm -rf "$T/$1" && cp -a "$2" "$T/$1"; }
dev() { readlink -f "$T/$1/sys/bus/pci/devices/$2"; }

# --- the 4xH200 capture ------------------------------------------------------------------------------
cat >"$T/hgx.expect" <<'EOF'
# what an administrator writes for the 4x H200 HGX node
gpu.count = 4
gpu.model = NVIDIA H200
gpu.link  = gen5 x16
gpu.nvlinks = 18
gpu.numa[0000:00:06.0] = 0
gpu.numa[0000:00:07.0] = 0
gpu.numa[0000:00:08.0] = 0
gpu.numa[0000:00:09.0] = 0
nic.count = 0   # a VM with no NIC passed through
EOF
check "h200x4-hgx, healthy" "$HGX" "$T/hgx.expect" ""
"$BIN" --root "$HGX" doctor --expect "$T/hgx.expect" --only expect >"$T/text" 2>&1
grep -q "summary: 0 errors, 0 warnings, 0 info, 18 ok" "$T/text" && ok "healthy: 18 ok (4 GPUs x 4 fields, 2 counts)" ||
	nok "healthy summary: $(tail -1 "$T/text")"

plant gone "$HGX"
rm -rf "$(dev gone 0000:00:09.0)" "$T/gone/sys/bus/pci/devices/0000:00:09.0"
check "a GPU missing" "$T/gone" "$T/hgx.expect" "error expect.gpu_count 0000:00:09.0
error expect.gpu_count system"

plant x8 "$HGX"
echo 8 >"$(dev x8 0000:00:07.0)/current_link_width"
check "a GPU link at x8" "$T/x8" "$T/hgx.expect" "error expect.gpu_link 0000:00:07.0"
grep -qE '"message": ?"GPU1: link gen5 x8, expected gen5 x16' "$T/x.json" && ok "x8: the message says found and expected" ||
	nok "x8 message: $(grep -o '"message": *"GPU1: link[^"]*' "$T/x.json")"

plant nvl "$HGX"
sed -i '/^gpu 0000:00:08.0/s/nvlink_active=18 nvlink_inactive=0/nvlink_active=12 nvlink_inactive=6/' "$T/nvl/gpup2p/gpu-facts"
check "6 NVLinks down on a GPU" "$T/nvl" "$T/hgx.expect" "error expect.nvlinks 0000:00:08.0"

plant numa1 "$HGX"
echo 1 >"$(dev numa1 0000:00:08.0)/numa_node"
check "a GPU on another NUMA node" "$T/numa1" "$T/hgx.expect" "error expect.gpu_numa 0000:00:08.0"

# NVML's facts absent: the NVML fields are skipped with the reason, never "ok"
plant nonvml "$HGX"
rm "$T/nonvml/gpup2p/gpu-facts"
check "no NVML facts" "$T/nonvml" "$T/hgx.expect" ""
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = {(f["id"], f["severity"]) for f in d["findings"] if f["id"] in ("expect.nvlinks", "expect.gpu_model")}
m = [f["message"] for f in d["findings"] if f["id"] == "expect.nvlinks"]
sys.exit(not (s == {("expect.nvlinks", "skipped"), ("expect.gpu_model", "skipped")} and "NVML not available" in m[0]))' \
	"$T/x.json" && ok "no NVML: expect.nvlinks and expect.gpu_model skipped, saying NVML is not available" ||
	nok "no NVML: $(grep -o '"id":"expect.nvlinks[^}]*' "$T/x.json" | head -2)"

# --- the 8-GPU 8-NIC tree: NICs, two NUMA nodes, a Gen4 slot ---------------------------------------------
cat >"$T/dgx.expect" <<'EOF'
gpu.count = 8
gpu.link = gen5 x16
nic.count = 8
nic.rate = 400 Gb/s
nic.link = gen5 x16
gpu.numa = 0
gpu.numa[0000:93:00.0] = 1
gpu.numa[0000:94:00.0] = 1
gpu.numa[0000:b3:00.0] = 1
gpu.numa[0000:b4:00.0] = 1
nic.numa = 0
nic.numa[0000:95:00.0] = 1
nic.numa[0000:96:00.0] = 1
nic.numa[0000:b5:00.0] = 1
nic.numa[0000:b6:00.0] = 1
EOF
check "8 GPUs 8 NICs, healthy" "$DGX" "$T/dgx.expect" ""

plant half "$DGX"
echo "200 Gb/sec (4X HDR)" >"$T/half/sys/class/infiniband/mlx5_3/ports/1/rate"
check "a NIC at half rate" "$T/half" "$T/dgx.expect" "error expect.nic_rate 0000:36:00.0"

plant gen4 "$DGX"
echo "16.0 GT/s PCIe" >"$(dev gen4 0000:12:00.0)/max_link_speed"
echo "16.0 GT/s PCIe" >"$(dev gen4 0000:13:00.0)/current_link_speed"
check "a GPU in a Gen4 slot" "$T/gen4" "$T/dgx.expect" "error expect.gpu_link 0000:13:00.0"

plant idle "$DGX"
echo "2.5 GT/s PCIe" >"$(dev idle 0000:13:00.0)/current_link_speed"
check "an idle GPU (2.5 GT/s, both ends Gen5) is no fault" "$T/idle" "$T/dgx.expect" ""

plant nicnuma "$DGX"
echo 0 >"$(dev nicnuma 0000:95:00.0)/numa_node"
check "a NIC on the other NUMA node" "$T/nicnuma" "$T/dgx.expect" "error expect.nic_numa 0000:95:00.0"

plant nicgone "$DGX"
rm -rf "$(dev nicgone 0000:b6:00.0)" "$T/nicgone/sys/bus/pci/devices/0000:b6:00.0"
check "a NIC missing" "$T/nicgone" "$T/dgx.expect" "error expect.nic_count 0000:b6:00.0
error expect.nic_count system"

# more than expected: the baseline is out of date (a warning, exit 1)
sed 's/^gpu.count = 8/gpu.count = 7/' "$T/dgx.expect" >"$T/dgx7.expect"
got=$(alarms "$DGX" "$T/dgx7.expect")
[ "$got" = "warning expect.gpu_count system" ] && [ "$(cat "$T/rc")" = 1 ] && ok "more GPUs than expected: a warning" ||
	nok "more GPUs than expected: exit $(cat "$T/rc"), $got"

# --- report --baseline from several hosts, one deviating -----------------------------------------------
for base in hgx dgx; do
	mkdir -p "$T/fleet-$base"
	root=$HGX bad=$T/x8 want="error expect.gpu_link 0000:00:07.0" what="GPU1 0000:00:07.0 link gen5 x8, expected gen5 x16"
	[ $base = dgx ] && root=$DGX bad=$T/half want="error expect.nic_rate 0000:36:00.0" \
		what="NIC3 0000:36:00.0 rate 200 Gb/s, expected 400 Gb/s"
	for h in node1 node2 node4; do "$BIN" --root "$root" doctor --json >"$T/fleet-$base/$h"; done
	"$BIN" --root "$bad" doctor --json >"$T/fleet-$base/node3"
	"$BIN" report --baseline "$T/fleet-$base" >"$T/$base.base" 2>"$T/err"
	rc=$?
	dv=$(grep '^# deviates:' "$T/$base.base")
	[ $rc = 1 ] && [ "$dv" = "# deviates: node3: $what" ] && ok "baseline of 4 $base hosts: exit 1, node3 deviates alone" ||
		nok "baseline $base: exit $rc, '$dv' $(cat "$T/err")"
	check "the $base baseline on the deviating host" "$bad" "$T/$base.base" "$want"
	check "the $base baseline on a healthy host" "$root" "$T/$base.base" ""
done
grep -qx 'nic.rate = 400 Gb/s' "$T/dgx.base" && grep -qx 'gpu.numa\[0000:93:00.0\] = 1' "$T/dgx.base" &&
	ok "the dgx baseline: nic.rate = 400 Gb/s, each GPU's NUMA node" || nok "dgx baseline: $(head -20 "$T/dgx.base")"
"$BIN" report --baseline "$T/fleet-hgx/node1" "$T/fleet-hgx/node2" >/dev/null 2>&1 && ok "a baseline no host deviates from: exit 0" ||
	nok "two identical hosts: exit $?"
echo '{"schema":1,"command":"doctor","host":"n1","findings":[],"exit_status":0}' >"$T/old.json"
expect 3 'no doctor facts' report --baseline "$T/old.json"
out=$("$BIN" report --baseline "$T/fleet-hgx/node1" "$T/old.json" 2>&1)
grep -qx '# no facts: n1 (doctor could not run, or is older than --baseline)' <<<"$out" &&
	ok "a host whose doctor sent no facts is named, not judged" || nok "no facts: $out"
expect 64 '--baseline and --json exclude each other' report --baseline --json "$T/old.json"

# --- malformed expect files: exit 64, FILE:LINE ----------------------------------------------------------
bad() { # WHAT LINE TEXT (TEXT on line LINE, after a valid first line)
	printf 'gpu.count = 4\n%b\n' "$3" >"$T/bad.expect"
	expect 64 "^gpup2p: $T/bad.expect:$2: " --root "$HGX" doctor --expect "$T/bad.expect"
}
bad "no =" 2 "gpu.count 4"
bad "unknown key" 2 "gpu.colour = red"
bad "unknown kind" 2 "cpu.count = 2"
bad "no kind" 2 "count = 2"
bad "count not a number" 2 "nic.count = four"
bad "negative count" 2 "nic.count = -1"
bad "count twice" 2 "gpu.count = 8"
bad "bad link" 2 "gpu.link = gen7 x16"
bad "bad width" 2 "gpu.link = gen5 x17"
bad "link garbage" 2 "gpu.link = fast"
bad "link, a word after" 2 "gpu.link = x12 fast"
bad "link twice the width" 2 "gpu.link = x16 x8"
bad "bad rate" 2 "nic.rate = 400 Mb/s"
bad "bad numa" 2 "gpu.numa = zero"
bad "bad nvlinks" 2 "gpu.nvlinks = 99"
bad "rate of a GPU" 2 "gpu.rate = 400"
bad "nvlinks of a NIC" 2 "nic.nvlinks = 4"
bad "bad BDF" 2 "gpu.numa[0000:zz:00.0] = 0"
bad "unclosed bracket" 2 "gpu.numa[0000:18:00.0 = 0"
bad "count of one device" 2 "gpu.count[0000:18:00.0] = 1"
bad "no value" 2 "gpu.model ="
bad "key twice" 3 "gpu.numa = 0\ngpu.numa = 1"
bad "device key twice" 3 "gpu.numa[0000:18:00.0] = 0\ngpu.numa[0000:18:0.0] = 1"
bad "space in key" 2 "gpu link = gen5"
: >"$T/empty.expect"
expect 64 "$T/empty.expect:1: empty" --root "$HGX" doctor --expect "$T/empty.expect"
expect 64 "--expect $T/none: No such file" --root "$HGX" doctor --expect "$T/none"
# without --expect each expect check is skipped, not requested (as the active checks without --active)
"$BIN" --root "$HGX" doctor --json --pretty | python3 -c '
import json, sys
f = [f for f in json.load(sys.stdin)["findings"] if f["id"].startswith("expect.")]
sys.exit(not (len(f) == 9 and all(x["severity"] == "skipped" and "not requested" in x["message"] for x in f)))' &&
	ok "without --expect: the 9 expect checks skipped, not requested" || nok "without --expect: expect.* findings not all skipped"
