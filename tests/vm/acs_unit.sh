#!/bin/bash
# The ACS boot unit in a guest booted with systemd (tests/vm/sdguest.sh) on the "pcie" topology
# (tests/vm/topo-pcie.args: four root ports whose ACS the kernel enables, intel_iommu=on iommu=pt):
# gpup2p-acs.service enabled, stubs of nvidia-persistenced and slurmd, and a check service that runs
# tests/vm/guest_acs_unit.sh after boot. Prints the guest's ok/not ok lines. Needs build/gpup2p and
# the harness (make check-vm sets it up).
set -u
. tests/vm/sdguest.sh ws-acsunit
sdguest_prepare || exit 1
ln -s /lib/systemd/system/gpup2p-acs.service "$E/multi-user.target.wants/gpup2p-acs.service"
echo 'GPUP2P_ACS_OPTS="--match 1af4:1110"' >"$O/etc/default/gpup2p-acs"
# stubs of GPU services: each copies the ACS state file (or "none") when it starts
for s in nvidia-persistenced slurmd; do
	rm -f "$E/$s.service" # (masked: this host's own)
	printf '[Unit]\nDescription=stub %s\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c "cp %s /run/%s-saw || echo none >/run/%s-saw"\n[Install]\nWantedBy=multi-user.target\n' \
		"$s" /run/gpup2p/acs.state "$s" "$s" >"$E/$s.service"
	ln -s "../$s.service" "$E/multi-user.target.wants/$s.service"
done
sdguest_check tests/vm/guest_acs_unit.sh "multi-user.target gpup2p-acs.service nvidia-persistenced.service slurmd.service"
sdguest_boot topo-pcie.args "intel_iommu=on iommu=pt" "${1:-600}"
