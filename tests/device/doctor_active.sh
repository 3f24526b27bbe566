#!/bin/bash
# gpup2p doctor --active on a GPU machine (device tool, a single-GPU kind), run from the repository root
# with build/gpup2p and build/devlibs carried. On one GPU: p2p.verify checks host<->GPU copies (no
# pair), p2p.bandwidth times them against the GPU's PCIe link, p2p.access and p2p.nvml_status say
# "one GPU: no pair". On N >= 2 GPUs (a healthy machine, issue 16): p2p.access says "P2P access both
# ways" for each of the N(N-1)/2 pairs, nothing in p2p.* or nvlink.* warns or errs, p2p.verify and
# p2p.bandwidth are ok for every subject. Without --active the active checks are skipped (not
# requested). Output: $OUT/doctor_active.log, $OUT/doctor-active.json (and doctor-active-all.json).
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
"$BIN" doctor --active --only p2p,nvlink --json --pretty >"$OUT/doctor-active-all.json"
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
check "doctor --only p2p without --active: exit 0 (rc $rc0)" '[ "$rc0" = 0 ]'
check "doctor --active: no error (rc $rc)" '[ "$rc" -le 1 ]'
check "doctor --active --only p2p: exit 0, no warning (rc $rcj)" '[ "$rcj" = 0 ]'
python3 - "$OUT/doctor-p2p.json" "$OUT/doctor-active.json" "$ngpu" "$OUT/doctor-active-all.json" <<'PY'
import json, sys
static, active = (json.load(open(p)) for p in sys.argv[1:3])
ngpu, every = int(sys.argv[3]), json.load(open(sys.argv[4]))
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
v, b = by_id(active, "p2p.verify"), by_id(active, "p2p.bandwidth")
want(ngpu >= 1, "nvidia-smi -L lists %d GPU(s)" % ngpu)
if ngpu <= 1:
    for i in ("p2p.access", "p2p.nvml_status"):
        s = by_id(active, i)
        want(len(s) == 1 and s[0]["severity"] == "skipped" and "one GPU" in s[0]["message"], i + ": one GPU, no pair")
    want(len(v) == 1 and v[0]["severity"] == "ok" and "every byte as sent" in v[0]["message"], "p2p.verify: host<->GPU copies verified")
    want(len(b) == 1 and b[0]["severity"] == "ok" and "expected" in b[0]["evidence"], "p2p.bandwidth: host<->GPU at least half the link's rate")
else:
    pairs = ngpu * (ngpu - 1) // 2
    a = by_id(active, "p2p.access")
    want(len(a) == pairs and all(f["severity"] == "ok" and "both ways" in f["message"] and len(f["bdf"]) == 2 for f in a),
         "p2p.access: %d pair(s), each 'P2P access both ways'" % pairs)
    ns = by_id(active, "p2p.nvml_status")
    want(ns and all(f["severity"] in ("ok", "info") for f in ns), "p2p.nvml_status: %d finding(s), NVML agrees with CUDA on every pair" % len(ns))
    want(len(v) >= pairs and all(f["severity"] == "ok" and "every byte as sent" in f["message"] for f in v),
         "p2p.verify: %d subject(s) (every pair both ways, host<->GPU), every byte as sent" % len(v))
    want(len(b) >= pairs and all(f["severity"] == "ok" for f in b), "p2p.bandwidth: %d subject(s), each at least half its link's rate" % len(b))
    nv = [f for f in every["findings"] if f["id"].startswith("nvlink.")]
    want(nv and all(f["severity"] in ("ok", "info", "skipped") for f in nv), "nvlink.*: %d finding(s), none warns or errs" % len(nv))
for f in v + b:
    want(float(f["evidence"].get("seconds", "99")) < 10, "%s took %s s (< 10)" % (f["id"], f["evidence"].get("seconds")))
sys.exit(1 if bad else 0)
PY
py=$?
check "p2p findings as expected on $ngpu GPU(s)" '[ $py -eq 0 ]'
echo "PASS $pass FAIL $fail"
