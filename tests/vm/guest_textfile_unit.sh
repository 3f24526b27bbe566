#!/bin/bash
# Runs inside the guest booted with systemd (tests/vm/textfile_unit.sh), as a service after boot:
# gpup2p-textfile.timer started by hand runs gpup2p-textfile.service on its own schedule (a drop-in
# made it seconds); each run writes the textfile for node_exporter (tests/cli/prom_check.py checks the
# format); doctor's findings (exit 1, 2) are a successful run (SuccessExitStatus), a doctor that cannot
# run (exit 69: no root) leaves the unit failed and the file saying so, not the healthy file before
# it. The machine doctor reads is a fixture (GPUP2P_ROOT from /etc/default/gpup2p-textfile).
# usage: guest_textfile_unit.sh BUILD
set -u
FX=/run/fx
# the fixtures in the guest's memory: read over 9p, one run of doctor took minutes under TCG
mkdir -p $FX && cp -a "/gpup2p-repo/${1:-build}/fixtures/doctor/healthy" "/gpup2p-repo/${1:-build}/fixtures/doctor/bar-small" $FX/
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
U=gpup2p-textfile.service
P=/run/tf/gpup2p.prom
prop() { systemctl show -P "$1" "$U"; }
# conf ROOT: the settings the next run reads
# (doctor's bar and driver checks only: the whole doctor took over a minute of the guest's CPU under TCG)
conf() {
	printf 'GPUP2P_TEXTFILE_DIR=/run/tf\nGPUP2P_ROOT=%s\nGPUP2P_TEXTFILE_OPTS="--only bar,driver"\n' "$1" \
		>/etc/default/gpup2p-textfile
}
# next: wait (400 s at most) for the timer's next run (one that starts after now) to finish; 1 when none
# did. A run takes 5-20 s here; on a host loaded by other jobs TCG made one take about 3 minutes, past
# the 180 s this waited before: the checks then read a run still going, and every later change of
# settings reached the run after the one checked (seen once: five checks failed together).
next() {
	local n0 t0=$SECONDS end=$((SECONDS + 400))
	n0=$(prop ExecMainStartTimestampMonotonic)
	until [ "$(prop ExecMainStartTimestampMonotonic)" != "$n0" ] &&
		[[ $(prop ActiveState) =~ ^(inactive|failed)$ ]]; do
		if [ $SECONDS -ge $end ]; then
			echo "# no run finished in 400 s:"
			systemctl status --no-pager gpup2p-textfile.timer "$U" 2>&1 | sed 's/^/#   /'
			return 1
		fi
		sleep 0.2
	done
	echo "# a run finished $((SECONDS - t0)) s after the wait began: exit $(prop ExecMainStatus)"
}
val() { sed -n "s/^$1 //p" "$P"; }

chk "systemd is PID 1" grep -qx systemd /proc/1/comm
chk "the units are installed disabled (as shipped)" [ "$(systemctl is-enabled gpup2p-textfile.timer)" = disabled ]
mkdir -p /run/tf
conf "$FX/healthy"
systemctl start gpup2p-textfile.timer
chk "the timer is active, waiting" [ "$(systemctl is-active gpup2p-textfile.timer)" = active ]
chk "nothing ran before the timer fired" [ ! -e "$P" ]
# healthy: exit 0, the file in node_exporter's format
next
chk "first run on the timer's schedule: Result=success, exit 0, inactive again" \
	[ "$(prop Result) $(prop ExecMainStatus) $(prop ActiveState)" = "success 0 inactive" ]
chk "the textfile written: gpup2p_doctor_exit 0" [ "$(val gpup2p_doctor_exit)" = 0 ]
chk "the textfile passes the exposition-format check (prom_check.py)" python3 /gpup2p-repo/tests/cli/prom_check.py "$P"
chk "written atomically: no temporary file left in the directory" [ "$(ls /run/tf)" = gpup2p.prom ]
m1=$(stat -c %y "$P")
next
chk "a second run, on its own (OnUnitActiveSec): the file rewritten" [ "$(stat -c %y "$P")" != "$m1" ]
# an error finding (bar.small: exit 2): SuccessExitStatus=1 2, the file says so
conf "$FX/bar-small"
next
chk "an error finding: exit 2, Result=success (SuccessExitStatus), not failed" \
	[ "$(prop ExecMainStatus) $(prop Result) $(systemctl is-failed $U)" = "2 success inactive" ]
chk "the textfile: gpup2p_doctor_exit 2, bar.small's error in gpup2p_check_status" \
	bash -c "grep -q '^gpup2p_doctor_exit 2$' $P && grep -q '^gpup2p_check_status{id=\"bar.small\",' $P"
# healthy again, then a doctor that cannot run (its root is gone: exit 69)
conf "$FX/healthy"
next
chk "healthy again: exit 0" [ "$(val gpup2p_doctor_exit)" = 0 ]
conf /nonexistent
next
chk "doctor could not run (exit 69): the unit failed (Result=exit-code)" \
	[ "$(prop ExecMainStatus) $(prop Result) $(systemctl is-failed $U)" = "69 exit-code failed" ]
chk "the file does not stay healthy: gpup2p_doctor_exit 69" [ "$(val gpup2p_doctor_exit)" = 69 ]
chk "the timer goes on after a failed run" [ "$(systemctl is-active gpup2p-textfile.timer)" = active ]
echo "# journal:"; journalctl -b -u "$U" -o cat --no-pager | tail -24 | sed 's/^/#   /'
