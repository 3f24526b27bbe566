#!/bin/bash
# gpup2p report: a generated fleet of 512 nodes (tests/fleet/gen.py) with planted differences, read as a
# pdsh stream and as a clush --outdir directory; real doctor and bench output folded; formats, exit codes,
# usage errors, malformed input; 512 nodes in well under a second of CPU time.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
FX=$PWD/$BUILD/fixtures
. tests/cli/lib.sh
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
unset GPUP2P_ROOT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# templates: doctor on a healthy fixture and on one with an ACS redirect error (exit 2)
"$BIN" --root "$FX/doctor/healthy" doctor --json >"$T/healthy.json"; h=$?
"$BIN" --root "$FX/doctor/acs-redirect" doctor --json >"$T/faulty.json"; f=$?
[ $h -eq 0 ] && [ $f -eq 2 ] && ok "doctor templates: healthy exit 0, acs-redirect exit 2" || nok "templates: $h $f"
python3 tests/fleet/gen.py "$T/healthy.json" "$T/faulty.json" "$T/fleet" || nok "gen.py failed"

# the pdsh stream on stdin, --json, timed (user + system CPU seconds of the report alone)
TIMEFORMAT='%U %S'
cpu=$( { time "$BIN" report --expect 'node[001-512]' --json <"$T/fleet/stream.txt" >"$T/rep.json" 2>"$T/rep.err"; echo "rc=$?" >"$T/rc"; } 2>&1)
rc=$(sed 's/rc=//' "$T/rc")
[ "$rc" = 2 ] && ok "report of 512 nodes: exit 2 (an error finding)" || nok "report exit $rc: $(head -3 "$T/rep.err")"
python3 tests/fleet/check.py "$T/fleet/plan.json" "$T/rep.json" || nok "check.py on the stream report failed (exit $?)"
awk -v c="$cpu" 'BEGIN { split(c, t, " "); exit !(t[1] + t[2] < 1.0) }' &&
	ok "512 nodes ($(du -m "$T/fleet/stream.txt" | cut -f1) MB of pdsh output) in $cpu s CPU (user sys), under 1 s" ||
	nok "512 nodes took $cpu s CPU (user sys)"
# malformed input is also said on stderr, one line each: which source, line, host, why
[ "$(grep -c '^gpup2p report: stdin:[0-9]*: node\(120\|121\|300\): ' "$T/rep.err")" = 3 ] &&
	[ "$(grep -c . "$T/rep.err")" = 3 ] && ok "three malformed entries on stderr, with line and host" ||
	nok "stderr: $(cat "$T/rep.err")"

# the clush --outdir copy: hosts named by the files
"$BIN" report --json "$T/fleet/outdir" >"$T/repd.json" 2>/dev/null; rc=$?
[ $rc -eq 2 ] && ok "the directory: exit 2" || nok "directory exit $rc"
python3 tests/fleet/check.py "$T/fleet/plan.json" "$T/repd.json" --dir || nok "check.py on the directory report failed (exit $?)"

# the table: each planted difference on its line
"$BIN" report --expect 'node[001-512]' <"$T/fleet/stream.txt" >"$T/rep.txt" 2>/dev/null
grep -q '^  acs.redirect  node\[017,230,411\] (3)$' "$T/rep.txt" && ok "table: the error with its host range" ||
	nok "table error line: $(grep -A1 '^errors' "$T/rep.txt")"
grep -q '^missing (sent nothing): node\[200-207,450\] (9)$' "$T/rep.txt" && ok "table: missing nodes" || nok "table missing"
grep -q '^doctor exited 69 (facility unavailable): node099 (1)$' "$T/rep.txt" && ok "table: the node doctor could not check" ||
	nok "table exit 69"
grep -qE '^  node042  24\.[0-9]+ GB/s = 0\.5[0-9] x 48\.[0-9]+  p2p p2p GPU0->GPU1 256M p2p on ce write$' "$T/rep.txt" &&
	grep -qE '^  node333  .* h2d h2d host->GPU0 64M pinned ce$' "$T/rep.txt" && ! grep -q '^  node404 ' "$T/rep.txt" &&
	ok "table: node042 and node333 below, node404 (0.93 x) not" || nok "table below: $(grep -A3 '^below' "$T/rep.txt")"
grep -qE '^summary: 503 hosts, 497 clean; .* 3 error, 0 warning, 0 unknown; 9 missing, 2 below, 3 malformed$' "$T/rep.txt" &&
	ok "table: the summary line" || nok "summary: $(tail -1 "$T/rep.txt")"

