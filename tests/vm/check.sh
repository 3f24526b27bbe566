#!/bin/bash
# make check-vm: prepare the guest harness, boot each guest topology, print the checks its script made,
# and check the guest's kernel log for BUG/WARNING/Oops. Last line: "N passed, N failed".
set -u
BUILD=${BUILD:-build}
export BUILD
bash tests/vm/setup.sh || { echo "0 passed, 1 failed (vm setup)"; exit 1; }
bash tests/vm/build-kmod.sh || { echo "0 passed, 1 failed (building the modules)"; exit 1; }
pass=0 fail=0
# kernel style: no line of the driver or the stub over 100 columns (tabs as 8)
long=$(python3 - kmod/*.[ch] kmod/uapi/*.h tests/vm/nvp2p_stub/*.[ch] <<'PY'
import sys
for f in sys.argv[1:]:
    for i, l in enumerate(open(f, encoding="utf-8"), 1):
        if len(l.rstrip("\n").expandtabs(8)) > 100:
            print(f"{f}:{i}")
PY
)
if [ -z "$long" ]; then
	echo "ok - kmod/ and the stub: no line over 100 columns"
	pass=$((pass + 1))
else
	echo "not ok - lines over 100 columns: $long"
	fail=$((fail + 1))
fi
out=$(bash tests/vm/test_dkms.sh)
echo "$out" | sed 's/^/[dkms] /'
pass=$((pass + $(grep -c '^ok ' <<<"$out")))
fail=$((fail + $(grep -c '^not ok ' <<<"$out")))
# guest NAME on the harness folder $GPUP2P_VM: boot, collect the checks, check dmesg, host checks
guest() {
	local start=$(date +%s)
	# a hang guard only: on a loaded 2-core machine under TCG a guest has taken 400 s
	bash tests/vm/run.sh "$1" "tests/vm/guest_$1.sh" 900
	collect "$1" $? "$start"
}
# collect NAME RC START [LABEL]: what guest NAME's script said (run.sh exit RC), dmesg, host checks
collect() {
	local g=$1 rc=$2 start=$3 label=${4:-$1} ws out
	ws=$BUILD/${GPUP2P_VM:-vm}/ws-$g
	out=$(cat "$ws/out.txt" 2>/dev/null)
	# a guest whose script ran no check (it could not start, or wrote elsewhere) fails, never passes empty
	grep -q '^ok ' <<<"$out" || out+=$'\n'"not ok - guest $g: its script printed no ok line ($ws/out.txt)"
	if [ -s "$ws/dmesg.txt" ] && ! grep -qE "BUG:|WARNING:|Oops|Call Trace|general protection" "$ws/dmesg.txt"; then
		out+=$'\n'"ok - guest $g: dmesg has no BUG/WARNING/Oops"
	else
		out+=$'\n'"not ok - guest $g: dmesg missing or shows a kernel problem"
		grep -E "BUG:|WARNING:|Oops|Call Trace" "$ws/dmesg.txt" 2>/dev/null | head -5 | sed 's/^/#   /'
	fi
	[ "$rc" -eq 2 ] && out+=$'\n'"not ok - guest $g did not finish"
	[ -f "tests/vm/host_$g.sh" ] && out+=$'\n'"$(bash "tests/vm/host_$g.sh")"
	echo "$out" | sed "s/^/[$label${GPUP2P_VM:+ $GPUP2P_VM}] /"
	echo "# guest $label${GPUP2P_VM:+ ($GPUP2P_VM)}: $(($(date +%s) - start)) s, kernel $(cat "$BUILD/${GPUP2P_VM:-vm}/kver")"
	pass=$((pass + $(grep -c '^ok ' <<<"$out")))
	fail=$((fail + $(grep -c '^not ok ' <<<"$out")))
}
for g in pcie kmod nopat rdma; do
	guest "$g"
done
# pair SCRIPT LABEL: the two guests joined by a virtual link (topo-pair0/1: UDP on 127.0.0.1), booted
# side by side, both running SCRIPT
pair() {
	local start=$(date +%s) p0 p1 rc0 rc1
	export GPUP2P_VM_PORT0=$((20000 + RANDOM % 20000))
	export GPUP2P_VM_PORT1=$((GPUP2P_VM_PORT0 + 1))
	bash tests/vm/run.sh pair0 "$1" 900 &
	p0=$!
	bash tests/vm/run.sh pair1 "$1" 900 &
	p1=$!
	wait $p0
	rc0=$?
	wait $p1
	rc1=$?
	collect pair0 $rc0 "$start" "pair0 $2"
	collect pair1 $rc1 "$start" "pair1 $2"
}
pair tests/vm/guest_pair.sh rxe
# gpup2p bench rdma in the pair: loopback, client/server, its error paths
pair tests/vm/guest_rdmabench.sh "bench rdma"
# the driver on the oldest kernel it supports: Debian 11's 5.10 (kernel and headers fetched, not installed)
export GPUP2P_VM=vm-bullseye
if GPUP2P_VM_SUITE=bullseye bash tests/vm/setup.sh && bash tests/vm/build-kmod.sh; then
	guest kmod
else
	echo "not ok - the bullseye (5.10) guest could not be prepared"
	fail=$((fail + 1))
fi
unset GPUP2P_VM
# sdunit LABEL SCRIPT: a guest booted with systemd (tests/vm/sdguest.sh): the ACS boot unit, the
# textfile timer and service
sdunit() {
	local out
	out=$(bash "$2" 1500)   # minutes under TCG; more when the host is loaded (textfile_unit.sh)
	echo "$out" | sed "s/^/[$1] /"
	pass=$((pass + $(grep -c '^ok ' <<<"$out")))
	fail=$((fail + $(grep -c '^not ok ' <<<"$out")))
}
sdunit acs-unit tests/vm/acs_unit.sh
sdunit textfile-unit tests/vm/textfile_unit.sh
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
