#!/bin/bash
# gpup2p acs --disable/--restore through the command line, on private copies of fixture trees:
# exit codes, the root check, usage errors, dry run writes nothing, round trip byte-exact, --state,
# the refusal where the IOMMU translates or VFIO owns a device (the workstation's IOMMU is in DMA-FQ
# mode: its writes need --force), the Intel PCH root port whose ACS control sits at capability+8.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FX=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT GPUP2P_TEST_NONROOT_WRITES
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# sums of every config file of a tree: the picture of the hardware
sums() { (cd "$1/sys/bus/pci/devices" && cat ./*/config | md5sum); }


cp -a "$FX/workstation" "$T/ws"
W=$T/ws
S0=$(sums "$W")

expect 64 "--disable and --restore exclude" --root "$W" acs --disable --restore
expect 64 "goes with --disable or --restore" --root "$W" acs --dry-run
expect 64 "goes with --disable or --restore" --root "$W" acs --all
expect 64 "goes with --disable or --restore" --root "$W" acs --mode zero
expect 64 "--restore and --all exclude each other" --root "$W" acs --restore --all
# a pipe as the state file (fuzz: tests/fuzz/regress/tree/hang-acs-restore-state-fifo): refused, not read for ever
mkfifo "$T/fifo"
out=$(timeout 20 "$BIN" --root "$W" acs --restore --dry-run --state "$T/fifo" 2>&1); rc=$?
[ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -q "fifo: not a regular file" <<<"$out" &&
	ok "--state on a pipe: one error, exit $rc" || nok "--state on a pipe: exit $rc: $out"
expect 64 "--all and --device exclude" --root "$W" acs --disable --all --device 00:01.0
expect 64 "--mode takes redirect or zero" --root "$W" acs --disable --mode=off
expect 64 "--device needs a BDF" --root "$W" acs --disable --device
expect 64 "--state needs a file" --root "$W" acs --disable --state=
expect 64 "'zz' is not a PCI address" --root "$W" acs --disable --device zz
expect 64 "no PCI function 0000:0a:00.0" --root "$W" acs --disable --device 0a:00.0
expect 64 "0000:03:00.0 has no ACS capability" --root "$W" acs --disable --device 03:00.0
expect 3 "cannot be read .*run as root" --root "$FX/nonroot" acs --disable --dry-run
expect 64 "--force goes with --disable" --root "$W" acs --restore --force
expect 64 "--force goes with --disable" --root "$W" acs --force
[ "$(sums "$W")" = "$S0" ] && ok "usage errors wrote nothing" || nok "usage errors changed config space"

# the root check comes before anything is read or written
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	chmod -R a+rwX "$T"
	asnobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
	out=$(asnobody "$BIN" --root "$W" acs --disable 2>&1); rc=$?
	[ $rc -eq 77 ] && grep -q "needs root: run it with sudo" <<<"$out" && ok "not root: exit 77 with the fix" ||
		nok "not root: exit $rc: $out"
	out=$(asnobody "$BIN" acs --restore 2>&1); rc=$?
	[ $rc -eq 77 ] && ok "not root, live system, --restore: exit 77" || nok "live --restore as nobody: exit $rc: $out"
	out=$(GPUP2P_TEST_NONROOT_WRITES=1 asnobody "$BIN" acs --disable 2>&1); rc=$?
	[ $rc -eq 77 ] && ok "the test override never applies to the live system" || nok "override on live: exit $rc: $out"
	[ "$(sums "$W")" = "$S0" ] && ok "refusals wrote nothing" || nok "a refusal changed config space"
	out=$(GPUP2P_TEST_NONROOT_WRITES=1 asnobody "$BIN" --root "$W" acs --disable --force 2>&1); rc=$?
	out2=$(GPUP2P_TEST_NONROOT_WRITES=1 asnobody "$BIN" --root "$W" acs --restore 2>&1); rc2=$?
	[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(sums "$W")" = "$S0" ] &&
		ok "override on a fixture tree: a non-root test runner can disable and restore" ||
		nok "override on fixture: exit $rc/$rc2: $out $out2"
else
	nok "setpriv or user nobody missing: cannot test the root check"
fi

# IOMMU in DMA-FQ mode: refused (64, one line naming the bridge, the GPU and the mode), the dry run
# shows the plan and the same refusal, nothing is written
expect 64 "^gpup2p: refusing to clear ACS on 0000:02:08.0 \(and 1 more bridge\): the IOMMU translates \(DMA-FQ\) for 0000:03:00.0 below it.*; boot with iommu=pt, or use --force$" \
	--root "$W" acs --disable
out=$("$BIN" --root "$W" acs --disable --dry-run 2>"$T/err"); rc=$?
[ $rc -eq 64 ] && grep -q "0000:02:08.0 switch downstream \[10b5:8747\]  ACSCtl 0x001d -> 0x0011  would change" <<<"$out" &&
	grep -q "refusing to clear ACS on 0000:02:08.0 .*(DMA-FQ)" "$T/err" && ! grep -q "Dry run" <<<"$out" &&
	ok "dry run: the plan, then the refusal (exit 64)" || nok "dry run refused: rc=$rc $out $(cat "$T/err")"
out=$("$BIN" --root "$W" acs --disable --dry-run --json 2>/dev/null); rc=$?
[ $rc -eq 64 ] && python3 -c 'import json,sys; d=json.load(sys.stdin); assert "DMA-FQ" in d["refused"] and d["to_write"]==2' <<<"$out" &&
	ok "dry run --json: the refusal in \"refused\"" || nok "dry run json refused: rc=$rc $out"
[ "$(sums "$W")" = "$S0" ] && [ ! -e "$W/run/gpup2p/acs.state" ] && ok "refusal wrote nothing" || nok "refusal wrote"

out=$("$BIN" --root "$W" acs --disable --force --dry-run); rc=$?
[ $rc -eq 0 ] && grep -q "0000:02:08.0 switch downstream \[10b5:8747\]  ACSCtl 0x001d -> 0x0011  would change" <<<"$out" &&
	grep -q "pci=disable_acs_redir=0000:02:08.0;0000:02:10.0" <<<"$out" && ! grep -q "00:01.0" <<<"$out" &&
	ok "dry run --force: plan of the on-path bridges with the boot parameter" || nok "dry run: rc=$rc $out"
[ "$(sums "$W")" = "$S0" ] && [ ! -e "$W/run/gpup2p/acs.state" ] && ok "dry run wrote nothing" || nok "dry run wrote"

out=$("$BIN" --root "$W" acs --disable --force); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ' changed$' <<<"$out")" = 2 ] && grep -q "Changed 2 bridge(s)" <<<"$out" &&
	ok "disable --force: two bridges changed" || nok "disable: rc=$rc $out"
"$BIN" --root "$W" acs -q >/dev/null; rc=$?
[ $rc -eq 0 ] && ok "audit after disable: exit 0 (no on-path bridge redirects)" || nok "audit after disable: exit $rc"
S1=$(sums "$W")
out=$("$BIN" --root "$W" acs --disable); rc=$?
[ $rc -eq 0 ] && grep -q "Nothing to change" <<<"$out" && [ "$(sums "$W")" = "$S1" ] &&
	ok "second disable: a no-op that says so" || nok "second disable: rc=$rc $out"
out=$("$BIN" --root "$W" acs --restore --dry-run); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c 'ACSCtl 0x0011 -> 0x001d  would change' <<<"$out")" = 2 ] && [ "$(sums "$W")" = "$S1" ] &&
	[ -e "$W/run/gpup2p/acs.state" ] && ok "restore --dry-run: plan only" || nok "restore dry run: rc=$rc $out"
out=$("$BIN" --root "$W" acs --restore --csv); rc=$?
[ $rc -eq 0 ] && [ "$(sums "$W")" = "$S0" ] && [ ! -e "$W/run/gpup2p/acs.state" ] &&
	grep -q "^0000:02:10.0,switch downstream,0x0011,0x001d,restored,[0-9]*,restore$" <<<"$out" &&
	ok "restore: byte-exact, state file removed, CSV rows" || nok "restore: rc=$rc $out"
out=$("$BIN" --root "$W" acs --restore); rc=$?
[ $rc -eq 0 ] && grep -q "Nothing to restore" <<<"$out" && ok "restore twice: nothing to restore, exit 0" ||
	nok "second restore: rc=$rc $out"
out=$("$BIN" --root "$W" acs --restore --json); rc=$?
[ $rc -eq 0 ] && python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["action"]=="restore" and d["bridges"]==[] and d["to_write"]==0 and d["state_file"].endswith("/run/gpup2p/acs.state")' <<<"$out" &&
	ok "restore --json with nothing to restore: a JSON document, not prose" || nok "restore --json: rc=$rc $out"
out=$("$BIN" --root "$W" acs --restore --csv); rc=$?
[ $rc -eq 0 ] && [ "$out" = "bdf,role,before,after,result,offset,action" ] && ok "restore --csv with nothing to restore: the header only" ||
	nok "restore --csv: rc=$rc $out"
"$BIN" --root "$W" acs -q >/dev/null; rc=$?
[ $rc -eq 1 ] && ok "audit after restore: exit 1 again" || nok "audit after restore: exit $rc"

# --all --mode zero with an explicit --state, JSON
out=$("$BIN" --root "$W" acs --disable --all --mode zero --state "$T/mystate" --json --force); rc=$?
[ $rc -eq 0 ] && [ -s "$T/mystate" ] && [ ! -e "$W/run/gpup2p/acs.state" ] &&
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["mode"]=="zero" and d["to_write"]==3 and all(b["after"]==0 and b["result"]=="changed" for b in d["bridges"]) and d["boot_parameter"].startswith("pci=config_acs=0000000@")' <<<"$out" &&
	ok "--all --mode zero --state FILE --json" || nok "zero mode: rc=$rc $out"
out=$("$BIN" --root "$W" acs --restore --state "$T/mystate" --jsonl); rc=$?
[ $rc -eq 0 ] && [ "$(sums "$W")" = "$S0" ] && [ "$(grep -c '"result": *"restored"' <<<"$out")" = 3 ] &&
	ok "restore from --state FILE (jsonl)" || nok "restore --state: rc=$rc $out"

# a state file that names another machine's bridge is refused (exit 3) and nothing is written
mkdir -p "$W/run/gpup2p"
printf 'gpup2p-acs-state 1\n0000:02:08.0 8086:1234 0x106 0x001d 0x0011\n' >"$W/run/gpup2p/acs.state"
expect 3 "does not have" --root "$W" acs --restore
[ "$(sums "$W")" = "$S0" ] && ok "foreign state file: nothing written" || nok "foreign state file wrote"
rm -f "$W/run/gpup2p/acs.state"

# --device scope touches exactly that bridge
out=$("$BIN" --root "$W" acs --disable --device 0000:00:01.0 --csv --no-header --force); rc=$?
[ $rc -eq 0 ] && [ "$(cut -d, -f1-5,7 <<<"$out")" = "0000:00:01.0,root port,0x001d,0x0011,changed,disable" ] && ok "--device: exactly one bridge" ||
	nok "--device: rc=$rc $out"
"$BIN" --root "$W" acs --restore -q >/dev/null && [ "$(sums "$W")" = "$S0" ] && ok "--device round trip" ||
	nok "--device round trip"

# a write that cannot land: the state file's folder is a file ⇒ exit 2 before any write
touch "$T/notadir"
expect 2 "cannot create the lock file .*notadir/x.lock" --root "$W" acs --disable --force --state "$T/notadir/x"
[ "$(sums "$W")" = "$S0" ] && ok "unwritable state: nothing written" || nok "unwritable state file: config changed"

# acsguard: identity IOMMU, but GPU2 (07:00.0) bound to vfio-pci below 06:08.0 and GPU3 (08:00.0) in
# a DMA group below 06:10.0; both below root port 00:02.0. 00:1c.0 is an Intel PCH root port (8086:a110)
# with its ACS control at capability+8 = 0x108 (0x001d there, 0 at the standard 0x106).
cp -a "$FX/acsguard" "$T/ag"
G=$T/ag
G0=$(sums "$G")
expect 64 "^gpup2p: refusing to clear ACS on 0000:00:02.0 \(and 2 more bridges\): 0000:07:00.0 below it is bound to vfio-pci.*memory; use --force to clear it anyway$" \
	--root "$G" acs --disable
expect 64 "^gpup2p: refusing to clear ACS on 0000:06:08.0: 0000:07:00.0 below it is bound to vfio-pci" \
	--root "$G" acs --disable --device 06:08.0 --dry-run
expect 64 "^gpup2p: refusing to clear ACS on 0000:06:10.0: the IOMMU translates \(DMA\) for 0000:08:00.0 below it" \
	--root "$G" acs --disable --device 06:10.0
[ "$(sums "$G")" = "$G0" ] && [ ! -e "$G/run/gpup2p/acs.state" ] && ok "acsguard refusals wrote nothing" ||
	nok "an acsguard refusal wrote"
# a group without a type file (Linux before 5.11) or with an unreadable one may translate: refused
# with the file and the reason, unless --force
cp -a "$FX/acsguard" "$T/ag2"
g4=$T/ag2/sys/kernel/iommu_groups/$(basename "$(readlink "$T/ag2/sys/bus/pci/devices/0000:04:00.0/iommu_group")")
A0=$(sums "$T/ag2")
rm "$g4/type"
expect 64 "^gpup2p: refusing to clear ACS on 0000:02:10.0: whether the IOMMU translates for 0000:04:00.0 below it is unknown \(/sys/kernel/iommu_groups/[0-9]+/type: No such file or directory\).*--force" \
	--root "$T/ag2" acs --disable --device 02:10.0
expect 64 "refusing to clear ACS on 0000:02:10.0: whether the IOMMU translates .* unknown" \
	--root "$T/ag2" acs --disable --device 02:10.0 --dry-run
mkfifo "$g4/type"
expect 64 "whether the IOMMU translates for 0000:04:00.0 below it is unknown \(.*/type: not a regular file" \
	--root "$T/ag2" acs --disable --device 02:10.0
rm "$g4/type" && echo "strange" >"$g4/type"
expect 64 "is unknown \(/sys/kernel/iommu_groups/[0-9]+/type: a type not known here\)" --root "$T/ag2" acs --disable --device 02:10.0
[ "$(sums "$T/ag2")" = "$A0" ] && [ ! -e "$T/ag2/run/gpup2p/acs.state" ] && ok "unknown IOMMU type: nothing written" ||
	nok "an unknown-type refusal wrote"
out=$("$BIN" --root "$T/ag2" acs --disable --device 02:10.0 --force --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(cut -d, -f1-5 <<<"$out")" = "0000:02:10.0,switch downstream,0x001d,0x0011,changed" ] &&
	ok "unknown IOMMU type with --force: cleared" || nok "unknown type --force: rc=$rc $out"
out=$("$BIN" --root "$G" acs --disable --device 02:08.0 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(cut -d, -f1-5 <<<"$out")" = "0000:02:08.0,switch downstream,0x001d,0x0011,changed" ] &&
	ok "identity IOMMU, no VFIO below 02:08.0: cleared without --force" || nok "02:08.0: rc=$rc $out"
# a group owned by a user-space driver (VFIO in use) below 02:10.0
echo unmanaged >"$G/sys/kernel/iommu_groups/$(basename "$(readlink "$G/sys/bus/pci/devices/0000:04:00.0/iommu_group")")/type"
expect 64 "refusing to clear ACS on 0000:02:10.0: 0000:04:00.0 below it is in IOMMU group [0-9]+, owned by a user-space driver" \
	--root "$G" acs --disable --device 02:10.0
out=$("$BIN" --root "$G" acs --disable --device 06:08.0 --device 06:10.0 --force --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ',0x001d,0x0011,changed,' <<<"$out")" = 2 ] && ok "--force: vfio and DMA bridges cleared" ||
	nok "--force: rc=$rc $out"
# with every high-impact redirect cleared, the three root ports still redirect, but only pairs that
# cross the root complex anyway (PHB): listed, ranked low, exit 0
"$BIN" --root "$G" acs --disable --device 02:10.0 --device 09:00.0 --device 09:00.1 --force -q >/dev/null
out=$("$BIN" --root "$G" acs); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^  impact: low: ' <<<"$out")" = 3 ] && ! grep -q '^  impact: high' <<<"$out" &&
	grep -q "^3 bridge(s) redirect only pairs whose traffic crosses the root complex anyway" <<<"$out" &&
	grep -q "^Boot parameter that clears the redirection: pci=disable_acs_redir=0000:00:01.0;0000:00:02.0;0000:00:1c.0$" <<<"$out" &&
	ok "only low-impact redirects left: reported, ranked low, exit 0" || nok "low only: rc=$rc $out"
"$BIN" --root "$G" acs --restore -q >/dev/null; rc=$?
[ $rc -eq 0 ] && ok "acsguard restore: exit 0" || nok "acsguard restore: exit $rc"

# the Intel PCH root port: the audit reads 0x108, --disable writes there (not 0x106), --restore puts it back
cfg=$G/sys/bus/pci/devices/0000:00:1c.0/config
word() { od -An -tx2 -j "$2" -N2 "$1" | tr -d ' '; }
out=$("$BIN" --root "$G" acs --csv --no-header | grep '^0000:00:1c.0,'); rc=$?
[ "$(cut -d, -f1-10 <<<"$out")" = "0000:00:1c.0,root port,present,0x005f,0x001d,yes,GPU0-NIC0 GPU0-NIC1 GPU1-NIC0 GPU1-NIC1 GPU2-NIC0 GPU2-NIC1 GPU3-NIC0 GPU3-NIC1,PHB PHB PHB PHB PHB PHB PHB PHB,low,264" ] &&
	ok "PCH root port: control read at capability+8 (0x108: 0x001d), redirecting, low impact" || nok "PCH audit: $out"
out=$("$BIN" --root "$G" acs --disable --device 00:1c.0 --json); rc=$?
[ $rc -eq 0 ] && [ "$(word "$cfg" 264)" = 0011 ] && [ "$(word "$cfg" 262)" = 0000 ] &&
	python3 -c 'import json,sys; d=json.load(sys.stdin); b=d["bridges"][0]; assert b["offset"]==0x108 and b["before"]==0x1d and b["after"]==0x11' <<<"$out" &&
	grep -q "^0000:00:1c.0 8086:a110 0x108 0x001d 0x0011$" "$G/run/gpup2p/acs.state" &&
	ok "PCH root port: written at 0x108, 0x106 untouched, the state file says 0x108" ||
	nok "PCH disable: rc=$rc $out cfg@0x108=$(word "$cfg" 264) @0x106=$(word "$cfg" 262)"
"$BIN" --root "$G" acs --restore -q >/dev/null; rc=$?
[ $rc -eq 0 ] && [ "$(word "$cfg" 264)" = 001d ] && [ "$(word "$cfg" 262)" = 0000 ] && ok "PCH root port: restored at 0x108" ||
	nok "PCH restore: rc=$rc cfg@0x108=$(word "$cfg" 264)"

# the state file module is below the writer: acs_state.o calls nothing acs_write.o defines
if command -v nm >/dev/null && [ -f "$BUILD/libcore/acs/state.o" ] && [ -f "$BUILD/libcore/acs/write.o" ]; then
	circle=$(comm -12 <(nm -u "$BUILD/libcore/acs/state.o" | awk '{print $NF}' | sort -u) \
		<(nm --defined-only -g "$BUILD/libcore/acs/write.o" | awk '{print $NF}' | sort -u))
	[ -z "$circle" ] && ok "acs_state.o calls nothing from acs_write.o (no call circle)" ||
		nok "acs_state.o calls into acs_write.o: $circle"
else
	nok "nm or the object files missing: cannot check the acs_state/acs_write layering"
fi
