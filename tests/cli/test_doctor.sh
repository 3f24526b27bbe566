#!/bin/bash
# gpup2p doctor: exit codes, --json against the contract (../shared/notes/doctor-checks.md), --only,
# --skip, --list, --explain, -q, colour, and the healthy 2x H200 snapshot staying quiet.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
FX=$BUILD/fixtures
D=$FX/doctor
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# exit codes: 0 healthy (info only), 1 a warning, 2 an error, 69 no NVIDIA GPU
code() { "$BIN" "$@" >/dev/null 2>&1; echo $?; }
[ "$(code --root "$D/healthy" doctor)" = 0 ] && ok "healthy: exit 0" || nok "healthy: exit $(code --root "$D/healthy" doctor)"
[ "$(code --root "$D/pm-legacy" doctor)" = 1 ] && ok "a warning: exit 1" || nok "pm-legacy: exit $(code --root "$D/pm-legacy" doctor)"
[ "$(code --root "$D/drv-nouveau" doctor)" = 2 ] && ok "an error: exit 2" || nok "drv-nouveau: exit $(code --root "$D/drv-nouveau" doctor)"
[ "$(code --root "$D/drv-nouveau" doctor --skip driver)" = 0 ] && ok "--skip driver: the error is gone, exit 0" ||
	nok "--skip driver on drv-nouveau"
mkdir -p "$tmp/nogpu/sys/bus/pci/devices"
expect 69 "no NVIDIA GPU on the PCI bus" --root "$tmp/nogpu" doctor
# an unknown finding (a version line doctor does not understand) counts only with --strict
cp -a "$D/healthy" "$tmp/odd"
echo "something else" >"$tmp/odd/proc/driver/nvidia/version"
[ "$(code --root "$tmp/odd" doctor)" = 0 ] && [ "$(code --root "$tmp/odd" doctor --strict)" = 1 ] &&
	ok "unknown: exit 0, with --strict exit 1" || nok "--strict: $(code --root "$tmp/odd" doctor --strict)"
# (driver.flavor, and peermem.dmabuf: whether the module can export dma-bufs is not known either)
"$BIN" --root "$tmp/odd" doctor | grep -q "^unknown (2 findings)" && ok "the unknown findings are listed" || nok "unknown group"

# usage errors: exit 64, one line naming the problem
expect 64 "no check or family 'bar.nosuch'" --root "$D/healthy" doctor --only bar.nosuch
expect 64 "no check or family 'nosuch'" --root "$D/healthy" doctor --skip driver,nosuch
expect 64 "--explain: no check or family 'nope'" doctor --explain nope
expect 64 "no --csv: it prints text or --json" --root "$D/healthy" doctor --csv
expect 64 "unknown option '--bogus'" doctor --bogus
expect 64 "exclude each other" doctor --list --explain bar.small
expect 64 "needs a value" doctor --only

# --json: valid, and the contract's keys and counts
"$BIN" --root "$D/bar-small" doctor --json --pretty >"$tmp/d.json"
rc=$?
python3 -m json.tool "$tmp/d.json" >/dev/null && ok "--json is valid JSON" || nok "--json: invalid"
python3 - "$tmp/d.json" "$rc" "$D/bar-small" <<'EOF' && ok "--json follows the contract" || nok "--json contract"
import json, sys
d = json.load(open(sys.argv[1]))
sev = ["error", "warning", "info", "ok", "unknown", "skipped"]
assert d["schema"] == 1 and d["command"] == "doctor", "schema/command"
assert d["host"] == "dgx01" and d["root"].endswith(sys.argv[3].split("/")[-1]), (d["host"], d["root"])
assert d["gpup2p"]["live"] is False and d["gpup2p"]["argv"][0] == "doctor"
assert list(d["summary"]) == sev, d["summary"]
for s in sev:
    assert d["summary"][s] == sum(f["severity"] == s for f in d["findings"]), s
keys = ["id", "severity", "subject", "bdf", "message", "fix", "evidence"]
for f in d["findings"]:
    assert all(k in f for k in keys), f
    assert f["severity"] in sev and "." in f["id"] and isinstance(f["bdf"], list) and isinstance(f["evidence"], dict)
    assert f["fix"] is None or f["severity"] in ("error", "warning", "info", "skipped", "unknown")
    if f["severity"] in ("error", "warning"):
        assert f["fix"], "an alarm without a fix: %s" % f["id"]
