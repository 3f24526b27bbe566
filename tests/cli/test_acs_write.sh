#!/bin/bash
# gpup2p acs --disable/--restore through the command line, on private copies of fixture trees:
# exit codes, the root check, usage errors, dry run writes nothing, round trip byte-exact, --state.
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
expect 64 "go with --disable or --restore" --root "$W" acs --dry-run
expect 64 "go with --disable or --restore" --root "$W" acs --all
expect 64 "go with --disable or --restore" --root "$W" acs --mode zero
expect 64 "--restore puts back every bridge" --root "$W" acs --restore --all
expect 64 "--all and --device exclude" --root "$W" acs --disable --all --device 00:01.0
expect 64 "--mode takes redirect or zero" --root "$W" acs --disable --mode=off
expect 64 "--device needs a BDF" --root "$W" acs --disable --device
expect 64 "--state needs a file" --root "$W" acs --disable --state=
expect 64 "'zz' is not a PCI address" --root "$W" acs --disable --device zz
expect 64 "no PCI function 0000:0a:00.0" --root "$W" acs --disable --device 0a:00.0
expect 64 "0000:03:00.0 has no ACS capability" --root "$W" acs --disable --device 03:00.0
expect 3 "cannot be read .*run as root" --root "$FX/nonroot" acs --disable --dry-run
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
	out=$(GPUP2P_TEST_NONROOT_WRITES=1 asnobody "$BIN" --root "$W" acs --disable 2>&1); rc=$?
	out2=$(GPUP2P_TEST_NONROOT_WRITES=1 asnobody "$BIN" --root "$W" acs --restore 2>&1); rc2=$?
	[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(sums "$W")" = "$S0" ] &&
		ok "override on a fixture tree: a non-root test runner can disable and restore" ||
		nok "override on fixture: exit $rc/$rc2: $out $out2"
else
	nok "setpriv or user nobody missing: cannot test the root check"
fi

out=$("$BIN" --root "$W" acs --disable --dry-run); rc=$?
[ $rc -eq 0 ] && grep -q "0000:02:08.0 switch downstream \[10b5:8747\]  ACSCtl 0x001d -> 0x0011  would change" <<<"$out" &&
	grep -q "pci=disable_acs_redir=0000:02:08.0;0000:02:10.0" <<<"$out" && ! grep -q "00:01.0" <<<"$out" &&
	ok "dry run: plan of the on-path bridges with the boot parameter" || nok "dry run: rc=$rc $out"
[ "$(sums "$W")" = "$S0" ] && [ ! -e "$W/run/gpup2p/acs.state" ] && ok "dry run wrote nothing" || nok "dry run wrote"

out=$("$BIN" --root "$W" acs --disable); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ' changed$' <<<"$out")" = 2 ] && grep -q "Changed 2 bridge(s)" <<<"$out" &&
	ok "disable: two bridges changed" || nok "disable: rc=$rc $out"
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
	grep -q "^0000:02:10.0,switch downstream,0x0011,0x001d,restored$" <<<"$out" &&
	ok "restore: byte-exact, state file removed, CSV rows" || nok "restore: rc=$rc $out"
out=$("$BIN" --root "$W" acs --restore); rc=$?
[ $rc -eq 0 ] && grep -q "Nothing to restore" <<<"$out" && ok "restore twice: nothing to restore, exit 0" ||
	nok "second restore: rc=$rc $out"
"$BIN" --root "$W" acs -q >/dev/null; rc=$?
[ $rc -eq 1 ] && ok "audit after restore: exit 1 again" || nok "audit after restore: exit $rc"

# --all --mode zero with an explicit --state, JSON
out=$("$BIN" --root "$W" acs --disable --all --mode zero --state "$T/mystate" --json); rc=$?
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
out=$("$BIN" --root "$W" acs --disable --device 0000:00:01.0 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$out" = "0000:00:01.0,root port,0x001d,0x0011,changed" ] && ok "--device: exactly one bridge" ||
	nok "--device: rc=$rc $out"
"$BIN" --root "$W" acs --restore -q >/dev/null && [ "$(sums "$W")" = "$S0" ] && ok "--device round trip" ||
	nok "--device round trip"

# a write that cannot land: the state file's folder is a file ⇒ exit 2 before any write
touch "$T/notadir"
expect 2 "cannot create the lock file .*notadir/x.lock" --root "$W" acs --disable --state "$T/notadir/x"
[ "$(sums "$W")" = "$S0" ] && ok "unwritable state: nothing written" || nok "unwritable state file: config changed"
