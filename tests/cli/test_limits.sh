#!/bin/bash
# No fixed limit cuts output silently: a machine wider than the old arrays (110 host bridges, 141 GPUs,
# 361 redirecting bridges, 110 IOMMU units), a size sweep of more than 64 sizes, a reserved ReBAR size
# code, and sysfs strings that are not UTF-8 in JSON. Every expected count here is derived from the
# fixture's own spec (written below), never from gpup2p's output.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
py() { python3 -c "$1" "${@:2}"; }

# --- the wide machine: host bridge h (PCI domain h) holds root port -> switch -> switch -> GPU; ACS
# redirect set on the root port and on both downstream ports; host bridge 0 has 32 GPUs below its
# second switch, all in IOMMU group 0; every GPU's group translates (DMA). The kernel command line
# names the 110 root ports (1452 characters).
py 'import sys
N = 110
out = ["numa 0 cpus=0-3", "cmdline ro quiet intel_iommu=on pci=disable_acs_redir=" + ";".join("%04x:00:01.0" % h for h in range(N))]
def dev(bdf, parent, kind, extra=""):
    ep = kind == "endpoint"
    out.append("dev %s parent=%s kind=%s vendor=%s device=%s class=%s link=16:16 maxlink=16:16 %s" % (
        bdf, parent, kind, "10de" if ep else "10b5", "2330" if ep else "8747", "030200" if ep else "060400", extra))
for h in range(N):
    d = "%04x" % h
    out.append("hostbridge pci%s:00 numa=0" % d)
    dev(d + ":00:01.0", "pci%s:00" % d, "rootport", "acs=005f:001d")
    dev(d + ":01:00.0", d + ":00:01.0", "upstream")
    dev(d + ":02:00.0", d + ":01:00.0", "downstream", "acs=005f:001d")
    dev(d + ":03:00.0", d + ":02:00.0", "upstream")
    for k in range(32 if h == 0 else 1):
        dev("%s:04:%02x.0" % (d, k), d + ":03:00.0", "downstream", "acs=005f:001d")
        dev("%s:%02x:00.0" % (d, 0x10 + k), "%s:04:%02x.0" % (d, k), "endpoint",
            "bar0=16M bar1=64G,64,pf bar3=32M,64,pf driver=nvidia iommu_group=%d iommu_type=DMA" % (h + 1 if h else 0))
open(sys.argv[1], "w").write("\n".join(out) + "\n")' "$T/wide.spec"
python3 tests/fixtures/gen.py "$T/wide.spec" "$T/wide" || nok "generating the wide fixture"
W=$T/wide
# what the spec says: host bridges, GPUs, bridges with ACS (all of them on GPU paths, all redirecting)
grep -o '^hostbridge [^ ]*' "$T/wide.spec" | cut -d' ' -f2 | sort >"$T/want-hb"
grep -c 'kind=endpoint' "$T/wide.spec" >"$T/want-ngpu"
grep 'acs=005f:001d' "$T/wide.spec" | cut -d' ' -f2 | sort >"$T/want-acs"

"$BIN" --root "$W" topo --tree >"$T/tree" 2>"$T/tree.err"; rc=$?
sed -n 's/^\(pci[0-9a-f]*:[0-9a-f]*\) host bridge.*/\1/p' "$T/tree" | sort >"$T/got-hb"
[ $rc -eq 0 ] && [ "$(wc -l <"$T/want-hb")" = 110 ] && cmp -s "$T/want-hb" "$T/got-hb" &&
	ok "topo --tree: all 110 host bridges shown (the old array held 64)" ||
	nok "topo --tree host bridges: rc=$rc, $(wc -l <"$T/got-hb") of 110 $(head -3 "$T/tree.err")"
[ "$(grep -c ' GPU[0-9]* \[10de:2330\]' "$T/tree")" = "$(cat "$T/want-ngpu")" ] &&
	ok "topo --tree: every GPU of the spec ($(cat "$T/want-ngpu")) in the tree" ||
	nok "topo --tree GPUs: $(grep -c ' GPU[0-9]* \[10de:2330\]' "$T/tree") of $(cat "$T/want-ngpu")"
