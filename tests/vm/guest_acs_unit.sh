#!/bin/bash
# Runs inside the guest booted with systemd (tests/vm/acs_unit.sh), as a service after boot: the
# installed, enabled gpup2p-acs.service cleared ACS on the four root ports of topo-pcie.args before the
# stub GPU services started; a restart restores and clears again with the same state file (nothing done
# twice); a stop puts 0x001d back. Prints ok/not ok lines.
set -u
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
ctl() { setpci -s "$1" ECAP_ACS+6.w; }
RPS="00:03.0 00:04.0 40:00.0 80:00.0"
ST=/run/gpup2p/acs.state
allctl() { local r v=; for r in $RPS; do v="$v $(ctl "$r")"; done; echo "$v"; }
mono() { systemctl show -P "$2" "$1"; }

chk "systemd is PID 1" grep -qx systemd /proc/1/comm
chk "gpup2p-acs.service enabled" [ "$(systemctl is-enabled gpup2p-acs.service)" = enabled ]
chk "gpup2p-acs.service active (exited)" [ "$(systemctl show -P SubState gpup2p-acs.service)" = exited ]
echo "# journal of the boot run:"; journalctl -b -u gpup2p-acs.service -o cat --no-pager | sed 's/^/#   /'
chk "after boot: the four root ports' ACSCtl is 0011 (was 001d)" [ "$(allctl)" = " 0011 0011 0011 0011" ]
chk "state file: the four root ports, 0x001d before, 0x0011 written" \
	[ "$(grep -c ' 0x001d 0x0011$' "$ST")" = 4 ]
chk "systemd-udev-settle.service was not pulled in" [ "$(systemctl show -P ActiveState systemd-udev-settle.service)" = inactive ]
for s in nvidia-persistenced slurmd; do
	chk "$s (stub) saw the state file when it started: ordered after gpup2p-acs" \
		cmp -s "/run/$s-saw" "$ST"
	chk "$s started after gpup2p-acs finished (monotonic µs)" \
		[ "$(mono gpup2p-acs.service ExecMainExitTimestampMonotonic)" -lt "$(mono $s.service ExecMainStartTimestampMonotonic)" ]
done
chk "after systemd-udev-trigger and systemd-modules-load" bash -c \
	"[ $(mono systemd-udev-trigger.service ActiveEnterTimestampMonotonic) -le $(mono gpup2p-acs.service ExecMainStartTimestampMonotonic) ] &&
	 [ $(mono systemd-modules-load.service ActiveEnterTimestampMonotonic) -le $(mono gpup2p-acs.service ExecMainStartTimestampMonotonic) ]"
cp "$ST" /run/state-boot
systemctl start gpup2p-acs.service
chk "start while active: nothing runs (RemainAfterExit), state unchanged" cmp -s "$ST" /run/state-boot
systemctl restart gpup2p-acs.service; rc=$?
chk "systemctl restart: exit 0, active" test $rc -eq 0 -a "$(systemctl is-active gpup2p-acs.service)" = active
chk "after restart: ACSCtl 0011 on the four" [ "$(allctl)" = " 0011 0011 0011 0011" ]
chk "after restart: the same state file (0x001d before, not the 0x0011 it found cleared)" cmp -s "$ST" /run/state-boot
systemctl stop gpup2p-acs.service; rc=$?
chk "systemctl stop: exit 0, inactive" test $rc -eq 0 -a "$(systemctl is-active gpup2p-acs.service)" = inactive
chk "after stop: ACSCtl 001d back on the four" [ "$(allctl)" = " 001d 001d 001d 001d" ]
chk "after stop: state file removed" [ ! -e "$ST" ]
systemctl start gpup2p-acs.service
chk "start again: 0011, state file as at boot" bash -c "[ '$(allctl)' = ' 0011 0011 0011 0011' ] && cmp -s $ST /run/state-boot"
echo "# journal:"; journalctl -b -u gpup2p-acs.service -o cat --no-pager | tail -12 | sed 's/^/#   /'