pairs = [(f["id"], f["subject"]) for f in d["findings"]]
assert len(pairs) == len(set(pairs)), "one finding per check and subject"
# the planted fault: GPU0 at 256M with a NIC on its switch; ReBAR offers 128G
small = [f for f in d["findings"] if f["id"] == "bar.small" and f["subject"] == "0000:13:00.0"]
assert small and small[0]["severity"] == "error" and small[0]["bdf"] == ["0000:13:00.0"], small
assert d["exit_status"] == int(sys.argv[2]) == 2, (d["exit_status"], sys.argv[2])
EOF

# --only and --skip select by family, glob or id
ids=$("$BIN" --root "$D/healthy" doctor --json --only bar,kmod.nv_p2p_api --skip bar.rebar |
	python3 -c 'import json,sys; print(" ".join(sorted({f["id"] for f in json.load(sys.stdin)["findings"]})))')
[ "$ids" = "bar.bar1_used bar.small bar.unassigned kmod.nv_p2p_api" ] && ok "--only bar,kmod.nv_p2p_api --skip bar.rebar" || nok "selection: $ids"
ids=$("$BIN" --root "$D/healthy" doctor --json --only 'iommu.*' |
	python3 -c 'import json,sys; print(" ".join(sorted({f["id"] for f in json.load(sys.stdin)["findings"]})))')
[ "$ids" = "iommu.cmdline iommu.group_shared iommu.mode iommu.vfio" ] && ok "--only iommu.*" || nok "iommu.*: $ids"

# --list: every check once, with family, kind, sources and title; every check gives a finding
"$BIN" doctor --list >"$tmp/list"
n=$(wc -l <"$tmp/list")
[ "$n" -ge 25 ] && ok "--list: $n checks" || nok "--list: $n lines"
awk '{ split($1, a, "."); if (a[1] != $2 || ($3 != "static" && $3 != "active") || NF < 5) bad++ } END { exit bad > 0 }' \
	"$tmp/list" && ok "--list lines: id, family, kind, sources, title" || nok "--list format"
"$BIN" --root "$D/healthy" doctor --json --pretty | python3 -c 'import json,sys; print("\n".join(sorted({f["id"] for f in json.load(sys.stdin)["findings"]})))' >"$tmp/ran"
cut -d' ' -f1 "$tmp/list" | sort | cmp -s - "$tmp/ran" && ok "every listed check reports on the healthy fixture" ||
	nok "checks without a finding: $(cut -d' ' -f1 "$tmp/list" | sort | comm -23 - "$tmp/ran" | tr '\n' ' ')"
"$BIN" doctor --list --json | python3 -m json.tool >/dev/null && ok "--list --json is valid JSON" || nok "--list --json"
miss=""
for id in $(cut -d' ' -f1 "$tmp/list"); do
	sed 's/\\-/-/g' man/gpup2p-doctor.1 | grep -qx ".B $id" || miss="$miss $id"
done
[ -z "$miss" ] && ok "every check is in the man page" || nok "not in man/gpup2p-doctor.1:$miss"

# --explain: one check, or a family
out=$("$BIN" doctor --explain iommu.mode)
grep -q "^iommu.mode: " <<<"$out" && grep -q "iommu=pt" <<<"$out" && ok "--explain iommu.mode" || nok "--explain: $out"
[ "$("$BIN" doctor --explain bar | grep -c '^bar\.')" = 4 ] && ok "--explain bar: its four checks" || nok "--explain bar"

# text output: grouped by severity, alarms with a fix, a summary; -q only the alarms
out=$("$BIN" --root "$D/drv-nouveau" doctor)
grep -qE "^errors \(2 findings[;)]" <<<"$out" && grep -q "fix: printf 'blacklist nouveau" <<<"$out" &&
	grep -q "^summary: 2 errors, 0 warnings" <<<"$out" && ok "errors grouped, with fix lines and the summary" ||
	nok "text output: $out"
out=$("$BIN" --root "$D/drv-nouveau" doctor -q)
! grep -qE "^(ok|info|skipped|summary)" <<<"$out" && grep -q "driver.nouveau" <<<"$out" && ok "-q: only the alarms" ||
	nok "-q: $out"
