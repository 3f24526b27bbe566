#!/bin/bash
# contrib/slurm/gpup2p-healthcheck under the real slurmd (issue 29), and srun --label into report:
# munged, slurmctld and slurmd from Debian on one node (gpn1) in private namespaces; gpup2p and
# contrib installed by `make install` at /usr/local, its settings in /etc/default/gpup2p (no PATH, no
# environment: as slurmd runs it). Fixture roots stand in for a faulty (bar-small) and a healthy GPU
# node. Checks: the drain with the check's reason, the resume, an administrator's reason kept, a hung
# doctor killed and the node drained, and srun's 1024-byte pieces of doctor --json and of bench --jsonl
# rows rejoined by report.
set -u
BUILD=${BUILD:-build}
. tests/cli/lib.sh
. tests/fleet/lib.sh
fleet_ns "$0"
FX=$PWD/$BUILD/fixtures
D=$FX/doctor
T=$(mktemp -d /tmp/gpup2p-slurm.XXXXXX)
chmod 755 "$T"
stop() {
	stop_pidfile "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"
	rm -rf "$T"
}
trap stop EXIT
echo "# $(slurmctld -V), $(munged -V 2>&1 | head -1)"

fleet_net gpn1
fleet_etc_default
fleet_install && [ -x /usr/local/bin/gpup2p ] && [ -x /usr/local/share/gpup2p/contrib/slurm/gpup2p-healthcheck ] &&
	ok "make install: gpup2p and contrib/slurm/gpup2p-healthcheck under /usr/local" ||
	{ nok "make install: $(tail -3 "$T/install.log")"; exit 0; }

# conf ROOT [LINES]: /etc/default/gpup2p for the next health check
conf() {
	{ echo "GPUP2P_ROOT=$1"; echo "GPUP2P_LOCK=$T/hc.lock"; echo "${2:-}"; } >/etc/default/gpup2p
}
conf "$D/healthy"

mkdir -p "$T/munge" "$T/spool" "$T/state" "$T/log"
chmod 755 "$T/munge"
head -c 1024 /dev/urandom >"$T/munge/munge.key"
chmod 400 "$T/munge/munge.key"
munged --key-file "$T/munge/munge.key" --socket "$T/munge/munge.socket" --pid-file "$T/munge/munged.pid" \
	--log-file "$T/munge/munged.log" --seed-file "$T/munge/seed" 2>"$T/munge/err" ||
	{ nok "munged: $(cat "$T/munge/err")"; exit 0; }
# scontrol in the health check (slurmd passes no SLURM_CONF) reads /etc/slurm/slurm.conf: ours
mkdir -p "$T/etc-slurm"
mount --bind "$T/etc-slurm" /etc/slurm
cat >/etc/slurm/slurm.conf <<EOF
ClusterName=gpup2p
SlurmctldHost=gpn1(10.77.0.1)
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
SlurmUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
ReturnToService=2
MpiDefault=none
HealthCheckProgram=/usr/local/share/gpup2p/contrib/slurm/gpup2p-healthcheck
HealthCheckInterval=2
HealthCheckNodeState=ANY
NodeName=gpn1 NodeAddr=10.77.0.1 CPUs=2 State=UNKNOWN
PartitionName=p Nodes=gpn1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
slurmctld && slurmd &&
	wait_for 30 eval 'sinfo -h -o %T 2>/dev/null | grep -qx idle' &&
	ok "slurmctld and slurmd up, gpn1 idle (healthy fixture)" ||
	{ nok "slurm did not come up: $(sinfo 2>&1 | tail -2) $(tail -3 "$T"/log/*.log)"; exit 0; }

# the node's state and reason as scontrol shows them
state() { scontrol show node gpn1 | sed -n 's/^ *State=\([^ ]*\).*/\1/p'; }
reason() { scontrol show node gpn1 | sed -n 's/^ *Reason=\(.*\) \[[^]]*\] *$/\1/p'; }
drained_for() { [[ $(state) == *DRAIN* ]] && [ "$(reason)" = "$1" ]; }
undrained() { [[ $(state) != *DRAIN* ]] && [ -z "$(reason)" ]; }
logged() { grep -qF -- "$1" "$T/log/slurmd.log"; }

