#!/bin/bash
# gpup2p doctor --nagios with the real nagios4 (issue 29): an object configuration that runs the
# installed gpup2p as a check command passes `nagios4 -v`; the command line from it is run as
# Nagios runs it (its $ARG$ expanded), its line parsed as Nagios splits plugin output: the text
# before '|' whole (a '|' in the host name replaced, not cutting it), no "; ", perfdata as
# label=value;warn;crit;min, nothing on stderr; exit 0/1/2/3 with OK/WARNING/CRITICAL/UNKNOWN.
set -u
BUILD=${BUILD:-build}
. tests/cli/lib.sh
. tests/fleet/lib.sh
fleet_ns "$0"
D=$PWD/$BUILD/fixtures/doctor
T=$(mktemp -d /tmp/gpup2p-nagios.XXXXXX)
trap 'rm -rf "$T"' EXIT
echo "# $(nagios4 --version 2>/dev/null | sed -n 's/^\(Nagios Core [0-9.]*\).*/\1/p' | head -1); monitoring-plugins $(dpkg-query -W -f '${Version}' monitoring-plugins-basic)"
fleet_install || { nok "make install: $(tail -3 "$T/install.log")"; exit 0; }

mkdir -p "$T/var/spool/checkresults" "$T/var/rw"
cat >"$T/objects.cfg" <<EOF
define timeperiod {
	timeperiod_name 24x7
	alias 24x7
	sunday 00:00-24:00
	monday 00:00-24:00
	tuesday 00:00-24:00
	wednesday 00:00-24:00
	thursday 00:00-24:00
	friday 00:00-24:00
	saturday 00:00-24:00
}
define command {
	command_name check_gpup2p
	command_line GPUP2P_ROOT=\$ARG1\$ /usr/local/bin/gpup2p doctor --nagios --no-cuda
}
define command {
	command_name notify_none
	command_line /bin/true
}
define command {
	command_name check_dummy_ok
	command_line /usr/lib/nagios/plugins/check_dummy 0
}
define contact {
	contact_name admin
	host_notifications_enabled 0
	service_notifications_enabled 0
	host_notification_period 24x7
	service_notification_period 24x7
	host_notification_options n
	service_notification_options n
	host_notification_commands notify_none
	service_notification_commands notify_none
}
define host {
	host_name gpn1
	address 127.0.0.1
	check_command check_dummy_ok
	max_check_attempts 1
	check_period 24x7
	contacts admin
	notification_period 24x7
}
define service {
	host_name gpn1
	service_description gpup2p doctor
	check_command check_gpup2p!$D/bar-small
	max_check_attempts 1
	check_interval 5
	retry_interval 1
	check_period 24x7
	contacts admin
	notification_period 24x7
}
EOF
cat >"$T/nagios.cfg" <<EOF
cfg_file=$T/objects.cfg
log_file=$T/var/nagios.log
status_file=$T/var/status.dat
object_cache_file=$T/var/objects.cache
precached_object_file=$T/var/objects.precache
temp_file=$T/var/nagios.tmp
temp_path=$T/var
lock_file=$T/var/nagios.lock
check_result_path=$T/var/spool/checkresults
command_file=$T/var/rw/nagios.cmd
nagios_user=root
nagios_group=root
illegal_macro_output_chars=\`~\$&|'"<>
EOF
nagios4 -v "$T/nagios.cfg" >"$T/v" 2>&1 && grep -q "Total Errors:   0" "$T/v" &&
	ok "nagios4 -v: the configuration with the check_gpup2p command is valid" || nok "nagios4 -v: $(grep -iE 'error|warning' "$T/v" | head -3)"

# the command line as Nagios runs it (through /bin/sh, $ARG1$ replaced): the check on ROOT
cmdline=$(sed -n 's/^\tcommand_line \(GPUP2P_ROOT=.*\)$/\1/p' "$T/objects.cfg")
check() { env -i PATH=/usr/bin:/bin /bin/sh -c "${cmdline//\$ARG1\$/$1}" 2>"$T/err"; }
# parse LINE CODE: Nagios' split of plugin output (first line: text | perfdata)
parse() {
	python3 - "$1" "$2" <<'EOF'
import re, sys
line, code = sys.argv[1], int(sys.argv[2])
state = {0: "OK", 1: "WARNING", 2: "CRITICAL", 3: "UNKNOWN"}[code]
assert "\n" not in line and line.count("|") <= 1, line
text, _, perf = line.partition("|")
assert text.startswith("GPUP2P %s - " % state) and "; " not in text, text
for item in perf.split():
    m = re.fullmatch(r"([a-z]+)=([0-9.]+)(s?);([0-9]*);([0-9]*);([0-9]*)", item)
    assert m and m.group(6) == "0", item
print(text.strip())
EOF
}
for f in healthy:0 pm-legacy:1 bar-small:2; do
	line=$(check "$D/${f%:*}")
	rc=$?
	text=$(parse "$line" "$rc") && [ "$rc" = "${f#*:}" ] && [ ! -s "$T/err" ] &&
		ok "the plugin on ${f%:*}: exit $rc, '${text:0:40}...', perfdata with min, nothing on stderr" ||
		nok "plugin on ${f%:*}: exit $rc '$line' $(cat "$T/err")"
done
cp -a "$D/bar-small" "$T/pipe"
echo 'gpn|1' >"$T/pipe/proc/sys/kernel/hostname"
line=$(check "$T/pipe")
rc=$?
text=$(parse "$line" "$rc") && [[ $text == "GPUP2P CRITICAL - gpn/1: 1 error, "*" - bar.small 0000:13:00.0: GPU0: aperture"* ]] &&
	ok "a host named gpn|1: the text whole up to the alarm, '|' as '/'" || nok "host with |: '$line'"
line=$(check "$T/none")
rc=$?
text=$(parse "$line" "$rc") && [ "$rc" = 3 ] && [ ! -s "$T/err" ] && ok "a missing root: UNKNOWN, exit 3, the reason, stderr silent" ||
	nok "missing root: $rc '$line' $(cat "$T/err")"