[ -z "$("$BIN" --root "$D/healthy" doctor -q)" ] && ok "-q on a healthy machine prints nothing" || nok "-q healthy"
"$BIN" --root "$D/drv-nouveau" doctor --color=always | grep -q $'\033\[1;31merrors' && ok "--color=always colours" ||
	nok "no colour"
! "$BIN" --root "$D/drv-nouveau" doctor | grep -q $'\033' && ok "NO_COLOR: no escape codes" || nok "colour with NO_COLOR"
"$BIN" --root "$D/healthy" doctor -v | grep -q "limits.memlock .*live only" && ok "offline: live-only checks skipped" ||
	nok "live-only under --root"
out=$("$BIN" --root "$D/healthy" doctor -v --only p2p)
grep -q "p2p.verify .*not requested" <<<"$out" && grep -q "p2p.access .*live only" <<<"$out" &&
	ok "without --active: active checks skipped, not requested; offline: p2p.access live only" || nok "p2p: $out"
out=$("$BIN" --root "$D/healthy" doctor -v --active --only p2p.verify 2>"$tmp/err")
grep -q "p2p.verify .*live only" <<<"$out" && [ ! -s "$tmp/err" ] &&
	ok "--active under --root: the active checks are live only, skipped; no progress off a terminal" ||
	nok "--active offline: $out $(cat "$tmp/err")"
# gpu.xid reads the kernel log only with --kmsg: the planted log (gpu-xid.spec) is an error then
[ "$(code --root "$D/gpu-xid" doctor)" = 0 ] && "$BIN" --root "$D/gpu-xid" doctor -v --only gpu.xid |
	grep -q "gpu.xid .*not requested" && ok "gpu.xid without --kmsg: skipped, exit 0" ||
	nok "gpu.xid without --kmsg: exit $(code --root "$D/gpu-xid" doctor)"
"$BIN" --root "$D/gpu-xid" doctor --kmsg --only gpu.xid --json >"$tmp/xid.json"
rc=$?
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
s, f = d["summary"], {x["subject"]: x for x in d["findings"]}
assert (s["error"], s["warning"], s["info"], s["ok"]) == (2, 1, 1, 5), s  # 63: IGNORE in the catalogue
assert f["0000:13:00.0"]["severity"] == "error" and f["0000:13:00.0"]["evidence"]["xid"] == "13 x2, 79 x1", f["0000:13:00.0"]
assert "fallen off the bus" in f["0000:13:00.0"]["message"], f["0000:13:00.0"]' "$tmp/xid.json" && [ $rc = 2 ] &&
	ok "--kmsg: Xid 79 on GPU0 is an error, exit 2" || nok "--kmsg: exit $rc"
[ "$(code --root "$D/healthy" doctor --kmsg)" = 0 ] && ok "--kmsg on a clean log: exit 0" || nok "--kmsg healthy"

# --no-cuda: the three checks that ask libcuda say skipped (--no-cuda), the rest as without it; not with --active
expect 64 "--active and --no-cuda exclude each other" --root "$D/healthy" doctor --active --no-cuda
"$BIN" --root "$D/healthy" doctor --json --pretty >"$tmp/cu.json"; rc1=$?
GPUP2P_LIBCUDA=/nonexistent/libcuda.so.1 "$BIN" --root "$D/healthy" doctor --no-cuda --json --pretty >"$tmp/nocu.json"; rc2=$?
python3 -c 'import json,sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
cu = {"driver.cuda_init", "p2p.access", "p2p.nvml_status"}
fb = {(f["id"], f["subject"]): f for f in b["findings"]}
for i in cu:
    f = [x for x in b["findings"] if x["id"] == i]
    assert f and all(x["severity"] == "skipped" and "--no-cuda" in x["message"] for x in f), (i, f)
rest = lambda d: sorted((f["id"], f["subject"], f["severity"], f["message"]) for f in d["findings"] if f["id"] not in cu)
assert rest(a) == rest(b), set(rest(a)) ^ set(rest(b))' "$tmp/cu.json" "$tmp/nocu.json" && [ $rc1 = $rc2 ] &&
	ok "--no-cuda: driver.cuda_init, p2p.access, p2p.nvml_status skipped; every other finding unchanged" ||
	nok "--no-cuda: exit $rc1/$rc2"

