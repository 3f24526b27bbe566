#!/bin/bash
# gpup2p doctor on a GPU machine (device tool, a single-GPU kind), run from the repository root with
# build/gpup2p and build/devlibs carried. Live run (text, -v, --json), its exit code, a snapshot of the
# machine and doctor on it (which findings differ between live and offline), and the wall time of
# static doctor against nvidia-smi -q (median of 7 alternating runs). Output: $OUT/doctor.log.
set -u
. tests/device/lib.sh
device_setup doctor.log
BIN=$PWD/build/gpup2p

echo "== machine"; uname -r; nvidia-smi -L; id -u
echo "== gpup2p doctor"; "$BIN" doctor; rc=$?; echo "rc=$rc"
echo "== gpup2p doctor -v"; "$BIN" doctor -v
"$BIN" doctor --json --pretty >"$OUT/doctor.json"
check "doctor --json is valid JSON" 'python3 -m json.tool "$OUT/doctor.json" >/dev/null'
check "doctor: no error on this machine (rc $rc)" '[ "$rc" -le 1 ]'
rm -rf /tmp/snap && "$BIN" -q snapshot --dir /tmp/snap
echo "== gpup2p --root SNAPSHOT doctor -v"; "$BIN" --root /tmp/snap doctor -v
"$BIN" --root /tmp/snap doctor --json --pretty >"$OUT/doctor-snap.json"
cp /tmp/snap/gpup2p/snapshot-info "$OUT/"
python3 - "$OUT/doctor.json" "$OUT/doctor-snap.json" >"$OUT/live-vs-snapshot.txt" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda d: {(f["id"], f["subject"]): (f["severity"], f["evidence"]) for f in d["findings"]}
ka, kb = key(a), key(b)
# checks that say "live only" offline (libcuda, process limits, BAR1 use) are not compared; driver.version's
# live-only evidence (the dma-buf mmap probe, cuDriverGetVersion) is left out of its comparison
live_only = {f["id"] for f in b["findings"] if f["severity"] == "skipped" and "live only" in f["message"]}
drop = {"dma-buf cpu mmap", "cuDriverGetVersion"}
strip = lambda v: v and (v[0], {k: x for k, x in v[1].items() if k not in drop})
bad = 0
for k in sorted(set(ka) | set(kb)):
    if strip(ka.get(k)) != strip(kb.get(k)):
        lo = k[0] in live_only
        bad += not lo
        print("live/offline differ%s: %s %s: live %s, snapshot %s" % (" (live only)" if lo else "", k[0], k[1],
                                                                       ka.get(k), kb.get(k)))
print("host: live %s, snapshot %s" % (a["host"], b["host"]))
sys.exit(1 if bad or a["host"] != b["host"] else 0)
PY
live_same=$?
cat "$OUT/live-vs-snapshot.txt"
check "doctor on its own snapshot: same severity and evidence for every static finding, same host" '[ $live_same -eq 0 ]'
echo "== timing (s): doctor, nvidia-smi -q"
for i in 1 2 3 4 5 6 7; do echo "$(wall "$BIN" doctor) $(wall nvidia-smi -q)"; done | tee "$OUT/timing.txt"
sort -n -k1 "$OUT/timing.txt" | sed -n 4p | awk '{print "median doctor " $1}'
sort -n -k2 "$OUT/timing.txt" | sed -n 4p | awk '{print "median nvidia-smi -q " $2}'
echo "PASS $pass FAIL $fail"