# CSV: one row per folded item
"$BIN" report --csv --expect 'node[001-512]' <"$T/fleet/stream.txt" >"$T/rep.csv" 2>/dev/null
python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
k = lambda kind: [r for r in rows if r["kind"] == kind]
assert [(r["id"], r["hosts"], r["count"]) for r in k("finding")] == [("acs.redirect", "node[017,230,411]", "3")], k("finding")
assert [(r["hosts"], r["count"]) for r in k("missing")] == [("node[200-207,450]", "9")]
assert sorted(r["hosts"] for r in k("below")) == ["node042", "node333"]
assert sorted(r["hosts"] for r in k("malformed")) == ["node120", "node121", "node300"]
assert len(k("bench")) == 3 and k("clean")[0]["count"] == "497"' "$T/rep.csv" &&
	ok "CSV: findings, missing, below, malformed, bench and clean rows" || nok "CSV: $(head -5 "$T/rep.csv")"

# real bench output: --jsonl lines and a --json document (indented, several lines), both labelled
"$BIN" bench --size 1M --iters 2 --jsonl >"$T/b1" && "$BIN" bench --size 1M --iters 2 --json >"$T/b2" &&
	{ sed 's/^/gpuA: /' "$T/b1"; sed 's/^/gpuB: /' "$T/b2"; } >"$T/bench.txt" || nok "bench over the test double"
"$BIN" report --json - <"$T/bench.txt" >"$T/rb.json"; rc=$?
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])]
want = {(r["mode"], r["path"], r["src"], r["dst"], r["memory"], r["p2p"], r["op"], r["engine"], r["size"])
        for r in rows if r["gbps"] is not None}
got = {(b["mode"], b["path"], b["src"], b["dst"], b["memory"], b["p2p"], b["op"], b["engine"], b["size"]) for b in d["bench"]}
assert got == want and all(b["count"] == 2 and b["below"] == [] for b in d["bench"]), (len(got), len(want))
assert d["malformed"] == [] and d["hosts"] == 2 and d["exit_status"] == 0' "$T/rb.json" "$T/b1" && [ $rc -eq 0 ] &&
	ok "bench --jsonl and --json from two hosts: every GB/s figure once, two hosts each, exit 0" || nok "bench input: rc=$rc"

# the bench table's allocation (calloc of its 11 column flags) fails: an error (exit 2, out of memory),
# never a report that counts no figure below
{ sed 's/^/n1: /' "$T/b1"; sed 's/^/n2: /' "$T/b1"; sed 's/^/n3: /' "$T/b1" | sed 's/"gbps":[0-9.]*/"gbps":0.01/'; } >"$T/low.txt"
"$BIN" report <"$T/low.txt" >/dev/null 2>&1; rc=$?
if [ $rc -ne 1 ]; then
	nok "three hosts, one slow: exit $rc, want 1 (a figure below)"
elif ${CC:-cc} -shared -fPIC -o "$T/failalloc.so" tests/cli/failalloc.c; then
	out=$(GP_FAIL_CALLOC=11,4 LD_PRELOAD="$T/failalloc.so" "$BIN" report <"$T/low.txt" 2>"$T/oom.err"); rc=$?
	[ $rc -eq 2 ] && grep -qx 'gpup2p: out of memory' "$T/oom.err" && [ -z "$out" ] &&
		ok "the bench table out of memory: exit 2, says so, nothing on stdout" || nok "table out of memory: exit $rc: $out"
else
	nok "cannot build tests/cli/failalloc.c"
fi

# exit codes: a clean fleet 0; a warning 1; nothing read 1
{ sed 's/^/n1: /' "$T/healthy.json"; sed 's/^/n2: /' "$T/healthy.json"; } | "$BIN" report -q >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && ok "two clean nodes: exit 0" || nok "clean exit $rc"
# -v folds the info findings too (the healthy fixture has one: kmod.loaded, gpup2p.ko not loaded)
out=$({ sed 's/^/n1: /' "$T/healthy.json"; sed 's/^/n2: /' "$T/healthy.json"; } | "$BIN" report -v)
grep -q '^  kmod.loaded  n\[1-2\] (2)$' <<<"$out" && grep -q '^      fix: ' <<<"$out" &&
	! { sed 's/^/n1: /' "$T/healthy.json" | "$BIN" report | grep -q kmod.loaded; } &&
	ok "-v: info findings folded, with their fix; not without -v" || nok "-v: $out"
{ sed 's/^/n1: /' "$T/healthy.json"; } | "$BIN" report --expect 'n[1-2]' >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && ok "a missing node: exit 1" || nok "missing exit $rc"
"$BIN" report </dev/null >"$T/empty.txt" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'nothing read' "$T/empty.txt" && ok "no input: exit 1, says nothing was read" || nok "empty: $rc"
printf 'n1: garbage\n' | "$BIN" report >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && ok "only malformed input: exit 1, not fatal" || nok "garbage exit $rc"

