#!/bin/bash
# doctor's textfile metrics with the real node_exporter and promtool (issue 29): the file written by
# the installed timer's command line and by the cron example's, scraped by node_exporter's textfile
# collector without a scrape error; promtool check metrics on the scrape; the contrib rules checked
# and their unit test run; the units verified with systemd-analyze (no systemd as PID 1 here).
set -u
BUILD=${BUILD:-build}
. tests/cli/lib.sh
. tests/fleet/lib.sh
fleet_ns "$0"
D=$PWD/$BUILD/fixtures/doctor
T=$(mktemp -d /tmp/gpup2p-prom.XXXXXX)
stop() {
	stop_pidfile "$T/ne.pid"
	rm -rf "$T"
}
trap stop EXIT
echo "# $(prometheus-node-exporter --version 2>&1 | head -1); $(promtool --version 2>&1 | head -1)"
echo "# $(systemd-analyze --version | head -1); PID 1: $(ps -o comm= -p 1)"
fleet_net gpn1
fleet_install || { nok "make install: $(tail -3 "$T/install.log")"; exit 0; }
U=$T/dest/usr/local/lib/systemd/system
C=/usr/local/share/gpup2p/contrib

# --- the units: verified, disabled by default, the command line run as systemd would -----------
# (systemd-analyze verify needs the binary at the path ExecStart names: /usr/local/bin here)
out=$(systemd-analyze verify "$U/gpup2p-textfile.service" "$U/gpup2p-textfile.timer" 2>&1)
[ -z "$out" ] && ok "systemd-analyze verify: gpup2p-textfile.service and .timer clean" || nok "verify: $out"
grep -q '^Type=oneshot' "$U/gpup2p-textfile.service" && grep -q -- '--no-cuda' "$U/gpup2p-textfile.service" &&
	grep -qx 'SuccessExitStatus=1 2' "$U/gpup2p-textfile.service" && ! grep -q '^\[Install\]' "$U/gpup2p-textfile.service" &&
	grep -qx 'WantedBy=timers.target' "$U/gpup2p-textfile.timer" &&
	ok "service: oneshot, --no-cuda, exit 1 and 2 a success, enabled only through the timer" || nok "service content"
grep -q 'dh_installsystemd --no-enable' debian/rules && ok "the package installs the units disabled (dh_installsystemd --no-enable)" ||
	nok "debian/rules enables units"
mkdir -p "$T/tf"
# ExecStart as systemd expands it: ${GPUP2P_TEXTFILE_DIR}, then $GPUP2P_TEXTFILE_OPTS split in words
exec_start=$(sed -n 's/^ExecStart=//p' "$U/gpup2p-textfile.service")
run_unit() {
	local GPUP2P_TEXTFILE_DIR=$T/tf GPUP2P_TEXTFILE_OPTS=$1 cmd
	cmd=${exec_start//'${GPUP2P_TEXTFILE_DIR}'/$GPUP2P_TEXTFILE_DIR}
	cmd=${cmd//'$GPUP2P_TEXTFILE_OPTS'/$GPUP2P_TEXTFILE_OPTS}
	# shellcheck disable=SC2086
	env -i GPUP2P_ROOT="$2" $cmd
}
run_unit "" "$D/bar-small"
rc=$?
grep -q '^SuccessExitStatus=.*\b'$rc'\b' "$U/gpup2p-textfile.service" && grep -qx 'gpup2p_doctor_exit 2' "$T/tf/gpup2p.prom" &&
	ok "the unit's command on an error fixture: exit $rc (a success to the unit), the file written" ||
	nok "unit command: exit $rc"

# --- node_exporter's textfile collector scrapes it -----------------------------------------------
prometheus-node-exporter --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$T/tf" --web.listen-address=127.0.0.1:9100 >"$T/ne.log" 2>&1 &
echo $! >"$T/ne.pid"
scrape() { python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=5).read().decode())' >"$T/scrape" 2>/dev/null; }
wait_for 20 scrape && ok "node_exporter up on 127.0.0.1:9100" || { nok "node_exporter: $(tail -3 "$T/ne.log")"; exit 0; }
grep -q '^node_textfile_scrape_error 0' "$T/scrape" &&
	grep -qx 'gpup2p_check_status{id="bar.small",subject="0000:13:00.0"} 2' "$T/scrape" &&
	grep -q '^node_textfile_mtime_seconds{file="[^"]*gpup2p.prom"}' "$T/scrape" &&
	ok "scraped: no textfile error, the planted bar.small at 2, node_textfile_mtime_seconds for gpup2p.prom" ||
	nok "scrape: $(grep -E 'textfile|bar.small' "$T/scrape" | head -5)"
promtool check metrics <"$T/scrape" >"$T/pc" 2>&1 && ok "promtool check metrics: the scrape is clean" ||
	nok "promtool check metrics: $(grep -v '^$' "$T/pc" | head -3)"
grep -q 'severity=' <(grep '^gpup2p_' "$T/scrape") && nok "a gpup2p series carries a severity label" ||
	ok "no gpup2p series carries a severity label (alert routing's)"

# the cron example's line, run with cron's environment; --alarms-only through the unit's options
line=$(sed -n 's/^\*\/5 \* \* \* \* root //p' "$C/cron/gpup2p")
[[ $line == "flock -n "*" timeout -k "*" /usr/local/bin/gpup2p doctor "* ]] &&
	ok "cron example: flock, timeout, the absolute path (/usr/local/bin from make install)" || nok "cron line: $line"
env -i PATH=/usr/bin:/bin GPUP2P_ROOT="$D/healthy" /bin/sh -c "${line//\/var\/lib\/prometheus\/node-exporter/$T/tf}"
rc=$?
[ $rc = 0 ] && grep -qx 'gpup2p_doctor_exit 0' "$T/tf/gpup2p.prom" && wait_for 10 eval 'scrape && grep -q "^gpup2p_doctor_exit 0" "$T/scrape"' &&
	ok "cron's line with cron's PATH: the file rewritten, scraped as healthy" || nok "cron line run: exit $rc"
run_unit "--alarms-only" "$D/bar-small"
wait_for 10 eval 'scrape && grep -q "^gpup2p_doctor_exit 2" "$T/scrape"' &&
	[ "$(grep -c '^gpup2p_check_status{' "$T/scrape")" = 2 ] && grep -q '^node_textfile_scrape_error 0' "$T/scrape" &&
	ok "--alarms-only (GPUP2P_TEXTFILE_OPTS): 2 check_status series scraped, the counts whole" ||
	nok "alarms-only scrape: $(grep -c '^gpup2p_check_status{' "$T/scrape")"

# --- the rules -----------------------------------------------------------------------------------
promtool check rules "$C/prometheus/gpup2p.rules.yml" >"$T/pr" 2>&1 && ok "promtool check rules: $(grep -o '[0-9]* rules' "$T/pr")" ||
	nok "promtool check rules: $(cat "$T/pr")"
(cd "$C/prometheus" && promtool test rules gpup2p.test.yml) >"$T/pt" 2>&1 &&
	ok "promtool test rules: error finding, doctor could not run (exit >= 3), stale file" || nok "promtool test rules: $(tail -5 "$T/pt")"
pid=$(cat "$T/ne.pid")
stop_pidfile "$T/ne.pid"
! alive "$pid" && ok "node_exporter stopped" || nok "node_exporter still running"