# --- srun --label: doctor --json of 6 nodes, each line cut into 1024-byte pieces ------------------
for i in 0 1 2 3 4 5; do
	src=$D/healthy
	[ $((i % 2)) = 1 ] && src=$D/bar-small
	cp -a "$src" "$T/node$i"
	echo "gpn$i" >"$T/node$i/proc/sys/kernel/hostname"
done
srun -n6 -O --label bash -c "/usr/local/bin/gpup2p --root $T/node\$SLURM_PROCID doctor --json" \
	>"$T/srun.txt" 2>"$T/srun.err"
pieces=$(grep -c '^[0-5]: .\{1024\}$' "$T/srun.txt")
[ "$pieces" -gt 6 ] && ok "srun --label cut doctor --json into $pieces labelled 1024-byte pieces" ||
	nok "srun output: $pieces pieces of 1024 bytes; $(head -c 300 "$T/srun.err")"
/usr/local/bin/gpup2p report --json <"$T/srun.txt" >"$T/report.json"
rc=$?
python3 - "$T/report.json" <<'EOF' && [ $rc = 2 ] && ok "report on srun's output: 6 hosts, none malformed, bar.small on gpn[1,3,5], exit 2" ||
import json, sys
r = json.load(open(sys.argv[1]))
assert r["malformed"] == [] and r["hosts"] == 6 and r["doctor_hosts"] == 6, (r["malformed"], r["hosts"])
err = [f for f in r["findings"] if f["severity"] == "error"]
assert [f["id"] for f in err] == ["bar.small"] and err[0]["hosts"] == "gpn[1,3,5]", err
EOF
	nok "report on srun's output: exit $rc: $(head -c 600 "$T/report.json")"

# --- srun --label: bench --jsonl over the CUDA test double, rows over 1 KiB -----------------------
# bench's rows are about 400 bytes (414 at most, 8 GPUs, every pattern); srun's labels are task numbers,
# which name no host, so each row carries its own. Each task names its row's host as a node of its own
# (gpnN: four hosts from one machine) and adds a 1,200-byte member, as a longer row would be, so that
# srun cuts each one; report must read every row.
FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
BENCH=(bench --size 64K --iters 2 --reps 3 --jsonl)
cat >"$T/widen.py" <<'EOF'
import json, sys
for line in sys.stdin:
    row = json.loads(line)
    row["host"], row["pad"] = sys.argv[1], "x" * 1200
    print(json.dumps(row), flush=True)
EOF
GPUP2P_LIBCUDA=$FAKE /usr/local/bin/gpup2p "${BENCH[@]}" >"$T/bench-own.jsonl"
srun -n4 -O --label env GPUP2P_LIBCUDA="$FAKE" bash -c \
	"/usr/local/bin/gpup2p ${BENCH[*]} | python3 $T/widen.py gpn\$SLURM_PROCID" >"$T/bench-srun.txt" 2>"$T/bench-srun.err"
rows=$(grep -c . "$T/bench-own.jsonl")
cut=$(grep -c '^[0-3]: .\{1024\}$' "$T/bench-srun.txt")
[ "$rows" -gt 20 ] && [ "$cut" -ge $((4 * rows)) ] && ! grep -qv '^[0-3]: ' "$T/bench-srun.txt" &&
	ok "srun --label cut each of 4x$rows bench rows (over 1 KiB) into labelled pieces ($cut of 1024 bytes)" ||
	nok "bench through srun: $rows rows, $cut pieces of 1024 bytes; $(head -c 300 "$T/bench-srun.err")"
