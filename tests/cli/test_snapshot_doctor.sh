#!/bin/bash
# snapshot captures what doctor reads: doctor on a root and on that root's snapshot gives the same
# findings (every doctor fixture, healthy and planted faults, and the real H200 capture); the
# marker says what was captured and what the live source could not give; snapshots of an earlier
# format (tests/fixtures/old-snapshot-v0.1, the H200 capture) still load, what they lack skipped.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
FX=$PWD/$BUILD/fixtures
. tests/cli/lib.sh
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pairs=()
# pair LABEL ROOT SNAPSHOT: doctor --json on both, compared at the end by tests/cli/doctor_same.py
# (same findings, summary, host and exit status)
pair() {
	local n=${#pairs[@]}
	"$BIN" --root "$2" doctor --json --pretty >"$tmp/$n.root.json" 2>/dev/null
	"$BIN" --root "$3" doctor --json --pretty >"$tmp/$n.snap.json" 2>/dev/null
	pairs+=("$1" "$2" "$tmp/$n.root.json" "$3" "$tmp/$n.snap.json")
}
# every doctor fixture (healthy and each planted fault) and two topology fixtures
for fx in "$FX"/doctor/* "$FX/h200x2" "$FX/dgx-h100"; do
	name=$(basename "$fx")
	if "$BIN" --root "$fx" -q snapshot --dir "$tmp/snap-$name" 2>"$tmp/err"; then
		pair "$name" "$fx" "$tmp/snap-$name"
	else
		nok "$name: snapshot failed: $(cat "$tmp/err")"
	fi
done
# the real capture of the 2x H200 machine (format 1), snapshotted again by this version
mkdir -p "$tmp/h200" && tar -C "$tmp/h200" -xzf tests/fixtures/h200x2-live/h200-live.tar.gz
H200=$tmp/h200/h200-live
"$BIN" --root "$H200" -q snapshot --dir "$tmp/h200-again" && pair "h200x2-live, snapshotted again" "$H200" "$tmp/h200-again" ||
	nok "h200x2-live: snapshot of it failed"

# what the snapshot holds: doctor's files, kallsyms reduced to nvidia_p2p_* with the address zeroed
S=$tmp/snap-healthy
H=$FX/doctor/healthy
miss=""
for f in proc/driver/nvidia/params proc/driver/nvidia/gpus/0000:13:00.0/information proc/sys/kernel/hostname \
	proc/sys/kernel/numa_balancing proc/sys/kernel/modules_disabled sys/module/module/parameters/sig_enforce \
	sys/module/nvidia/version dev/nvidiactl dev/nvidia-uvm dev/nvidia7; do
	cmp -s "$H/$f" "$S/$f" || miss="$miss $f"
done
[ -z "$miss" ] && ok "doctor's files copied as they are" || nok "not copied:$miss"
[ "$(cat "$S/proc/kallsyms")" = "$(printf '0000000000000000 t nvidia_p2p_get_pages\t[nvidia]\n0000000000000000 t nvidia_p2p_put_pages\t[nvidia]\n0000000000000000 t nvidia_p2p_get_pages_persistent\t[nvidia]')" ] &&
	ok "kallsyms: only the nvidia_p2p_* lines, addresses zeroed" || nok "kallsyms: $(cat "$S/proc/kallsyms")"
# the marker: format 2, this version, every group; --no-hostname leaves the host out
info=$S/gpup2p/snapshot-info
head -1 "$info" | grep -qx "gpup2p-snapshot 2" && grep -qx "writer gpup2p $(cat VERSION)" "$info" &&
	grep -qx "source root" "$info" && ok "marker: format 2, writer, source" || nok "marker: $(cat "$info")"
groups=$(sed -n 's/^captured //p' "$info")
miss=""
for g in pci aer iommu net numa rdma rdma-ports rdma-counters rdma-uverbs osrelease cmdline modules nvidia-version nvidia-params nvidia-gpus kallsyms sysctl \
	sysmodule hostname dev nvml boot-acs; do
	grep -qw -- "$g" <<<"$groups" || miss="$miss $g"
done
[ -z "$miss" ] && ok "marker: every group captured" || nok "marker lacks:$miss ($groups)"
"$BIN" --root "$S" doctor --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["sources"]["snapshot"]
assert s["format"] == 2 and s["source"] == "root" and "kallsyms" in s["captured"] and s["unreadable"] == {}, s' &&
	ok "doctor --json: sources.snapshot from the marker" || nok "doctor --json sources.snapshot"
"$BIN" --root "$H" doctor --json | python3 -c 'import json, sys; assert json.load(sys.stdin)["sources"]["snapshot"] is None' &&
	ok "doctor --json: sources.snapshot null on a fixture tree" || nok "sources.snapshot on a fixture"
"$BIN" --root "$H" -q snapshot --dir --no-hostname "$tmp/nohost" && [ ! -e "$tmp/nohost/proc/sys/kernel/hostname" ] &&
	! grep -qw hostname "$tmp/nohost/gpup2p/snapshot-info" &&
	[ "$("$BIN" --root "$tmp/nohost" doctor --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["host"])')" = None ] &&
	ok "--no-hostname: no host name in the snapshot, doctor names none" || nok "--no-hostname"

# what clears ACS at boot (acs.boot): the unit's link as an empty file, of rc.local only the gpup2p
# line (acs-boot-rclocal.spec has three lines, acs-boot.spec only a commented-out one); a snapshot
# of an older gpup2p without them: acs.boot skipped, never a warning it cannot back
B=$tmp/snap-acs-boot-unit/etc/systemd/system/multi-user.target.wants/gpup2p-acs.service
[ -f "$B" ] && [ ! -s "$B" ] && [ "$(cat "$tmp/snap-acs-boot-rclocal/etc/rc.local")" = "/usr/local/bin/gpup2p acs --disable" ] &&
	[ ! -e "$tmp/snap-acs-boot/etc/rc.local" ] && ok "boot-acs: the unit link, rc.local's gpup2p line only" ||
	nok "boot-acs capture: $(cd "$tmp" && find snap-acs-boot*/etc -type f | tr '\n' ' ')"