# 32 GPUs below one switch port: the tree shows each of them under 0000:03:00.0's downstream ports
[ "$(grep -c '^ *[|`]-- 0000:04:[0-9a-f][0-9a-f].0 switch downstream' "$T/tree")" = 32 ] &&
	ok "topo --tree: the 32 downstream ports of one switch" || nok "topo --tree: switch ports cut"

"$BIN" --root "$W" acs >"$T/acs" 2>&1; rc=$?
sed -n 's/^Boot parameter that clears the redirection: pci=disable_acs_redir=//p' "$T/acs" | tr ';' '\n' | sort >"$T/got-acs"
[ $rc -eq 1 ] && [ "$(wc -l <"$T/want-acs")" = 361 ] && cmp -s "$T/want-acs" "$T/got-acs" &&
	ok "acs: the boot parameter names all 361 redirecting bridges ($(grep '^Boot' "$T/acs" | wc -c) characters)" ||
	nok "acs boot parameter: rc=$rc, $(wc -l <"$T/got-acs") of 361 bridges"
"$BIN" --root "$W" acs --json >"$T/acs.json"; rc=$?
py 'import json,sys
d=json.load(open(sys.argv[1])); bp=d["boot_parameter"]
assert bp.startswith("pci=disable_acs_redir="), bp[:40]
got=sorted(bp.split("=",2)[2].split(";")); want=open(sys.argv[2]).read().split()
assert got==want, (len(got), len(want))' "$T/acs.json" "$T/want-acs" && [ $rc -eq 1 ] &&
	ok "acs --json: boot_parameter whole" || nok "acs --json boot_parameter cut (rc=$rc)"
"$BIN" --root "$W" acs --disable --dry-run --force >"$T/dis"; rc=$?
tail -1 "$T/dis" | sed 's/^  pci=disable_acs_redir=//' | tr ';' '\n' | sort >"$T/got-dis"
[ $rc -eq 0 ] && cmp -s "$T/want-acs" "$T/got-dis" && ok "acs --disable --dry-run: the boot parameter names all 361 bridges" ||
	nok "acs --disable --dry-run boot parameter: rc=$rc, $(wc -l <"$T/got-dis") of 361"
"$BIN" --root "$W" acs --disable --dry-run --force --mode zero >"$T/dis0"
tail -1 "$T/dis0" | sed 's/^  pci=config_acs=//' | tr ';' '\n' | sed 's/^0000000@//' | sort >"$T/got-dis0"
cmp -s "$T/want-acs" "$T/got-dis0" && ok "acs --disable --mode zero --dry-run: config_acs names all 361 bridges" ||
	nok "config_acs boot parameter: $(wc -l <"$T/got-dis0") of 361"
