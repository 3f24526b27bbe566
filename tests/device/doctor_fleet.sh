#!/bin/bash
# gpup2p doctor's formats for machines on a GPU machine (device tool), run from the repository root
# with build/gpup2p and build/devlibs carried: --json (one line, under 64 KiB, boot_id and host of
# this boot), --active --prometheus (valid exposition format with the measured copy rates labelled
# with the GPU's number and UUID as nvidia-smi names them), --nagios, the contrib health checks, and
# how long the static doctor takes (Slurm kills a HealthCheckProgram at 60 s). Output: $OUT/doctor_fleet.log.
set -u
. tests/device/lib.sh
device_setup doctor_fleet.log
BIN=$PWD/build/gpup2p
export GPUP2P=$BIN

echo "== machine"; uname -r; nvidia-smi -L
echo "== static doctor, wall time"
for i in 1 2 3; do wall "$BIN" doctor; done | tee "$OUT/static.times"
check "static doctor under 10 s, far below slurmd's 60 s ($(tr '\n' ' ' <"$OUT/static.times"))" \
	'awk "\$1 >= 10 { bad = 1 } END { exit bad }" "$OUT/static.times"'

"$BIN" doctor --json >"$OUT/doctor.json"; rc=$?
check "--json: one line under 64 KiB, exit_status $rc, boot_id and host of this boot" 'python3 - "$OUT/doctor.json" "$rc" <<PY
import json, socket, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw)
assert raw.count(b"\n") == 1 and len(raw) < 65536, len(raw)
assert d["exit_status"] == int(sys.argv[2]), d["exit_status"]
assert d["boot_id"] == open("/proc/sys/kernel/random/boot_id").read().strip(), d["boot_id"]
assert d["host"] == open("/proc/sys/kernel/hostname").read().strip(), d["host"]
print("size", len(raw), "truncated", d["truncated"], "summary", d["summary"])
PY'

echo "== doctor --active --prometheus"
"$BIN" doctor --active --prometheus >"$OUT/doctor.prom"; rc=$?
grep -E "^gpup2p_(copy|doctor)" "$OUT/doctor.prom"
check "--prometheus: valid exposition format (tests/cli/prom_check.py)" 'python3 tests/cli/prom_check.py "$OUT/doctor.prom"'
nvidia-smi --query-gpu=index,uuid --format=csv,noheader | tr -d ' ' >"$OUT/uuids"
check "--prometheus --active: host<->GPU rates of every GPU, gpu and UUID labels as nvidia-smi's" 'python3 - "$OUT/doctor.prom" "$OUT/uuids" <<PY
import re, sys
gpus = dict(l.strip().split(",") for l in open(sys.argv[2]) if l.strip())
seen = set()
for l in open(sys.argv[1]):
    m = re.match(r"^gpup2p_copy_bandwidth_bytes_per_second\{gpu=\"(\d+)\",UUID=\"([^\"]*)\",src=\"(\w+)\",dst=\"(\w+)\"\} (\S+)$", l)
    if m:
        g, u, s, d, v = m.groups()
        assert gpus[g] == u, (g, u, gpus[g])
        assert 1e9 < float(v) < 1e12, v
        seen.add((g, s, d))
for g in gpus:
    assert (g, "host", g) in seen and (g, g, "host") in seen, (g, seen)
PY'
"$BIN" doctor --nagios; rcn=$?
check "--nagios: exit 0-2 ($rcn)" '[ "$rcn" -le 2 ]'
out=$(contrib/npd/gpup2p-doctor-npd); rcp=$?
check "npd plugin: exit $rcp ($out)" '[ "$rcp" -le 1 ]'
echo "pass=$pass fail=$fail"
[ "$fail" = 0 ]