for name in acs-boot acs-boot-unit; do
	cp -a "$tmp/snap-$name" "$tmp/old-$name" && rm -rf "$tmp/old-$name/etc"
	sed -i 's/ boot-acs//' "$tmp/old-$name/gpup2p/snapshot-info"
	out=$("$BIN" --root "$tmp/old-$name" doctor -v --only acs.boot); rc=$?
	[ $rc -eq 0 ] && grep -q "^skipped (1 finding)" <<<"$out" && grep -q "taken by an older" <<<"$out" &&
		ok "$name, snapshot without boot-acs: acs.boot skipped, exit 0" || nok "$name without boot-acs: exit $rc: $out"
done

# AER counters, RDMA ports and device nodes outside what the fixtures hold
R=$tmp/extra
cp -a "$FX/doctor/healthy" "$R"
gpu=$(readlink -f "$R/sys/bus/pci/devices/0000:13:00.0")
printf 'RxErr 0\nBadTLP 3\nTOTAL_ERR_COR 3\n' >"$gpu/aer_dev_correctable"
printf 'Undefined 0\nTOTAL_ERR_FATAL 0\n' >"$gpu/aer_dev_fatal"
printf 'TOTAL_ERR_NONFATAL 1\n' >"$gpu/aer_dev_nonfatal"
ib=$(readlink -f "$R/sys/class/infiniband/mlx5_0")
mkdir -p "$ib/ports/1/gid_attrs/types"
echo "4: ACTIVE" >"$ib/ports/1/state" && echo "5: LinkUp" >"$ib/ports/1/phys_state"
echo "400 Gb/sec (4X NDR)" >"$ib/ports/1/rate" && echo "InfiniBand" >"$ib/ports/1/link_layer"
echo "IB/RoCE v1" >"$ib/ports/1/gid_attrs/types/0" && echo "RoCE v2" >"$ib/ports/1/gid_attrs/types/1"
# 0000:16:00.0 as an unbound virtual function of 0000:15:00.0
vf=$(readlink -f "$R/sys/bus/pci/devices/0000:16:00.0") && rm "$vf/driver" && ln -sr "$(readlink -f "$R/sys/bus/pci/devices/0000:15:00.0")" "$vf/physfn"
mkdir -p "$R/dev/infiniband" && : >"$R/dev/infiniband/uverbs0" && : >"$R/dev/zero" && : >"$R/dev/nvidia-caps"
"$BIN" --root "$R" -q snapshot --dir "$tmp/extra-snap" || nok "snapshot of the extended fixture"
E=$tmp/extra-snap
miss=""
for f in aer_dev_correctable aer_dev_fatal aer_dev_nonfatal; do
	cmp -s "$gpu/$f" "$E/sys/bus/pci/devices/0000:13:00.0/$f" || miss="$miss $f"
done
for f in state phys_state rate link_layer gid_attrs/types/0 gid_attrs/types/1 counters/symbol_error counters/link_downed \
	hw_counters/out_of_sequence; do
	cmp -s "$ib/ports/1/$f" "$E/sys/class/infiniband/mlx5_0/ports/1/$f" || miss="$miss ports/1/$f"