/usr/local/bin/gpup2p report --json <"$T/bench-srun.txt" >"$T/bench-report.json"
rc=$?
python3 - "$T/bench-report.json" "$T/bench-own.jsonl" <<'EOF' && [ $rc = 0 ] &&
import json, sys
r = json.load(open(sys.argv[1]))
own = [json.loads(line) for line in open(sys.argv[2])]
key = ("mode", "path", "src", "dst", "size", "memory", "p2p", "op", "engine")
want = {tuple(x[k] for k in key): x["gbps"] for x in own if x["gbps"] is not None}
got = {tuple(b[k] for k in key): b for b in r["bench"]}
assert r["malformed"] == [] and r["hosts"] == 4, (r["malformed"][:2], r["hosts"])
assert set(got) == set(want), (len(got), len(want))
# the double's clock makes every host's figure the same: the median is bench's own
assert all(b["count"] == 4 and b["median_gbps"] == want[k] and b["below"] == [] for k, b in got.items())
EOF
	ok "report on srun's bench output: every row of 4 hosts read, none malformed, the figures bench printed" ||
	nok "report on srun's bench output: exit $rc: $(head -c 600 "$T/bench-report.json")"

# --- the health check, as slurmd runs it --------------------------------------------------------
conf "$D/bar-small"
wait_for 30 drained_for "gpup2p: bar.small 0000:13:00.0" &&
	ok "an error: slurmd's health check drained gpn1, reason 'gpup2p: bar.small 0000:13:00.0'" ||
	nok "no drain: $(state) '$(reason)'"
wait_for 10 logged "health_check failed: rc:1 output:gpup2p-healthcheck: gpn1: drained: gpup2p: bar.small" &&
	ok "slurmd's log has the one line it printed" || nok "slurmd.log: $(grep -i health "$T/log/slurmd.log" | tail -2)"
conf "$D/healthy"
wait_for 30 undrained && ok "healthy again: gpn1 resumed (the reason was its own)" || nok "no resume: $(state) '$(reason)'"

# an administrator's drain: its reason stays through an error, and no resume when healthy
scontrol update NodeName=gpn1 State=DRAIN Reason="PSU swap ticket 4711"
conf "$D/bar-small"
wait_for 30 logged "kept the reason 'PSU swap ticket 4711'" && drained_for "PSU swap ticket 4711" &&
	ok "an error on a node the administrator drained: 'PSU swap ticket 4711' kept" ||
	nok "admin reason: $(state) '$(reason)'"
printf '#!/bin/sh\necho run >>%s/runs\nexec /usr/local/bin/gpup2p "$@"\n' "$T" >"$T/counting"
chmod +x "$T/counting"
conf "$D/healthy" "GPUP2P=$T/counting"
wait_for 30 eval '[ "$(cat "$T/runs" 2>/dev/null | grep -c .)" -ge 2 ]' && drained_for "PSU swap ticket 4711" &&
	ok "healthy again: the administrator's drain not resumed ($(grep -c . "$T/runs") runs)" ||
	nok "admin drain after healthy runs: $(state) '$(reason)'"
scontrol update NodeName=gpn1 State=RESUME

# a doctor deaf to SIGTERM: killed after the kill-after, the node drained in time
printf '#!/bin/bash\ntrap "" TERM\necho $$ >>%s/hung.pids\nsleep 50\n' "$T" >"$T/hung"
chmod +x "$T/hung"
conf "$D/healthy" "GPUP2P=$T/hung
GPUP2P_TIMEOUT=1
GPUP2P_KILL_AFTER=1"
wait_for 30 drained_for "gpup2p: doctor timed out after 1 s" && ok "a hung doctor: gpn1 drained, 'timed out after 1 s'" ||
	nok "timeout: $(state) '$(reason)'"
conf "$D/healthy"
wait_for 30 undrained && ok "then healthy: resumed" || nok "after timeout: $(state) '$(reason)'"
left=""
while read -r p; do alive "$p" && left="$left $p"; done <"$T/hung.pids"
[ -z "$left" ] && ok "every hung doctor was killed ($(grep -c . "$T/hung.pids") runs)" || nok "still running:$left"

pids="$(cat "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid")"
stop_pidfile "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"
left=""
for p in $pids; do alive "$p" && left="$left $p"; done
[ -z "$left" ] && ok "slurmd, slurmctld and munged stopped" ||
	nok "daemons still running:$left"
