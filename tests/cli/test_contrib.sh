#!/bin/bash
# contrib/: the NHC check (sourced with stub die/log/dbg as NHC defines them), the Slurm
# HealthCheckProgram (with stub scontrol and logger), the node-problem-detector plugin config (parsed,
# its command run), each on fixture roots through GPUP2P_ROOT.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
FX=$BUILD/fixtures
D=$FX/doctor
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P=$PWD/$BIN
unset GPUP2P_ROOT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the first error doctor reports on a root: "ID SUBJECT"
first_error() {
	GPUP2P_ROOT=$1 "$BIN" doctor --json --pretty | python3 -c '
import json, sys
e = [f for f in json.load(sys.stdin)["findings"] if f["severity"] == "error"]
print(e[0]["id"], e[0]["subject"])'
}
err_nouveau=$(first_error "$D/drv-nouveau")
err_bar=$(first_error "$D/bar-small")
[ "$err_bar" = "bar.small 0000:13:00.0" ] && ok "bar-small's first error is the planted bar.small on GPU0" ||
	nok "bar-small first error: $err_bar"

# --- NHC -------------------------------------------------------------------------------------------
# nhc ROOT ARGS...: run check_gpup2p_doctor as NHC would; sets rc, died, logged
nhc() {
	local root=$1
	shift
	died= logged= rc=
	eval "$(GPUP2P_ROOT=$root bash -c '
		die() { printf "died=%q\n" "$1 $2"; }
		log() { printf "logged=%q\n" "$*"; }
		dbg() { :; }
		. contrib/nhc/gpup2p.nhc
		check_gpup2p_doctor "$@"
		echo "rc=$?"' nhc "$@")"
}
nhc "$D/healthy"
[ "$rc" = 0 ] && [ -z "$died" ] && ok "nhc: healthy passes" || nok "nhc healthy: rc $rc died '$died'"
nhc "$D/drv-nouveau"
[ "$rc" = 1 ] && [[ $died == "1 check_gpup2p_doctor: $err_nouveau: "*"(gpup2p doctor --explain ${err_nouveau%% *})" ]] &&
	ok "nhc: an error fails with the first error's id and subject ($err_nouveau)" || nok "nhc drv-nouveau: rc $rc died '$died'"
nhc "$D/bar-small"
[ "$rc" = 1 ] && [[ $died == "1 check_gpup2p_doctor: bar.small 0000:13:00.0: GPU0: aperture 256M"* ]] &&
	ok "nhc: bar.small on GPU0 named" || nok "nhc bar-small: rc $rc died '$died'"
nhc "$D/drv-nouveau" -- --skip driver
[ "$rc" = 0 ] && [ -z "$died" ] && ok "nhc: doctor options after -- (--skip driver)" || nok "nhc --skip: rc $rc died '$died'"
nhc "$D/pm-legacy"
[ "$rc" = 0 ] && [ -z "$died" ] && [[ $logged == "check_gpup2p_doctor: warning: "* ]] &&
	ok "nhc: a warning is logged, the node passes" || nok "nhc pm-legacy: rc $rc died '$died' logged '$logged'"
nhc "$D/pm-legacy" -w
[ "$rc" = 1 ] && [[ $died == "1 check_gpup2p_doctor: "*" (gpup2p doctor --explain "* ]] &&
	ok "nhc -w: the warning fails the node" || nok "nhc -w: rc $rc died '$died'"
nhc "$FX/broken-vendor"
[ "$rc" = 1 ] && [[ $died == *"could not check (UNKNOWN): "*"vendor: No such file"* ]] &&
	ok "nhc: doctor cannot read the data: fails, says why" || nok "nhc broken-vendor: rc $rc died '$died'"
nhc "$D/healthy" -- --active
[ "$rc" = 1 ] && [[ $died == *"--active is not for a health check"* ]] && ok "nhc: --active refused" || nok "nhc --active: $died"
GPUP2P=/nonexistent/gpup2p nhc "$D/healthy"
[ "$rc" = 1 ] && [[ $died == *"/nonexistent/gpup2p not found"* ]] && ok "nhc: no binary: fails, names it" || nok "nhc no binary: $died"