# usage errors: one line, exit 64
expect 64 'below' report --below 0
expect 64 'below' report --below 1.5
expect 64 'below' report --below x
expect 64 'expect.*backwards' report --expect 'n[5-1]'
expect 64 'expect.*without' report --expect 'n[1-5'
expect 64 'no --jsonl: it prints text, --json or --csv' report --jsonl
expect 64 'unknown option' report --frobnicate

# a bench row whose strings pass 1 KiB together: the release build once overflowed its stack (exit 139)
python3 -c '
import json
f = {k: k[0].upper() * 600 for k in ("mode", "path", "src", "dst", "memory", "op")}
f.update(p2p="on", engine="ce", size=1024, gbps=1.0)
print("n1: " + json.dumps(f)); f.update(mode="p2p"); print("n2: " + json.dumps(f))' >"$T/long.txt"
"$BIN" report <"$T/long.txt" >"$T/long.out" 2>&1; rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'bench row: "mode" longer than 256 bytes\|bench row: "path" longer than 256 bytes' "$T/long.out")" -ge 2 ] &&
	ok "bench strings over 1 KiB: malformed input, exit 1 (no overflow)" || nok "long bench strings: exit $rc: $(tail -3 "$T/long.out")"

# terminal injection: what another host sent is escaped in text, CSV and on stderr; a "host" member that
# is no host name (ESC, newline, brackets) is malformed input, not a host
python3 - "$T/inj" <<'PY'
import json, os, sys
d = sys.argv[1]
os.makedirs(d + "/dir")
f = {"id": "acs.\u001b[31mredirect", "severity": "error", "subject": "0000:01:00.0\u001b[2K\r",
     "message": "m\u009b1;1H\nclean: node[01-64] (64)\u202e", "fix": "f\u001b]0;pwned\u0007"}
doc = lambda host, fs, **k: json.dumps(dict(host=host, findings=fs, exit_status=2, **k))
with open(d + "/stream", "w") as o:
    print("n1: " + doc("x", [f]), file=o)
    print(doc("evil\u001b[2J", []), file=o)
    print(doc("a\nb", []), file=o)
    print(doc("n[1-2]", []), file=o)
    print("n2: " + json.dumps(dict(host="x", findings=[], exit_status=3, error="no\u001b[8m GPU\x7f")), file=o)
    print("n3: " + json.dumps(dict(mode="p\u001b[1m2p", path="p2p", src="GPU0", dst="GPU1", size=1, gbps=1.0)), file=o)
    print('{"host": "raw\x1b[2Jhost", "findings": [', file=o)
with open(d + "/dir/n4", "w") as o:
    print(doc("x", []), file=o)
with open(d + "/dir/n5\x1b[2J", "w") as o:
    print(doc("x", []), file=o)
PY
ctl() { LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]\|\xe2\x80\xae' "$1"; }
"$BIN" report -v "$T/inj/stream" "$T/inj/dir" >"$T/inj.txt" 2>"$T/inj.err"; rc=$?
"$BIN" report --csv "$T/inj/stream" "$T/inj/dir" >"$T/inj.csv" 2>/dev/null
[ "$(ctl "$T/inj.txt")" = 0 ] && [ "$(ctl "$T/inj.err")" = 0 ] && [ "$(ctl "$T/inj.csv")" = 0 ] && [ $rc -eq 2 ] &&
	ok "text, CSV and stderr carry no control character from the input (exit 2)" ||
	nok "control characters printed: $(ctl "$T/inj.txt") text, $(ctl "$T/inj.err") stderr, $(ctl "$T/inj.csv") CSV (exit $rc)"