# a machine without RDMA NICs: the rdma, nic and peermem.dmabuf checks are all skipped, the exit the same
ws=$("$BIN" --root "$FX/workstation" doctor --json --only rdma,nic,peermem.dmabuf | python3 -c '
import json, sys; print(" ".join(sorted({f["severity"] for f in json.load(sys.stdin)["findings"]})))')
[ "$ws" = skipped ] && [ "$(code --root "$FX/workstation" doctor)" = "$(code --root "$FX/workstation" doctor --skip rdma,nic,peermem.dmabuf)" ] &&
	ok "no RDMA NIC: rdma.*, nic.*, peermem.dmabuf skipped, exit unchanged" || nok "no RDMA NIC: severities $ws"

# the real 2x H200 snapshot: a healthy machine, no warning, no error
tar -C "$tmp" -xzf tests/fixtures/h200x2-live/h200-live.tar.gz
"$BIN" --root "$tmp/h200-live" doctor --json >"$tmp/h200.json"
rc=$?
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; sys.exit(s["error"] + s["warning"])' "$tmp/h200.json" &&
	[ "$rc" = 0 ] && ok "h200x2-live: no error, no warning, exit 0" ||
	nok "h200x2-live: exit $rc, $(grep -B2 -A3 '"severity": "\(error\|warning\)"' "$tmp/h200.json" | head -20)"
[ "$(code --root "$FX/h200x2" doctor)" = 0 ] && ok "h200x2 spec: exit 0" || nok "h200x2 spec: exit $(code --root "$FX/h200x2" doctor)"

# gpu.xid with a log naming 70 devices not on the bus before GPU0's Xid 79: the GPUs on the bus are
# always counted (the table no longer fills before them), what is left out is unknown, not ok
cp -a "$D/healthy" "$tmp/xid"
for i in $(seq 1 70); do printf '4,%d,1,-;NVRM: Xid (PCI:0001:%02x:00): 13, pid=1, name=x\n' "$i" "$i"; done >"$tmp/xid/dev/kmsg"
echo "4,71,2,-;NVRM: Xid (PCI:0000:13:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." >>"$tmp/xid/dev/kmsg"
"$BIN" --root "$tmp/xid" doctor --kmsg --only gpu.xid --json >"$tmp/xid.json"; rc=$?
python3 - "$tmp/xid.json" <<'PY' && [ $rc -eq 2 ] && ok "gpu.xid: GPU0's Xid after 70 off-bus devices: error; 6 events left out: unknown" ||
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
g0 = [x for x in f if x["subject"] == "0000:13:00.0"]
assert g0 and g0[0]["severity"] == "error" and "79" in g0[0]["message"], g0
off = [x for x in f if x["severity"] == "warning" and x["subject"].startswith("0001:")]
assert len(off) == 64, len(off)
unk = [x for x in f if x["severity"] == "unknown"]
assert len(unk) == 1 and "6 Xid events" in unk[0]["message"] and "0001:41:00.0" in unk[0]["message"], unk
assert sum(x["severity"] == "ok" for x in f) == 7, f
PY
	nok "gpu.xid with 70 off-bus devices: exit $rc $(head -c 600 "$tmp/xid.json")"
# SR-IOV: a PF's VFs have no link of their own: one pcie.link_width finding for NIC0 and its 6 VFs, the
# group's name in text, each VF's BDF in JSON; no "unknown" for the VFs' missing link state
"$BIN" --root "$D/pcie-width-vf" doctor --only pcie.link_width >"$tmp/vf.txt"
grep -q '^  pcie.link_width  0000:04:00.0: NIC0+6VFs: link at x8, both ends support x16' "$tmp/vf.txt" &&
	! grep -q '0000:04:00.2\|^unknown' "$tmp/vf.txt" && ok "pcie.link_width: NIC0+6VFs, one line in text" ||
	nok "pcie.link_width on pcie-width-vf: $(cat "$tmp/vf.txt")"
vf=$("$BIN" --root "$D/pcie-width-vf" doctor --only pcie.link_width --json | python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]:
    if f["severity"] == "warning": print(" ".join(f["bdf"]))')
[ "$vf" = "0000:04:00.0 0000:04:00.2 0000:04:00.3 0000:04:00.4 0000:04:00.5 0000:04:00.6 0000:04:00.7" ] &&
	ok "pcie.link_width --json: the PF's warning lists each of its 6 VFs" || nok "pcie.link_width --json: bdf $vf"