# --- Slurm HealthCheckProgram ----------------------------------------------------------------------
# (tests/fleet/test_slurm.sh runs it under the real slurmd; here scontrol is a stand-in that prints
# $tmp/node.info for `show node` and logs each update)
mkdir "$tmp/bin"
printf '#!/bin/sh\n[ "$1" = show ] && exec cat "%s/node.info" 2>/dev/null\necho "$@" >>"%s/scontrol.log"\n' \
	"$tmp" "$tmp" >"$tmp/bin/scontrol"
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/logger"
chmod +x "$tmp/bin/scontrol" "$tmp/bin/logger"
: >"$tmp/empty.conf"
# node STATE [REASON]: what `scontrol show node` says about node07
node() {
	printf 'NodeName=node07 Arch=x86_64\n   State=%s ThreadsPerCore=1\n' "$1" >"$tmp/node.info"
	[ -z "${2:-}" ] || printf '   Reason=%s [root@2026-01-01T00:00:00]\n' "$2" >>"$tmp/node.info"
}
# hc ROOT [ENV=V...]: run the program as slurmd would (node07); sets rc, drained (scontrol's
# arguments) and said (the line it printed)
hc() {
	local root=$1
	shift
	rm -f "$tmp/scontrol.log"
	said=$(env PATH="$tmp/bin:$PATH" GPUP2P_CONFIG="$tmp/empty.conf" GPUP2P_LOCK="$tmp/lock" \
		GPUP2P_ROOT="$root" SLURMD_NODENAME=node07 "$@" contrib/slurm/gpup2p-healthcheck 2>&1)
	rc=$?
	drained=$(cat "$tmp/scontrol.log" 2>/dev/null)
}
node IDLE
hc "$D/healthy"
[ "$rc" = 0 ] && [ -z "$drained" ] && [ "$(wc -l <<<"$said")" = 1 ] &&
	[[ $said == "gpup2p-healthcheck: node07: GPUP2P OK"* ]] &&
	ok "slurm: healthy: exit 0, nothing drained, one line" || nok "slurm healthy: $rc '$drained' '$said'"
hc "$D/pm-legacy"
[ "$rc" = 0 ] && [ -z "$drained" ] && ok "slurm: warnings only: exit 0" || nok "slurm pm-legacy: $rc '$drained'"
hc "$D/bar-small"
[ "$rc" = 1 ] && [ "$drained" = "update NodeName=node07 State=DRAIN Reason=gpup2p: bar.small 0000:13:00.0" ] &&
	[ "$said" = "gpup2p-healthcheck: node07: drained: gpup2p: bar.small 0000:13:00.0" ] &&
	ok "slurm: an error drains node07 with the check id and subject, says so" ||
	nok "slurm bar-small: $rc '$drained' '$said'"
node IDLE+DRAIN "gpup2p: bar.small 0000:13:00.0"
hc "$D/bar-small"
[ "$rc" = 1 ] && [ -z "$drained" ] && [[ $said == *"still drained"* ]] &&
	ok "slurm: drained already for the same reason: left alone" || nok "slurm same reason: $rc '$drained' '$said'"
hc "$D/healthy"
[ "$rc" = 0 ] && [ "$drained" = "update NodeName=node07 State=RESUME" ] &&
	[[ $said == *"resumed (drained for 'gpup2p: bar.small"* ]] &&
	ok "slurm: healthy again: its own drain resumed" || nok "slurm resume: $rc '$drained' '$said'"
hc "$D/healthy" GPUP2P_RESUME=0
[ "$rc" = 0 ] && [ -z "$drained" ] && ok "slurm: GPUP2P_RESUME=0: stays drained" || nok "slurm RESUME=0: $rc '$drained'"
node DRAIN "PSU swap ticket 4711"
hc "$D/healthy"
[ "$rc" = 0 ] && [ -z "$drained" ] && ok "slurm: an administrator's drain is never resumed" ||
	nok "slurm admin resumed: '$drained'"
hc "$D/bar-small"
[ "$rc" = 1 ] && [ -z "$drained" ] &&
	[[ $said == *"kept the reason 'PSU swap ticket 4711' (DRAIN): gpup2p: bar.small"* ]] &&
	ok "slurm: an error on a node an administrator drained: the reason kept" ||
	nok "slurm admin kept: '$drained' '$said'"
node IDLE
hc "$FX/broken-vendor"
[ "$rc" = 1 ] && [[ $drained == "update NodeName=node07 State=DRAIN Reason=gpup2p: could not check: "* ]] &&
	ok "slurm: doctor cannot check: drained, says so" || nok "slurm broken-vendor: $rc '$drained'"
hc "$FX/broken-vendor" GPUP2P_UNKNOWN_OK=1
[ "$rc" = 0 ] && [ -z "$drained" ] && ok "slurm: GPUP2P_UNKNOWN_OK=1 lets it pass" || nok "slurm UNKNOWN_OK: $rc '$drained'"
hc "$D/healthy" GPUP2P=/nonexistent/gpup2p
[ "$rc" = 1 ] && [ "$drained" = "update NodeName=node07 State=DRAIN Reason=gpup2p: /nonexistent/gpup2p not found" ] &&
	ok "slurm: no binary: drained, named" || nok "slurm no binary: $rc '$drained'"
# the settings file: what slurmd cannot pass (here: another root, and doctor's arguments)
printf 'GPUP2P_ROOT=%s\nGPUP2P_ARGS="--skip bar"\n' "$D/bar-small" >"$tmp/conf"
hc "$D/healthy" GPUP2P_CONFIG="$tmp/conf"
[ "$rc" = 0 ] && [ -z "$drained" ] && [[ $said == *"GPUP2P OK - "* ]] &&
	sed -i '/ARGS/d' "$tmp/conf" && hc "$D/healthy" GPUP2P_CONFIG="$tmp/conf" &&
	[[ $said == *"drained: gpup2p: bar.small"* ]] &&
	ok "slurm: root and doctor's arguments from GPUP2P_CONFIG" || nok "slurm config: $rc '$drained' '$said'"
