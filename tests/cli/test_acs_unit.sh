#!/bin/bash
# The ACS boot unit (systemd/gpup2p-acs.service.in) as `make install` writes it: systemd-analyze verify
# clean beside the services it must precede (stubs of them, in one transaction: an ordering cycle fails);
# ordered after the coldplug trigger, never after the deprecated systemd-udev-settle.service, before the
# services that start GPU work; and its own command lines, run as systemd runs them on a copy of a fixture
# tree: start clears, a second start changes nothing, a restart (stop, start) ends where the first start
# did with the same state file (nothing done twice), stop puts every register back.
set -u
BUILD=${BUILD:-build}
. tests/cli/lib.sh
export NO_COLOR=1 GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids
unset GPUP2P_ROOT MAKEFLAGS MFLAGS MAKELEVEL WERROR CPPFLAGS CFLAGS LDFLAGS LDLIBS
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# installed under a real prefix (no DESTDIR): ExecStart names a binary that exists, for verify
make -s --no-print-directory install PREFIX="$T/usr" BUILD="$BUILD" >/dev/null 2>&1 || nok "make install PREFIX=$T/usr"
U=$(find "$T/usr" -name gpup2p-acs.service)
[ -f "$U" ] && ok "unit installed ($(basename "$(dirname "$U")"))" || { nok "no unit installed"; exit 0; }

# key VALUE...: every VALUE among the unit's KEY= settings (a key may repeat; values are space lists)
has() {
	local k=$1 v
	shift
	for v in "$@"; do
		sed -n "s/^$k=//p" "$U" | tr ' ' '\n' | grep -qx -- "$v" || return 1
	done
}
has After systemd-udev-trigger.service systemd-modules-load.service &&
	ok "After= the coldplug trigger and modules-load" || nok "After=: $(grep '^After=' "$U")"
grep -v '^#' "$U" | grep -q 'udev-settle' && nok "the unit names the deprecated systemd-udev-settle.service" ||
	ok "no systemd-udev-settle.service"
has Before nvidia-persistenced.service nvidia-fabricmanager.service nvidia-dcgm.service slurmd.service \
	kubelet.service docker.service containerd.service &&
	ok "Before= the services that start GPU work" || nok "Before=: $(grep '^Before=' "$U")"
grep -q '^DefaultDependencies=no' "$U" && nok "DefaultDependencies=no: not stopped in order at shutdown" ||
	ok "default dependencies (after sysinit.target, stopped before shutdown)"
has Type oneshot && has RemainAfterExit yes && grep -q '^ExecStop=.*gpup2p acs --restore$' "$U" &&
	ok "oneshot, RemainAfterExit, ExecStop restores" || nok "Type/RemainAfterExit/ExecStop"
has WantedBy multi-user.target && ok "WantedBy=multi-user.target" || nok "WantedBy: $(grep '^WantedBy' "$U")"

# stubs of the GPU services as their packages ship them (ordering only)
mkdir -p "$T/stub"
stub() { # NAME [UNIT-SECTION-LINE]
	printf '[Unit]\nDescription=stub %s\n%s\n[Service]\nExecStart=/bin/sh -c :\n[Install]\nWantedBy=multi-user.target\n' \
		"$1" "${2:-}" >"$T/stub/$1"
}
stub nvidia-persistenced.service
stub nvidia-fabricmanager.service 'After=network-online.target'
stub slurmd.service 'After=network-online.target remote-fs.target munge.service'
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify --man=no "$U" "$T"/stub/*.service 2>&1) && [ -z "$out" ] &&
		ok "systemd-analyze verify: unit and GPU services in one transaction, clean" ||
		nok "systemd-analyze verify: $(head -4 <<<"$out" | tr '\n' ' ')"
	# the check can fail: a GPU service ordered before the unit is a cycle systemd-analyze reports
	stub nvidia-persistenced.service 'Before=gpup2p-acs.service'
	out=$(systemd-analyze verify --man=no "$U" "$T"/stub/*.service 2>&1)
	grep -q 'ordering cycle' <<<"$out" && ok "an ordering cycle with a GPU service is reported" ||
		nok "verify missed a planted ordering cycle: $out"
else
	nok "systemd-analyze is not installed (systemd)"
fi

# the unit's own commands on a copy of the seed4x2 fixture (5 bridges to clear)
cmd() { # KEY: the unit's ExecKEY= line, split as systemd does ($GPUP2P_ACS_OPTS empty: no /etc/default file)
	sed -n "s/^Exec$1=//p" "$U" | sed 's/\$GPUP2P_ACS_OPTS//'
}
W=$T/w
cp -a "$GPUP2P_FIXTURES/seed4x2" "$W"
sums() { (cd "$W/sys/bus/pci/devices" && cat ./*/config | md5sum); }
run() { # KEY: run the unit's ExecKEY= against $W; exit status
	local -a c
	read -ra c <<<"$(cmd "$1")"
	GPUP2P_ROOT=$W GPUP2P_TEST_NONROOT_WRITES=1 "${c[@]}" >"$T/out" 2>&1
}
S0=$(sums)
ST=$W/run/gpup2p/acs.state
run Start && [ "$(sums)" != "$S0" ] && [ "$(grep -c '^0000:' "$ST" 2>/dev/null)" -eq 5 ] &&
	ok "start: ACS cleared on 5 bridges, their values saved" || nok "start: $(tail -3 "$T/out")"
S1=$(sums)
cp "$ST" "$T/state1" 2>/dev/null
run Start && grep -q 'Nothing to change' "$T/out" && [ "$(sums)" = "$S1" ] && cmp -s "$ST" "$T/state1" &&
	ok "start again: nothing to change, state file untouched" || nok "second start: $(tail -3 "$T/out")"
run Stop && run Start && [ "$(sums)" = "$S1" ] && cmp -s "$ST" "$T/state1" &&
	ok "restart (stop, start): same registers, same state file (the values found at first, not ours)" ||
	nok "restart: $(tail -3 "$T/out"); $(diff "$T/state1" "$ST" 2>&1 | head -4 | tr '\n' ' ')"
run Stop && [ "$(sums)" = "$S0" ] && [ ! -e "$ST" ] && ok "stop: every register back, state file removed" ||
	nok "stop: $(tail -3 "$T/out")"
run Stop && [ "$(sums)" = "$S0" ] && ok "stop again: nothing to restore (exit 0)" || nok "second stop: $(tail -3 "$T/out")"
