#!/bin/bash
# The ACS boot unit in a guest booted with systemd: Debian's kernel (tests/vm/setup.sh) on the "pcie"
# topology (tests/vm/topo-pcie.args: four root ports whose ACS the kernel enables, intel_iommu=on
# iommu=pt), the host's / read-only under a tmpfs overlay (tests/vm/init-systemd), gpup2p installed as
# `make install PREFIX=/usr` installs it (as the package does), gpup2p-acs.service enabled, stubs of
# nvidia-persistenced and slurmd, and a check service that runs tests/vm/guest_acs_unit.sh after boot.
# Prints the guest's ok/not ok lines. Needs build/gpup2p and the harness (make check-vm sets it up).
set -u
BUILD=${BUILD:-build}
VM=$PWD/$BUILD/${GPUP2P_VM:-vm}
KVER=$(cat "$VM/kver")
WS=$VM/ws-acsunit
limit=${1:-600}
# the guest reaches the repository at /gpup2p-repo (tests/vm/init-systemd): its /tmp is a fresh tmpfs,
# which would hide a clone under the host's /tmp
rel=${WS#"$PWD"/}
[ "$rel" != "$WS" ] || { echo "not ok - the workspace $WS is not inside the repository $PWD"; exit 1; }
rm -rf "$WS"
mkdir -p "$WS"
O=$WS/overlay
# (under /usr only: the init's cp cannot write through the host's merged-/usr /lib symlink)
make -s --no-print-directory install PREFIX=/usr DESTDIR="$O" BUILD="$BUILD" >/dev/null ||
	{ echo "not ok - make install into the guest overlay"; exit 1; }
E=$O/etc/systemd/system
mkdir -p "$E/multi-user.target.wants" "$O/etc/default"
ln -s /lib/systemd/system/gpup2p-acs.service "$E/multi-user.target.wants/gpup2p-acs.service"
echo 'GPUP2P_ACS_OPTS="--match 1af4:1110"' >"$O/etc/default/gpup2p-acs"
# what this host has enabled and the test does not need, masked
for u in postgresql.service postgresql@.service e2scrub_reap.service apt-daily.timer apt-daily-upgrade.timer \
	man-db.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer getty@tty1.service systemd-timesyncd.service; do
	ln -s /dev/null "$E/$u"
done
# stubs of GPU services: each copies the ACS state file (or "none") when it starts
for s in nvidia-persistenced slurmd; do
	printf '[Unit]\nDescription=stub %s\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c "cp %s /run/%s-saw || echo none >/run/%s-saw"\n[Install]\nWantedBy=multi-user.target\n' \
		"$s" /run/gpup2p/acs.state "$s" "$s" >"$E/$s.service"
	ln -s "../$s.service" "$E/multi-user.target.wants/$s.service"
done
cat >"$E/gpup2p-vmcheck.service" <<EOT
[Unit]
Description=gpup2p guest checks
After=multi-user.target gpup2p-acs.service nvidia-persistenced.service slurmd.service
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'cd /gpup2p-repo && bash tests/vm/guest_acs_unit.sh >/gpup2p-repo/$rel/out.txt 2>&1; echo "GPUP2P-VM-DONE rc=\$\$?" >/dev/console; sync; systemctl poweroff'
[Install]
WantedBy=multi-user.target
EOT
ln -s ../gpup2p-vmcheck.service "$E/multi-user.target.wants/gpup2p-vmcheck.service"

# the harness's initramfs with overlay.ko and this init
ir=$WS/initrd
cp -a "$VM/initrd" "$ir"
for ko in $(modprobe -d "$VM/kroot" -S "$KVER" --show-depends overlay | awk '$1 == "insmod" { print $2 }'); do
	cp "$ko" "$ir/mods/" && basename "$ko" >>"$ir/mods/order"
done
cp tests/vm/init-systemd "$ir/init" && chmod 0755 "$ir/init"
(cd "$ir" && find . | cpio -o -H newc --quiet) >"$WS/initrd.cpio"

args=()
while read -r line; do
	line=${line%%#*}
	[ -n "${line// /}" ] || continue
	# shellcheck disable=SC2206
	args+=(${line//@WS@/$WS})
done <tests/vm/topo-pcie.args
append="console=ttyS0 panic=-1 oops=panic loglevel=4 gpws=$WS gprepo=$PWD intel_iommu=on iommu=pt systemd.unit=multi-user.target"
start=$(date +%s)
timeout "$limit" qemu-system-x86_64 -accel tcg -M q35 -cpu max -m 1G -nographic -no-reboot -nic none \
	-kernel "$VM/vmlinux-$KVER" -initrd "$WS/initrd.cpio" -append "$append" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$WS,mount_tag=ws,security_model=none,multidevs=remap" \
	"${args[@]}" </dev/null >"$WS/console.log" 2>&1
echo "# guest with systemd: $(($(date +%s) - start)) s"
if ! grep -q 'GPUP2P-VM-DONE rc=' "$WS/console.log"; then
	echo "not ok - the systemd guest did not finish: last console lines:"
	tail -15 "$WS/console.log" | sed 's/^/#   /'
	exit 2
fi
# the guest's checks must have run and said something: a run that wrote nothing, or failed, is a failure
rc=$(sed -n 's/.*GPUP2P-VM-DONE rc=\([0-9]*\).*/\1/p' "$WS/console.log" | head -1)
if [ ! -s "$WS/out.txt" ]; then
	echo "not ok - the guest's checks wrote nothing (rc $rc): last console lines:"
	tail -15 "$WS/console.log" | sed 's/^/#   /'
	exit 2
fi
cat "$WS/out.txt"
grep -q '^ok ' "$WS/out.txt" || echo "not ok - the guest's checks printed no ok line"
[ "$rc" = 0 ] || echo "not ok - tests/vm/guest_acs_unit.sh exited $rc in the guest"
