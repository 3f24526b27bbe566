#!/bin/bash
# gpup2p doctor for machines (issue 15): --json on one line under 64 KiB with its envelope, --pretty,
# --prometheus [--textfile DIR] (checked by tests/cli/prom_check.py, and promtool where installed),
# --nagios; each on fixture roots, healthy and with planted faults, and when doctor cannot run.
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
py() { python3 -c "$@"; }

# --- --json ------------------------------------------------------------------------------------
"$BIN" --root "$D/bar-small" doctor --json >"$tmp/bs.json"; rc=$?
[ "$(wc -l <"$tmp/bs.json")" = 1 ] && [ "$(tail -c1 "$tmp/bs.json" | od -An -c | tr -d ' ')" = '\n' ] &&
	ok "--json: one line" || nok "--json: $(wc -l <"$tmp/bs.json") lines"
py '
import json, re, sys, datetime
d = json.load(open(sys.argv[1]))
assert d["host"] == "dgx01" and d["boot_id"] is None, (d["host"], d["boot_id"])
assert d["gpup2p"]["version"] == sys.argv[3] and d["gpup2p"]["argv"] == ["doctor", "--json"], d["gpup2p"]
assert d["exit_status"] == int(sys.argv[2]) == 2, (d["exit_status"], sys.argv[2])
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["time"]), d["time"]
t = datetime.datetime.strptime(d["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
assert abs((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds()) < 300, d["time"]
for k in ("schema", "command", "host", "root", "summary", "findings", "truncated"):
    assert k in d, k
' "$tmp/bs.json" "$rc" "$(cat VERSION)" && ok "--json envelope: host, boot_id null, time (UTC, now), version, argv, exit_status" ||
	nok "--json envelope"

# the bound: an 8-GPU server is above 64 KiB whole; the line keeps the alarms, drops the least urgent
# findings and counts them; --pretty gives them all
for f in bar-small p2p-many healthy; do
	"$BIN" --root "$D/$f" doctor --json >"$tmp/$f.json"
	"$BIN" --root "$D/$f" doctor --json --pretty >"$tmp/$f.pretty.json"
	py '
import json, sys
line = open(sys.argv[1], "rb").read()
assert len(line) < 65536, len(line)
d, full = json.loads(line), json.load(open(sys.argv[2]))
order = ["error", "warning", "unknown", "info", "ok", "skipped"]
total = sum(d["summary"].values())
assert full["truncated"] == 0 and len(full["findings"]) == total, "pretty is whole"
assert len(open(sys.argv[2]).read()) >= 65536, "the fixture is above the bound whole"
assert d["truncated"] > 0 and d["truncated"] == total - len(d["findings"]), (d["truncated"], total, len(d["findings"]))
kept = {s: sum(f["severity"] == s for f in d["findings"]) for s in order}
cut = [s for s in order if kept[s] < d["summary"][s]]
# nothing less urgent than the first severity cut is kept
assert all(kept[s] == 0 for s in order[order.index(cut[0]) + 1:]), (kept, d["summary"])
assert cut[0] in ("ok", "skipped") and all(kept[s] == d["summary"][s] for s in order[:3]), kept
# what is kept is the whole finding, in report order
pos = {(f["id"], f["subject"]): i for i, f in enumerate(full["findings"])}
idx = [pos[(f["id"], f["subject"])] for f in d["findings"]]
assert idx == sorted(idx) and all(f == full["findings"][pos[(f["id"], f["subject"])]] for f in d["findings"])
' "$tmp/$f.json" "$tmp/$f.pretty.json" && ok "--json on $f: under 64 KiB, alarms kept, the rest counted in truncated" ||
		nok "--json bound on $f"
done
"$BIN" --root "$FX/workstation" doctor --json | py '
import json, sys
d = json.load(sys.stdin)
assert d["truncated"] == 0 and len(d["findings"]) == sum(d["summary"].values())' &&
	ok "--json on a 2-GPU workstation: whole, truncated 0" || nok "--json workstation"

# boot_id from the root (a snapshot records it); not a UUID: null
cp -a "$D/healthy" "$tmp/boot"
mkdir -p "$tmp/boot/proc/sys/kernel/random"
echo 0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a05 >"$tmp/boot/proc/sys/kernel/random/boot_id"
[ "$("$BIN" --root "$tmp/boot" doctor --json | py 'import json,sys; print(json.load(sys.stdin)["boot_id"])')" = \
	0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a05 ] && ok "--json: boot_id from the root" || nok "--json: boot_id"
"$BIN" --root "$tmp/boot" -q snapshot --dir "$tmp/boot-snap" &&
	[ "$("$BIN" --root "$tmp/boot-snap" doctor --json | py 'import json,sys; print(json.load(sys.stdin)["boot_id"])')" = \
	0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a05 ] && ok "snapshot records the boot id, doctor --json reads it back" ||
	nok "boot id through a snapshot"
"$BIN" --root "$tmp/boot" -q snapshot --dir --no-hostname "$tmp/boot-nohost" &&
	[ ! -e "$tmp/boot-nohost/proc/sys/kernel/random/boot_id" ] && ok "snapshot --no-hostname leaves the boot id out" ||
	nok "--no-hostname kept the boot id"
echo "not-a-uuid" >"$tmp/boot/proc/sys/kernel/random/boot_id"
[ "$("$BIN" --root "$tmp/boot" doctor --json | py 'import json,sys; print(json.load(sys.stdin)["boot_id"])')" = None ] &&
	ok "--json: a boot_id that is not a UUID is null" || nok "--json: malformed boot_id"

# doctor cannot run: still one line, with why and the exit status
out=$("$BIN" --root "$tmp/nosuch" doctor --json 2>/dev/null); rc=$?
[ $rc = 69 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && py '
import json, sys
d = json.loads(sys.argv[1])
assert d["exit_status"] == 69 and d["findings"] == [] and d["summary"] is None and "nosuch" in d["error"], d
assert d["root"].endswith("/nosuch") and d["gpup2p"]["root"] is None, d' "$out" &&
	ok "--json, root missing: one line, exit_status 69, the error" || nok "--json root missing: $rc $out"
out=$("$BIN" --root "$FX/broken-vendor" doctor --json 2>/dev/null); rc=$?
[ $rc = 3 ] && py 'import json,sys; d=json.loads(sys.argv[1]); assert d["exit_status"] == 3 and "vendor" in d["error"]' "$out" &&
	ok "--json, malformed sysfs: exit_status 3" || nok "--json broken-vendor: $rc $out"
expect 64 "--pretty goes with --json" --root "$D/healthy" doctor --pretty
expect 64 "exclude each other" --root "$D/healthy" doctor --json --prometheus

# --- --prometheus ------------------------------------------------------------------------------
for f in healthy bar-small p2p-many drv-nouveau; do
	"$BIN" --root "$D/$f" doctor --prometheus >"$tmp/$f.prom"; rc=$?
	msg=$(python3 tests/cli/prom_check.py "$tmp/$f.prom") && ok "--prometheus on $f: valid exposition format" ||
		nok "--prometheus on $f: $msg"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$tmp/$f.prom" >/dev/null 2>&1 && ok "promtool check metrics: $f" || nok "promtool: $f"
	fi
	"$BIN" --root "$D/$f" doctor --json --pretty >"$tmp/$f.pj"
	py '
import json, re, sys
d = json.load(open(sys.argv[2]))
status = {"error": 2, "warning": 1, "unknown": 3}
got = {}
for l in open(sys.argv[1]):
    m = re.match(r"^gpup2p_check_status\{id=\"([^\"]*)\",subject=\"([^\"]*)\"\} (\d)$", l)
    if m:
        got[m.group(1), m.group(2)] = int(m.group(3))
    assert "severity=" not in l, l
want = {(f["id"], f["subject"]): status.get(f["severity"], 0) for f in d["findings"]}
assert got == want, set(got.items()) ^ set(want.items())
text = open(sys.argv[1]).read()
assert re.search(r"^gpup2p_doctor_exit %d$" % int(sys.argv[3]), text, re.M), "exit"
for s, n in d["summary"].items():
    assert re.search(r"^gpup2p_doctor_findings\{level=\"%s\"\} %d$" % (s, n), text, re.M), s
assert re.search(r"^gpup2p_doctor_duration_seconds [0-9.e+-]+$", text, re.M)
' "$tmp/$f.prom" "$tmp/$f.pj" "$rc" && ok "--prometheus on $f: one gpup2p_check_status per finding, exit $rc, counts" ||
		nok "--prometheus content on $f"
done
grep -qx 'gpup2p_check_status{id="bar.small",subject="0000:13:00.0"} 2' "$tmp/bar-small.prom" &&
	ok "--prometheus: the planted bar.small error, value 2" || nok "--prometheus: bar.small"

# --alarms-only: check_status for the alarms only, the counts whole
"$BIN" --root "$D/bar-small" doctor --prometheus --alarms-only >"$tmp/alarms.prom"
diff <(grep gpup2p_check_status "$tmp/alarms.prom" | grep -v '^#') \
	<(grep -E '^gpup2p_check_status\{.*\} [123]$' "$tmp/bar-small.prom") >/dev/null &&
	[ "$(grep -c '^gpup2p_check_status{' "$tmp/alarms.prom")" = 2 ] &&
	diff <(grep findings "$tmp/alarms.prom") <(grep findings "$tmp/bar-small.prom") >/dev/null &&
	python3 tests/cli/prom_check.py "$tmp/alarms.prom" >/dev/null &&
	ok "--alarms-only: the 2 alarms of bar-small, the counts whole" || nok "--alarms-only: $(grep -c . "$tmp/alarms.prom")"
"$BIN" --root "$D/healthy" doctor --prometheus --alarms-only | grep -q '^gpup2p_check_status{' &&
	nok "--alarms-only on a healthy node wrote a check_status" || ok "--alarms-only on healthy: no check_status series"
expect 64 "--alarms-only goes with --prometheus" --root "$D/healthy" doctor --alarms-only

# --textfile: DIR/gpup2p.prom replaced whole, nothing on stdout, no temporary file left
mkdir "$tmp/tf"
echo "stale" >"$tmp/tf/gpup2p.prom"
out=$("$BIN" --root "$D/bar-small" doctor --prometheus --textfile "$tmp/tf"); rc=$?
[ $rc = 2 ] && [ -z "$out" ] && [ "$(ls -A "$tmp/tf")" = gpup2p.prom ] &&
	[ "$(stat -c %a "$tmp/tf/gpup2p.prom")" = 644 ] &&
	diff <(grep -v duration "$tmp/tf/gpup2p.prom") <(grep -v duration "$tmp/bar-small.prom") >/dev/null &&
	ok "--textfile: gpup2p.prom replaced (mode 644), as on stdout, exit 2 as doctor's" ||
	nok "--textfile: rc $rc, stdout '$out', $(ls -A "$tmp/tf")"
"$BIN" --root "$D/healthy" doctor --prometheus --textfile="$tmp/tf" && grep -qx "gpup2p_doctor_exit 0" "$tmp/tf/gpup2p.prom" &&
	ok "--textfile=DIR: rewritten by the next run" || nok "--textfile= second run"
expect 64 "cannot create a file in .*nosuch" --root "$D/healthy" doctor --prometheus --textfile "$tmp/nosuch"
[ ! -e "$tmp/nosuch" ] && ok "--textfile to a missing folder creates nothing" || nok "--textfile created $tmp/nosuch"
expect 64 "--textfile goes with --prometheus" --root "$D/healthy" doctor --textfile "$tmp/tf"
expect 64 "--textfile needs a directory" --root "$D/healthy" doctor --prometheus --textfile=
# doctor cannot run: the file says so (a stale healthy file would hide it)
"$BIN" --root "$tmp/nosuch" doctor --prometheus --textfile "$tmp/tf" 2>/dev/null; rc=$?
[ $rc = 69 ] && grep -qx "gpup2p_doctor_exit 69" "$tmp/tf/gpup2p.prom" && ! grep -q gpup2p_check_status "$tmp/tf/gpup2p.prom" &&
	python3 tests/cli/prom_check.py "$tmp/tf/gpup2p.prom" && ok "--textfile, root missing: gpup2p_doctor_exit 69, no checks" ||
	nok "--textfile on a failed run: rc $rc"

# --- --nagios ----------------------------------------------------------------------------------
# nagios FIXTURE CODE STATE PATTERN [ARGS]: one line, exit CODE, "GPUP2P STATE - ...PATTERN", perfdata
# with its thresholds and minimum, no "; " (Nagios rewrites it), nothing on stderr
nagios() {
	local fx=$1 code=$2 state=$3 pat=$4 out rc
	shift 4
	out=$("$BIN" --root "$fx" doctor --nagios "$@" 2>"$tmp/nagios.err"); rc=$?
	if [ $rc = "$code" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && grep -qE "^GPUP2P $state - " <<<"$out" &&
		grep -qF -- "$pat" <<<"$out" && [ "$(tr -cd '|' <<<"$out")" = "|" ] &&
		grep -qE '\| ([a-z]+=[0-9.]+s?;0?;0?;0 ?)+$' <<<"$out" && ! grep -q '; ' <<<"$out" &&
		[ ! -s "$tmp/nagios.err" ]; then
		ok "--nagios $(basename "$fx") $*: $state, exit $code"
	else
		nok "--nagios $(basename "$fx") $*: exit $rc (want $code $state '$pat'): $out"
	fi
}
nagios "$D/healthy" 0 OK "dgx01: 0 errors, 0 warnings"
nagios "$D/pm-legacy" 1 WARNING "1 warning"
nagios "$D/drv-nouveau" 2 CRITICAL " skipped - driver."
nagios "$D/bar-small" 2 CRITICAL " skipped - bar.small 0000:13:00.0: GPU0: aperture 256M"
cp -a "$D/healthy" "$tmp/odd"
echo "something else" >"$tmp/odd/proc/driver/nvidia/version"
nagios "$tmp/odd" 0 OK "2 unknown"  # driver.flavor and peermem.dmabuf cannot read the version line
nagios "$tmp/odd" 1 WARNING " - driver.flavor nvidia: unrecognised driver version line" --strict
# UNKNOWN for whatever is not 0, 1 or 2: 3 (malformed sysfs), 69 (no root, no GPU), 64 (usage)
nagios "$FX/broken-vendor" 3 UNKNOWN "vendor: No such file"
nagios "$tmp/no|such" 3 UNKNOWN "no/such"
# a host name with '|' and ';': replaced, the line not cut; a malformed numa_node that doctor warns
# about on stderr without --nagios: nothing there with it (check_by_ssh fails on any stderr)
cp -a "$D/bar-small" "$tmp/pipe"
printf 'dgx|01;b\n' >"$tmp/pipe/proc/sys/kernel/hostname"
gpu=$(ls "$tmp/pipe/sys/bus/pci/devices" | head -1)
echo "zero" >"$tmp/pipe/sys/bus/pci/devices/$gpu/numa_node"
"$BIN" --root "$tmp/pipe" doctor >/dev/null 2>"$tmp/warn.err"
grep -q "malformed NUMA node" "$tmp/warn.err" && ok "the planted numa_node warns on stderr without --nagios" ||
	nok "no stderr warning to silence: $(cat "$tmp/warn.err")"
nagios "$tmp/pipe" 2 CRITICAL "GPUP2P CRITICAL - dgx/01,b: 1 error, "
mkdir -p "$tmp/nogpu/sys/bus/pci/devices"
nagios "$tmp/nogpu" 3 UNKNOWN "no NVIDIA GPU on the PCI bus"
nagios "$D/healthy" 3 UNKNOWN "unknown option '--bogus'" --bogus
nagios "$D/healthy" 3 UNKNOWN "no check or family 'nosuch'" --only nosuch
nagios "$D/healthy" 3 UNKNOWN "exclude each other" --json
# the perfdata counts are the summary's
"$BIN" --root "$D/bar-small" doctor --nagios | py '
import json, re, subprocess, sys
line = sys.stdin.read().strip()
perf = dict(re.findall(r"([a-z]+)=([0-9.]+)s?;", line.split("|")[1]))
th = {k: (w, c, m) for k, w, c, m in re.findall(r"([a-z]+)=[0-9.]+s?;([^;]*);([^;]*);([^; ]*)", line)}
assert th["errors"] == ("", "0", "0") and th["warnings"] == ("0", "", "0"), th
assert all(m == "0" for w, c, m in th.values()), th
d = json.loads(subprocess.run([sys.argv[1], "--root", sys.argv[2], "doctor", "--json"], capture_output=True).stdout)
names = {"errors": "error", "warnings": "warning", "unknown": "unknown", "info": "info", "ok": "ok", "skipped": "skipped"}
assert {k: int(v) for k, v in perf.items() if k in names} == {k: d["summary"][v] for k, v in names.items()}, perf
assert float(perf["duration"]) >= 0' "$BIN" "$D/bar-small" && ok "--nagios perfdata: the summary's counts, duration" ||
	nok "--nagios perfdata"