# no PATH at all (slurmd's environment): the fixed directories, /usr/local/bin among them
out=$(env -i /bin/bash -c 'unset PATH; while IFS= read -r l; do [[ $l != "export PATH="* ]] || eval "$l"; done <"$1"
	echo "$PATH"' _ contrib/slurm/gpup2p-healthcheck)
[ "$out" = /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ] &&
	ok "slurm: with no PATH it looks in /usr/local/bin and the system's directories" || nok "slurm PATH: '$out'"
# a doctor that ignores SIGTERM: killed after the kill-after, the node drained
printf '#!/bin/bash\ntrap "" TERM\necho $$ >%s/hung.pid\nsleep 30\n' "$tmp" >"$tmp/hung"
chmod +x "$tmp/hung"
hc "$D/healthy" GPUP2P="$tmp/hung" GPUP2P_TIMEOUT=1 GPUP2P_KILL_AFTER=1
[ "$rc" = 1 ] && [ "$drained" = "update NodeName=node07 State=DRAIN Reason=gpup2p: doctor timed out after 1 s" ] &&
	! ps -o stat= -p "$(cat "$tmp/hung.pid")" | grep -qv Z && ok "slurm: a doctor deaf to SIGTERM is killed, the node drained" ||
	nok "slurm timeout: $rc '$drained' '$said'"
# a timeout at or above slurmd's 60 s is capped: doctor, its kill and scontrol within it
out=$(GPUP2P_TIMEOUT=300 GPUP2P_KILL_AFTER=10 bash -c \
	'eval "$(sed -n "/^limit=/,/^\[ \"\$limit\" -gt 0 \]/p" "$1")"; echo $limit $kill_after' _ contrib/slurm/gpup2p-healthcheck)
[ "$out" = "35 10" ] && ok "slurm: GPUP2P_TIMEOUT=300 capped: doctor 35 s + 10 s kill-after" || nok "slurm cap: '$out'"
# overlapping runs: the second one skips while the first holds the lock
node IDLE
exec 8>>"$tmp/lock"
flock -n 8
hc "$D/bar-small"
exec 8>&-
[ "$rc" = 0 ] && [ -z "$drained" ] && [[ $said == *"skipped: the previous run still holds $tmp/lock"* ]] &&
	ok "slurm: a run while the last one holds the lock: skipped" || nok "slurm lock: $rc '$drained' '$said'"
# slurmd kills it at 60 s: the static doctor on the largest fixture stays far below (a fixture, not a
# live machine: tests/perf/results has live runs of about a second). CPU seconds, not wall time: a
# loaded machine stretches the wall clock, not the work done
cpu=$( { TIMEFORMAT='%U %S'; time GPUP2P_ROOT=$D/p2p-many "$BIN" doctor --nagios >/dev/null 2>&1; } 2>&1 |
	awk '{ printf "%.2f", $1 + $2 }')
awk -v c="$cpu" 'BEGIN { exit !(c != "" && c < 10) }' && ok "static doctor on p2p-many: $cpu CPU s (slurmd's limit: 60 s)" ||
	nok "static doctor took $cpu CPU s"

# --- node-problem-detector -------------------------------------------------------------------------
cmd=$(python3 - contrib/npd/gpup2p-doctor.json <<'EOF'
import json, os, re, sys
c = json.load(open(sys.argv[1]))
assert c["plugin"] == "custom" and c["source"], c
sec = lambda s: int(re.fullmatch(r"(\d+)s", s).group(1))
pc = c["pluginConfig"]
assert sec(pc["timeout"]) < sec(pc["invoke_interval"]), pc
conds = {k["type"] for k in c["conditions"]}
for r in c["rules"]:
    assert r["type"] in ("temporary", "permanent") and r["reason"], r
    assert r["type"] == "temporary" or r["condition"] in conds, r
    assert sec(r["timeout"]) <= sec(pc["timeout"]), r
    print("contrib/npd/" + os.path.basename(r["path"]))
EOF
)
[ -n "$cmd" ] && [ -x "$cmd" ] && ok "npd: config parses, its rule runs $cmd (executable)" || nok "npd config: '$cmd'"
# npd ROOT CODE PATTERN: the plugin's exit as NPD reads it (0 OK, 1 NonOK, other Unknown), one line
npd() {
	local out rc
	out=$(GPUP2P_ROOT=$1 "$cmd")
	rc=$?
	[ $rc = "$2" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && grep -qF -- "$3" <<<"$out" &&
		ok "npd: $(basename "$1"): exit $2" || nok "npd $(basename "$1"): exit $rc (want $2): $out"
}
npd "$D/healthy" 0 "GPUP2P OK"
npd "$D/pm-legacy" 0 "GPUP2P WARNING"
npd "$D/bar-small" 1 " - bar.small 0000:13:00.0: "
npd "$FX/broken-vendor" 3 "GPUP2P UNKNOWN"