grep -qF '  acs.\x1b[31mredirect  n1 (1)' "$T/inj.txt" && grep -qF '      0000:01:00.0\x1b[2K\r: m\u009b1;1H\nclean: node[01-64] (64)\u202e' "$T/inj.txt" &&
	grep -qF '      fix: f\x1b]0;pwned\x07' "$T/inj.txt" && grep -qF '      no\x1b[8m GPU\x7f' "$T/inj.txt" &&
	grep -qF 'p\x1b[1m2p' "$T/inj.txt" && ! grep -q '^clean: node' "$T/inj.txt" &&
	ok "id, subject, message, fix, error and bench names shown escaped; no forged clean line" ||
	nok "escaped text: $(head -20 "$T/inj.txt")"
[ "$(grep -c '"host" is no host name' "$T/inj.txt")" = 3 ] && grep -q "file name that is no host name: 'n5?\[2J'" "$T/inj.txt" &&
	grep -q '^summary: 4 hosts,' "$T/inj.txt" &&
	ok "hosts that are no host names (ESC, newline, brackets, a file name) are malformed, not hosts" ||
	nok "bad hosts: $(grep -A12 '^malformed' "$T/inj.txt"; tail -1 "$T/inj.txt")"
"$BIN" report --json "$T/inj/stream" "$T/inj/dir" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["findings"][0]["subject"] == "0000:01:00.0\x1b[2K\r", d["findings"][0]
assert all(m["host"] is None for m in d["malformed"] if "host" in m["why"] or "file name" in m["why"]), d["malformed"]' &&
	ok "--json keeps the text as sent (JSON escapes it)" || nok "--json of the injection input"

# srun --label cuts a task's output every 1024 bytes, each piece a labelled line of its own
# ("3: " + 1024 bytes); pdsh writes whole lines. The pieces of each task rejoin without a newline,
# interleaved with other tasks' pieces (tests/fleet/test_slurm.sh does it with the real srun).
for i in 0 1 2 3; do
	src=$FX/doctor/healthy
	[ $((i % 2)) = 1 ] && src=$FX/doctor/bar-small
	cp -a "$src" "$T/srun$i"
	echo "gpn$i" >"$T/srun$i/proc/sys/kernel/hostname"
	"$BIN" --root "$T/srun$i" doctor --json >"$T/srun$i.json"
done
python3 - "$T"/srun?.json >"$T/srun.txt" <<'PY'
import sys
pieces = []
for t, p in enumerate(sys.argv[1:]):
    line = open(p).read().rstrip("\n")
    pieces.append(["%d: %s" % (t, line[i:i + 1024]) for i in range(0, len(line), 1024)])
while any(pieces):  # round robin, as tasks' output arrives
    for q in pieces:
        if q:
            print(q.pop(0))
PY
"$BIN" report --json <"$T/srun.txt" >"$T/srun.rep"; rc=$?
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["malformed"] == [] and r["doctor_hosts"] == 4, r["malformed"]
e = [f for f in r["findings"] if f["severity"] == "error"]
assert len(e) == 1 and e[0]["hosts"] == "gpn[1,3]", e' "$T/srun.rep" && [ $rc = 2 ] &&
	ok "srun --label's 1024-byte pieces rejoined: 4 hosts, the errors on gpn[1,3], exit 2" ||
	nok "srun pieces: exit $rc: $(head -c 400 "$T/srun.rep")"

# numbers are checked: exit_status 1e300 once became INT_MIN and that host clean; size 1e30 printed as 0
printf '%s\n' 'n1: {"host":"x","findings":[],"exit_status":1e300}' \
	'n2: {"mode":"p2p","path":"p2p","src":"GPU0","dst":"GPU1","size":1e30,"gbps":5}' >"$T/num.txt"
"$BIN" report <"$T/num.txt" >"$T/num.out" 2>/dev/null; rc=$?
[ $rc -eq 1 ] && ! grep -q '^clean' "$T/num.out" && ! grep -q '^bench' "$T/num.out" &&
	grep -q 'stdin:1  n1  "exit_status" is no exit status' "$T/num.out" && grep -q 'stdin:2  n2  bench row: "size" is no size' "$T/num.out" &&
	ok "exit_status 1e300 and size 1e30: malformed input, no clean host, no figure, exit 1" || nok "numbers: exit $rc: $(cat "$T/num.out")"
# ... and a usage error does not echo a control character either (found by the report fuzz target)
err=$("$BIN" report --expect $'n\e2J' 2>&1 >/dev/null); rc=$?
[ $rc -eq 64 ] && grep -qF "bad character '\\x1b'" <<<"$err" && ! grep -q $'\e' <<<"$err" &&
	ok "--expect with ESC: usage error, the ESC escaped" || nok "--expect ESC: exit $rc: $err"