done
[ -z "$miss" ] && ok "AER counters and RDMA port files (and their counters) captured" || nok "not captured:$miss"
[ -L "$E/sys/class/infiniband/mlx5_0" ] && [ "$(readlink -f "$E/sys/class/infiniband/mlx5_0/device")" = \
	"$(readlink -f "$E/sys/bus/pci/devices/0000:15:00.0")" ] && ok "RDMA device: a link to its folder, as in sysfs" ||
	nok "RDMA device layout"
[ -L "$E/sys/class/infiniband_verbs/uverbs0" ] && [ "$(cat "$E/sys/class/infiniband_verbs/uverbs0/ibdev")" = mlx5_0 ] &&
	[ "$(realpath --relative-to="$E" "$E/sys/class/infiniband_verbs/uverbs0")" = \
		"$(realpath --relative-to="$R" "$R/sys/class/infiniband_verbs/uverbs0")" ] &&
	ok "uverbs device: a link to its folder, with ibdev" || nok "uverbs layout: $(ls -l "$E/sys/class/infiniband_verbs" 2>&1)"
[ "$(readlink -f "$E/sys/bus/pci/devices/0000:16:00.0/physfn")" = "$(readlink -f "$E/sys/bus/pci/devices/0000:15:00.0")" ] &&
	"$BIN" --root "$E" doctor --json --only nic.driver | grep -q '"severity": "skipped"' &&
	ok "a virtual function's physfn captured; unbound, nic.driver skips it" || nok "physfn not captured"
pair "an unbound virtual function" "$R" "$E"
[ -f "$E/dev/infiniband/uverbs0" ] && [ ! -e "$E/dev/zero" ] && [ ! -e "$E/dev/nvidia-caps" ] &&
	ok "device nodes: doctor's recorded, others not" || nok "device nodes: $(cd "$E/dev" && find . | tr '\n' ' ')"
cmp -s <("$BIN" --root "$R" topo --json | sans_root) <("$BIN" --root "$E" topo --json | sans_root) &&
	ok "extended fixture: topo same on replay" ||
	nok "extended fixture: topo differs"

# a node its taker could not open, and nvidia-modprobe: what doctor says about them survives the snapshot
cp -a "$FX/doctor/drv-nodes" "$tmp/modprobe" && mkdir -p "$tmp/modprobe/usr/bin" && : >"$tmp/modprobe/usr/bin/nvidia-modprobe"
"$BIN" --root "$tmp/modprobe" doctor --json --only driver.device_nodes | grep -q '"severity": "info"' &&
	"$BIN" --root "$tmp/modprobe" -q snapshot --dir "$tmp/modprobe-snap" &&
	pair "nvidia-modprobe installed" "$tmp/modprobe" "$tmp/modprobe-snap" || nok "nvidia-modprobe: not info"
cp -a "$H" "$tmp/unusable" && echo "not usable by the user who took the snapshot" >"$tmp/unusable/dev/nvidia3"
out=$("$BIN" --root "$tmp/unusable" doctor --only driver.device_nodes); rc=$?
[ $rc -eq 1 ] && grep -q "cannot open /dev/nvidia3" <<<"$out" && ok "a node recorded as not usable: warning, exit 1" ||
	nok "not usable node: exit $rc: $out"
"$BIN" --root "$tmp/unusable" -q snapshot --dir "$tmp/unusable-snap" && pair "a node not usable" "$tmp/unusable" "$tmp/unusable-snap"

# files the live source could not give: unknown, as live, not skipped; carried into a snapshot of it
U=$tmp/unread
cp -a "$S" "$U" && rm "$U/proc/driver/nvidia/params"
"$BIN" --root "$U" doctor --json --only driver.params | grep -q '"severity": "skipped"' &&
	ok "a file missing from a snapshot: skipped" || nok "missing params: not skipped"
sed -i 's/^source root$/source live/' "$U/gpup2p/snapshot-info"
echo "unreadable /proc/driver/nvidia/params 13 Permission denied" >>"$U/gpup2p/snapshot-info"
out=$("$BIN" --root "$U" doctor --only driver.params); rc=$?
grep -q "/proc/driver/nvidia/params could not be read: Permission denied" <<<"$out" && [ $rc -eq 0 ] &&
	[ "$(code() { "$BIN" --root "$U" doctor --only driver.params --strict >/dev/null 2>&1; echo $?; }; code)" = 1 ] &&
	ok "listed as unreadable at the source: unknown with its reason (--strict: exit 1)" || nok "unreadable: exit $rc: $out"
"$BIN" --root "$U" -q snapshot --dir "$tmp/unread-again" &&
	grep -qx "unreadable /proc/driver/nvidia/params 13 Permission denied" "$tmp/unread-again/gpup2p/snapshot-info" &&
	pair "unreadable files, snapshotted again" "$U" "$tmp/unread-again" || nok "unreadable line not carried"

