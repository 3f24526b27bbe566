#!/bin/bash
# gpup2p doctor --active on a GPU machine (device tool, a single-GPU kind), run from the repository root
# with build/gpup2p and build/devlibs carried. On one GPU: p2p.verify checks host<->GPU copies (no
# pair), p2p.bandwidth times them against the GPU's PCIe link, p2p.access and p2p.nvml_status say
# "one GPU: no pair"; without --active the active checks are skipped (not requested). Output:
# $OUT/doctor_active.log, $OUT/doctor-active.json.
set -u
. tests/device/lib.sh
device_setup doctor_active.log
BIN=$PWD/build/gpup2p

echo "== machine"; uname -r; nvidia-smi -L; nvidia-smi -q | grep -iE "Link (Gen|Width)" -A2 | head -12
echo "== gpup2p doctor --only p2p -v"; "$BIN" doctor --only p2p -v; rc0=$?
"$BIN" doctor --only p2p --json --pretty >"$OUT/doctor-p2p.json"
echo "== gpup2p doctor --active -v"
t0=$SECONDS
"$BIN" doctor --active -v; rc=$?
echo "rc=$rc, $((SECONDS - t0)) s"
"$BIN" doctor --active --only p2p --json --pretty >"$OUT/doctor-active.json"; rcj=$?
check "doctor --only p2p without --active: exit 0 (rc $rc0)" '[ "$rc0" = 0 ]'
check "doctor --active: no error (rc $rc)" '[ "$rc" -le 1 ]'
check "doctor --active --only p2p: exit 0, no warning (rc $rcj)" '[ "$rcj" = 0 ]'
python3 - "$OUT/doctor-p2p.json" "$OUT/doctor-active.json" <<'PY'
import json, sys
static, active = (json.load(open(p)) for p in sys.argv[1:3])
def by_id(d, i): return [f for f in d["findings"] if f["id"] == i]
bad = 0
def want(cond, what):
    global bad
    print(("PASS " if cond else "FAIL ") + what)
    bad += not cond
for f in active["findings"]:
    print("  %-16s %-8s %-28s %s | %s" % (f["id"], f["severity"], f["subject"], f["message"], f["evidence"]))
for i in ("p2p.verify", "p2p.bandwidth"):
    s = by_id(static, i)
    want(len(s) == 1 and s[0]["severity"] == "skipped" and "not requested" in s[0]["message"], i + " without --active: skipped, not requested")
for i in ("p2p.access", "p2p.nvml_status"):
    s = by_id(active, i)
    want(len(s) == 1 and s[0]["severity"] == "skipped" and "one GPU" in s[0]["message"], i + ": one GPU, no pair")
v = by_id(active, "p2p.verify")
want(len(v) == 1 and v[0]["severity"] == "ok" and "every byte as sent" in v[0]["message"], "p2p.verify: host<->GPU copies verified")
b = by_id(active, "p2p.bandwidth")
want(len(b) == 1 and b[0]["severity"] == "ok" and "expected" in b[0]["evidence"], "p2p.bandwidth: host<->GPU at least half the link's rate")
for f in v + b:
    want(float(f["evidence"].get("seconds", "99")) < 10, "%s took %s s (< 10)" % (f["id"], f["evidence"].get("seconds")))
sys.exit(1 if bad else 0)
PY
py=$?
check "p2p findings as expected on one GPU" '[ $py -eq 0 ]'
echo "PASS $pass FAIL $fail"
