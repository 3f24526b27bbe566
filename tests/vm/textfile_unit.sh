#!/bin/bash
# gpup2p-textfile.timer and .service (systemd/) under a real systemd: a guest booted with systemd as
# PID 1 (tests/vm/sdguest.sh), the units installed by `make install PREFIX=/usr`, disabled as shipped,
# and a drop-in that shortens the timer's schedule to seconds; tests/vm/guest_textfile_unit.sh starts
# the timer and follows the runs it makes. Prints the guest's ok/not ok lines. Needs build/gpup2p,
# the doctor fixtures and the harness (make check-vm sets them up).
set -u
. tests/vm/sdguest.sh ws-textfile
sdguest_prepare || exit 1
# the shipped schedule (1 min after boot, then every 5 min, 30 s randomized) in seconds: the first run
# 1 s after the timer starts, then 20 s after each run began (a run takes seconds under TCG)
mkdir -p "$E/gpup2p-textfile.timer.d"
printf '[Timer]\nOnBootSec=\nOnUnitActiveSec=\nRandomizedDelaySec=0\nAccuracySec=1s\nOnActiveSec=1s\nOnUnitActiveSec=20s\n' \
	>"$E/gpup2p-textfile.timer.d/test.conf"
sdguest_check "tests/vm/guest_textfile_unit.sh $BUILD" multi-user.target
sdguest_boot topo-pcie.args "" "${1:-600}"