# a live capture here: each of doctor's files is in the snapshot or listed as unreadable; nodes are
# never opened (empty files or "not usable")
if "$BIN" -q snapshot --dir "$tmp/live" 2>"$tmp/err"; then
	miss=""
	for f in /proc/cmdline /proc/modules /proc/driver/nvidia/version /proc/driver/nvidia/params \
		/proc/sys/kernel/numa_balancing /proc/sys/kernel/modules_disabled /sys/module/module/parameters/sig_enforce \
		/sys/module/gpup2p/version /proc/sys/kernel/hostname /proc/kallsyms; do
		[ -f "$tmp/live$f" ] || grep -q "^unreadable $f [0-9]" "$tmp/live/gpup2p/snapshot-info" || miss="$miss $f"
	done
	[ -z "$miss" ] && ok "live capture: every file captured or listed unreadable" || nok "live capture lost:$miss"
	grep -qx "source live" "$tmp/live/gpup2p/snapshot-info" && ok "live capture: source live" || nok "live capture: source"
	bad=$(grep -v '^0\{8,16\} [A-Za-z] nvidia_p2p_' "$tmp/live/proc/kallsyms")
	[ -z "$bad" ] && ok "live kallsyms: nvidia_p2p_* lines only, no address" || nok "live kallsyms: $(head -2 <<<"$bad")"
	bad=$(find "$tmp/live/dev" -type f ! -empty ! -exec grep -q '^not usable' {} \; -print)
	[ -z "$bad" ] && ok "live device nodes recorded as empty files" || nok "device node files: $bad"
else
	skip "no live PCI bus to snapshot"
fi

# snapshots of an earlier format load: what they lack is skipped, never unknown or an error
mkdir -p "$tmp/old" && tar -C "$tmp/old" -xzf tests/fixtures/old-snapshot-v0.1/dgx-v0.1.tar.gz
O=$tmp/old/dgx-v0.1
out=$("$BIN" --root "$O" doctor); rc=$?
[ $rc -eq 0 ] && grep -q "format 1 (older" <<<"$out" && ok "old snapshot (format 1): exit 0, labelled older" || nok "old snapshot: exit $rc"
"$BIN" --root "$O" doctor --json --pretty >"$tmp/old.json"
"$BIN" --root "$H" doctor --json --pretty >"$tmp/healthy.json"
python3 - "$tmp/old.json" "$tmp/healthy.json" <<'EOF' && ok "old snapshot: as healthy, the checks of what it lacks skipped" || nok "old snapshot findings"
import json, sys
old, new = (json.load(open(p)) for p in sys.argv[1:3])
s = old["summary"]
assert s["error"] == s["warning"] == s["unknown"] == 0, s
assert old["sources"]["snapshot"]["format"] == 1 and "kallsyms" not in old["sources"]["snapshot"]["captured"]
sev = {(f["id"], f["subject"]): f["severity"] for f in new["findings"]}
for f in old["findings"]:
    k = (f["id"], f["subject"])
    if f["id"] == "pcie.relaxed_ordering":
        continue  # its config spaces predate the fixtures' Device Control (all 0: Relaxed Ordering off)
    assert f["severity"] in (sev.get(k), "skipped"), (k, f["severity"], sev.get(k))
# format 1 had no params, kallsyms, sysctls, sig_enforce or /dev: these checks are skipped, saying so
lacks = {"driver.params": "/proc/driver/nvidia/params", "driver.device_nodes": "/dev", "kmod.nv_p2p_api": "/proc/kallsyms",
         "kmod.loadable": "/proc/sys/kernel/modules_disabled", "numa.balancing": "/proc/sys/kernel/numa_balancing"}
for cid, path in lacks.items():
    f = [f for f in old["findings"] if f["id"] == cid]
    assert len(f) == 1 and f[0]["severity"] == "skipped" and f[0]["message"].startswith(path + " is not in the root"), f
    assert sev[(cid, f[0]["subject"])] in ("ok", "info"), cid
EOF
out=$("$BIN" --root "$H200" doctor --json); rc=$?
python3 -c '
import json, sys
d = json.loads(sys.argv[1]); s = d["summary"]
assert s["error"] == s["warning"] == s["unknown"] == 0 and d["sources"]["snapshot"]["source"] == "live", s
skipped = {f["id"] for f in d["findings"] if f["severity"] == "skipped" and "is not in the root" in f["message"]}
assert skipped == {"driver.params", "driver.device_nodes", "kmod.nv_p2p_api", "kmod.loadable", "gpu.excluded"}, skipped' "$out" && [ $rc -eq 0 ] &&
	ok "h200x2-live (format 1, live): exit 0, what it lacks skipped" || nok "h200x2-live: exit $rc"
python3 tests/cli/doctor_same.py "${pairs[@]}"