# the root port above host bridge 0's 32 GPUs carries every pair of one of them with one of the
# 109 GPUs elsewhere: 32 * 109 = 3488 pairs (about 40000 characters)
n=$(sed -n '/^0000:00:01.0 root port/,/on the path of/p' "$T/acs" | sed -n 's/^  on the path of: //p' | grep -oE 'GPU[0-9]+-GPU[0-9]+' | wc -l)
[ "$n" = 3488 ] && ok "acs: all 3488 pairs across one root port listed" || nok "acs pair list of 0000:00:01.0: $n of 3488"
n=$("$BIN" --root "$W" acs --csv --no-header | py 'import csv,sys
print(next(len(r[6].split()) for r in csv.reader(sys.stdin) if r[0]=="0000:00:01.0"))')
[ "$n" = 3488 ] && ok "acs --csv: all 3488 pairs in the pairs field" || nok "acs --csv pairs of 0000:00:01.0: $n of 3488"

# doctor: every GPU the IOMMU translates named (141 names, about 900 characters); GPU0's group
# shared with the 31 other GPUs of host bridge 0 (434 characters), every one named
"$BIN" --root "$W" doctor --json --pretty >"$T/doc.json" # --pretty: every finding (--json keeps under 64 KiB)
py 'import json,re,sys
f=json.load(open(sys.argv[1]))["findings"]
m=[x["message"] for x in f if x["id"]=="iommu.mode"][0]
names=re.search(r"\) for (.*): peer-to-peer", m).group(1).split(", ")
assert sorted(names)==sorted("GPU%d" % i for i in range(int(sys.argv[2]))), (len(names), m[-80:])
g=[x["message"] for x in f if x["id"]=="iommu.group_shared" and x["subject"]=="0000:10:00.0"][0]
got=re.search(r"group 0 with (.*): VFIO", g).group(1).split(", ")
assert got==["0000:%02x:00.0" % (0x10 + k) for k in range(1, 32)], (len(got), g[-80:])' "$T/doc.json" "$(cat "$T/want-ngpu")" &&
	ok "doctor: iommu.mode names all $(cat "$T/want-ngpu") GPUs, iommu.group_shared all 31 group members" ||
	nok "doctor on the wide machine: a list cut"
# six unassigned BARs of 1048575 bytes ("1024.0K" each): all six named (they did not fit 64 bytes)
cat >"$T/unset.spec" <<'EOF'
numa 0 cpus=0-3
hostbridge pci0000:00 numa=0
dev 0000:00:01.0 parent=pci0000:00 kind=rootport vendor=8086 device=2030 class=060400 link=16:16 maxlink=16:16
dev 0000:01:00.0 parent=0000:00:01.0 kind=endpoint vendor=10de device=2330 class=030200 link=16:16 maxlink=16:16 bar0=1048575,unset bar1=1048575,unset bar2=1048575,unset bar3=1048575,unset bar4=1048575,unset bar5=1048575,unset driver=nvidia
EOF
python3 tests/fixtures/gen.py "$T/unset.spec" "$T/unset"
"$BIN" --root "$T/unset" doctor --json | py 'import json,sys
m=[x["message"] for x in json.load(sys.stdin)["findings"] if x["id"]=="bar.unassigned"][0]
assert m.startswith("GPU0: BAR " + ", ".join("%d (1024.0K)" % k for k in range(6)) + " has no address"), m' &&
	ok "doctor: bar.unassigned names all six BARs" || nok "doctor bar.unassigned: a BAR left out"

# the driver's registry keys: RegistryDwords of 1040 characters with a P2P key at its end, a long
# per-device list and EnableResizableBar=1: the P2P key seen, every part of the message there
cp -a "$BUILD/fixtures/doctor/drv-params-rebar" "$T/params"
py 'import sys
p=sys.argv[1] + "/proc/driver/nvidia/params"; t=open(p).read()
t=t.replace("RegistryDwords: \"\"", "RegistryDwords: \"" + "RmFoo=0;" * 130 + "RMForceP2PType=1\"", 1)
t=t.replace("RegistryDwordsPerDevice: \"\"", "RegistryDwordsPerDevice: \"" + "pci=0000:01:00.0;RmBar=1;" * 40 + "\"", 1)
open(p, "w").write(t)' "$T/params"
"$BIN" --root "$T/params" doctor --json | py 'import json,sys
m=[x["message"] for x in json.load(sys.stdin)["findings"] if x["id"]=="driver.params"][0]
assert m.startswith("registry keys force P2P behaviour") and "RMForceP2PType=1\", per device" in m and \
	m.count("RmBar=1;") == 40 and m.endswith("; EnableResizableBar=1: the driver resizes BAR1 itself"), m[-120:]' &&
	ok "doctor: driver.params sees a P2P key after 1040 characters, names both lists and EnableResizableBar" ||
	nok "doctor driver.params: a long RegistryDwords cut"

# IOMMU: the command line token naming 110 bridges is kept whole; 110 units do not fit the fixed field:
# the list says how many it leaves out
"$BIN" --root "$W" bar --json >"$T/bar.json"; rc=$?
py 'import json,sys
io=json.load(open(sys.argv[1]))["iommu"]
want=[t for t in open(sys.argv[2]).read().split("\n") if t.startswith("cmdline ")][0].split()[3:]
assert io["cmdline"].split()==want, io["cmdline"][-60:]' "$T/bar.json" "$T/wide.spec" && [ $rc -eq 0 ] &&
	ok "bar --json: the IOMMU command line tokens whole (1452-character disable_acs_redir)" || nok "bar --json cmdline cut (rc=$rc)"
cat >"$T/units.spec" <<EOF
iommu units=$(seq -s, -f 'dmar%.0f' 0 109) type=DMA
hostbridge pci0000:00 numa=0
dev 0000:00:01.0 parent=pci0000:00 kind=rootport vendor=8086 device=2030 class=060400 link=16:16 maxlink=16:16
EOF
python3 tests/fixtures/gen.py "$T/units.spec" "$T/units"
units=$("$BIN" --root "$T/units" bar | sed -n 's/^IOMMU: DMA (units \(.*\), [0-9]* groups.*/\1/p')
py 'import sys
u=sys.argv[1].split(","); more=int(u[-1][1:].split()[0]) if u[-1].startswith("+") else 0
names=[x for x in u if not x.startswith("+")]
assert names==["dmar%d" % i for i in sorted(range(110), key=lambda i: "dmar%d" % i)][:len(names)] and len(names)+more==110, u' "$units" &&
	ok "bar: IOMMU units listed, the rest counted (+N more), N + listed = 110" || nok "bar IOMMU units: '$units'"

# --- a size sweep of more than 64 sizes (over the libcuda test double): every size from --min to --max
FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
if [ -f "$FAKE" ]; then
	GPUP2P_LIBCUDA=$FAKE "$BIN" bench h2d --gpu 0 --pinned --min 1 --max 4K --factor 1.05 --iters 1 --reps 1 \
		--csv --no-header >"$T/sweep" 2>"$T/sweep.err"; rc=$?
	py 'import csv,sys
s=[int(r[7]) for r in csv.reader(open(sys.argv[1]))]
assert len(s) > 64 and s[0] == 1 and s[-1] == 4096, (len(s), s[:3], s[-3:])
for a, b in zip(s, s[1:]):   # each step: x1.05 rounded down, one byte at least, the last one max itself
    assert b == max(int(a * 1.05), a + 1) or (b == 4096 and a * 1.05 >= 4096), (a, b)' "$T/sweep" && [ $rc -eq 0 ] &&
		ok "bench --min 1 --max 4K --factor 1.05: $(wc -l <"$T/sweep") sizes, 1 to 4096, none left out" ||
		nok "bench sweep: rc=$rc $(wc -l <"$T/sweep") rows $(cat "$T/sweep.err")"
	GPUP2P_LIBCUDA=$FAKE expect 64 "more than [0-9]+ sizes: use a larger --factor" bench h2d --min 1 --max 1T --factor 1.0001
else
	nok "test double $FAKE not built"
fi

# --- Resizable BAR with a reserved current size code (63): said so, no size made up
cat >"$T/rebar.spec" <<'EOF'
numa 0 cpus=0-3
hostbridge pci0000:00 numa=0
dev 0000:00:01.0 parent=pci0000:00 kind=rootport vendor=8086 device=2030 class=060400 link=16:16 maxlink=16:16
dev 0000:01:00.0 parent=0000:00:01.0 kind=endpoint vendor=10de device=2330 class=030200 link=16:16 maxlink=16:16 bar0=16M bar1=256M,64,pf bar3=32M,64,pf rebar=1:8796093022208T:256M-64G driver=nvidia
EOF
python3 tests/fixtures/gen.py "$T/rebar.spec" "$T/rebar"
out=$("$BIN" --root "$T/rebar" bar 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q 'Resizable BAR: BAR 1 current reserved (size code 63), supported 256M,512M,1G,2G,4G,8G,16G,32G,64G$' <<<"$out" &&
	ok "bar: a reserved ReBAR size code is shown as reserved" || nok "bar reserved ReBAR: rc=$rc $out"
"$BIN" --root "$T/rebar" bar --json | py 'import json,sys
e=json.load(sys.stdin)["devices"][0]["rebar"]["entries"][0]
assert e["current"] is None and e["current_code"] == 63 and e["supported"][0] == 256 << 20, e' &&
	ok "bar --json: reserved ReBAR size: current null, current_code 63" || nok "bar --json reserved ReBAR"
"$BIN" --root "$T/rebar" bar --csv --no-header | py 'import csv,sys
r=next(csv.reader(sys.stdin)); assert r[6] == "present" and r[7] == "" and r[8] == str(64 << 30), r' &&
	ok "bar --csv: reserved ReBAR size: rebar_current empty" || nok "bar --csv reserved ReBAR"

# --- interleaved CPU numbering: a NUMA node of CPUs 0,2,4,...,510 (1 000 characters in local_cpulist)
cpus=$(seq -s, 0 2 510)
sed -e "s/^numa 0 cpus=.*/numa 0 cpus=$cpus/" -e 's/ rebar=[^ ]*//' "$T/rebar.spec" >"$T/cpus.spec"
python3 tests/fixtures/gen.py "$T/cpus.spec" "$T/cpus"
"$BIN" --root "$T/cpus" topo --json | py 'import json,sys
d=json.load(sys.stdin)["devices"][0]; want=",".join(str(c) for c in range(0, 511, 2))
assert d["cpu_affinity"] == want, (len(d["cpu_affinity"] or ""), len(want))' &&
	ok "topo --json: a ${#cpus}-character CPU affinity whole" || nok "topo --json: long local_cpulist cut"
[ "$("$BIN" --root "$T/cpus" topo | awk -F'\t' '/^GPU0/ {print $(NF-3)}')" = "$cpus" ] &&
	ok "topo: the CPU Affinity column whole" || nok "topo: CPU Affinity column cut"

# --- sysfs strings that are not UTF-8 (an RDMA device name, the kernel command line) give valid JSON
cp -a "$BUILD/fixtures/seed4x2" "$T/bad8"
py 'import os,sys
r=sys.argv[1].encode()
bad=b"mlx5_\xff\xc3(\xed\xa0\x80\x01"
dev=r+b"/sys/bus/pci/devices/0000:02:00.0"
os.rename(dev+b"/infiniband/mlx5_0", dev+b"/infiniband/"+bad)
link=r+b"/sys/class/infiniband/mlx5_0"; tgt=os.readlink(link); os.unlink(link)
os.symlink(tgt[:-len(b"mlx5_0")]+bad, r+b"/sys/class/infiniband/"+bad)
os.makedirs(r+b"/proc", exist_ok=True)
open(r+b"/proc/cmdline","wb").write(b"ro intel_iommu=on\xe9\xc0\xaf iommu=pt\x80\n")' "$T/bad8"
for c in "topo --json" "topo --jsonl" "bar --json"; do
	# shellcheck disable=SC2086
	"$BIN" --root "$T/bad8" $c >"$T/j" 2>/dev/null
	lines=; [ "${c#*--}" = jsonl ] && lines=--json-lines
	# json.tool reads a named file as strict UTF-8 (stdin would be read with surrogateescape)
	[ -s "$T/j" ] && python3 -m json.tool $lines "$T/j" >/dev/null 2>&1 &&
		ok "$c with invalid UTF-8 in sysfs: valid JSON (python3 -m json.tool $lines)" ||
		nok "$c with invalid UTF-8: not valid JSON: $(python3 -m json.tool $lines "$T/j" 2>&1 | tail -1)"
done
"$BIN" --root "$T/bad8" topo --json | py 'import json,sys
d=json.load(sys.stdin); n=[x for x in d["devices"] if x["bdf"]=="0000:02:00.0"][0]
assert n["rdma_device"]=="mlx5_\ufffd\ufffd(\ufffd\ufffd\ufffd\x01", ascii(n["rdma_device"])' &&
	ok "topo --json: each invalid byte is U+FFFD, a control character escaped, the rest kept" ||
	nok "topo --json invalid UTF-8 replacement: $("$BIN" --root "$T/bad8" topo --json | grep rdma_device | head -2)"
"$BIN" --root "$T/bad8" bar --json | py 'import json,sys
c=json.load(sys.stdin)["iommu"]["cmdline"]
assert c=="intel_iommu=on\ufffd\ufffd\ufffd iommu=pt\ufffd", ascii(c)' &&
	ok "bar --json: the command line's invalid bytes as U+FFFD" || nok "bar --json cmdline with invalid UTF-8"
