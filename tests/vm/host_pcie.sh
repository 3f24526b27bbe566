#!/bin/bash
# After the "pcie" guest: its snapshot, replayed on the host, prints what gpup2p printed in the guest.
set -u
BUILD=${BUILD:-build}
ws=$BUILD/${GPUP2P_VM:-vm}/ws-pcie
B=$BUILD/gpup2p
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
if tar xzf "$ws/guest.tar.gz" -C "$t" 2>/dev/null; then
	r=$(ls -d "$t"/*/ | head -1)
	for c in "topo topo.json" "bar bar.json" "acs acs.json"; do
		set -- $c
		# the envelope says where it read: the guest live, the host its snapshot (root, live)
		"$B" --root "$r" "$1" --match 1af4:1110 --json 2>/dev/null | grep -v '^    "\(root\|live\)": ' >"$t/$2"
		grep -v '^    "\(root\|live\)": ' "$ws/$2" | cmp -s - "$t/$2" &&
			echo "ok - replay of the guest snapshot: $1 --json identical" ||
			echo "not ok - replay of the guest snapshot: $1 --json differs"
	done
else
	echo "not ok - guest snapshot missing or unreadable"
fi
