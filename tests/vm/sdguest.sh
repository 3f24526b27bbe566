# shellcheck shell=bash
# A QEMU guest booted with systemd as PID 1 (sourced by tests/vm/acs_unit.sh and textfile_unit.sh):
# Debian's kernel (tests/vm/setup.sh), the host's / read-only under a tmpfs overlay
# (tests/vm/init-systemd), gpup2p installed into the overlay as `make install PREFIX=/usr` installs it
# (as the package does), and a check service that runs a guest script after boot and powers off.
# Needs build/gpup2p and the harness (make check-vm sets it up). Source it with the workspace's name:
#   . tests/vm/sdguest.sh ws-NAME      (sets BUILD, VM, KVER and WS=$VM/ws-NAME)
BUILD=${BUILD:-build}
VM=$PWD/$BUILD/${GPUP2P_VM:-vm}
KVER=$(cat "$VM/kver")
WS=$VM/$1

# sdguest_prepare: a fresh $WS with gpup2p installed in its overlay/, the host's units the tests do
# not need masked; sets E (the overlay's /etc/systemd/system) and REL (WS inside the repository)
sdguest_prepare() {
	REL=${WS#"$PWD"/}
	# the guest reaches the repository at /gpup2p-repo (init-systemd): its /tmp is a fresh tmpfs, which
	# would hide a clone under the host's /tmp
	[ "$REL" != "$WS" ] || { echo "not ok - the workspace $WS is not inside the repository $PWD"; return 1; }
	rm -rf "$WS"
	mkdir -p "$WS"
	O=$WS/overlay
	# (under /usr only: the init's cp cannot write through the host's merged-/usr /lib symlink)
	make -s --no-print-directory install PREFIX=/usr DESTDIR="$O" BUILD="$BUILD" >/dev/null ||
		{ echo "not ok - make install into the guest overlay"; return 1; }
	E=$O/etc/systemd/system
	mkdir -p "$E/multi-user.target.wants" "$O/etc/default"
	# what this host has enabled and the tests do not need, masked: each service costs seconds to
	# minutes under TCG (the fleet tests' prometheus, slurmd, exim4 took the guest past 6 minutes)
	for u in postgresql@.service exim4.service nagios4.service systemd-timesyncd.service \
		/etc/systemd/system/*.wants/*.service /etc/systemd/system/*.wants/*.timer; do
		u=${u##*/}
		[[ $u == gpup2p-* || $u == "*."* ]] || ln -sfn /dev/null "$E/$u"
	done
}

# sdguest_check SCRIPT AFTER: the service that runs SCRIPT (in the repository) after the units AFTER,
# its output into $WS/out.txt, then powers the guest off
sdguest_check() {
	cat >"$E/gpup2p-vmcheck.service" <<EOT
[Unit]
Description=gpup2p guest checks
After=$2
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'cd /gpup2p-repo && bash $1 >/gpup2p-repo/$REL/out.txt 2>&1; echo "GPUP2P-VM-DONE rc=\$\$?" >/dev/console; sync; systemctl poweroff'
[Install]
WantedBy=multi-user.target
EOT
	ln -s ../gpup2p-vmcheck.service "$E/multi-user.target.wants/gpup2p-vmcheck.service"
}

# sdguest_boot ARGS APPEND LIMIT: boot the guest on the topology tests/vm/ARGS with APPEND added to
# the kernel command line, at most LIMIT seconds; print the guest script's ok/not ok lines. 2 when
# the guest did not finish or its script wrote nothing.
sdguest_boot() {
	local ir=$WS/initrd ko args=() line append start rc
	# the harness's initramfs with overlay.ko and the systemd init
	cp -a "$VM/initrd" "$ir"
	for ko in $(modprobe -d "$VM/kroot" -S "$KVER" --show-depends overlay | awk '$1 == "insmod" { print $2 }'); do
		cp "$ko" "$ir/mods/" && basename "$ko" >>"$ir/mods/order"
	done
	cp tests/vm/init-systemd "$ir/init" && chmod 0755 "$ir/init"
	(cd "$ir" && find . | cpio -o -H newc --quiet) >"$WS/initrd.cpio"
	while read -r line; do
		line=${line%%#*}
		[ -n "${line// /}" ] || continue
		# shellcheck disable=SC2206
		args+=(${line//@WS@/$WS})
	done <"tests/vm/$1"
	append="console=ttyS0 panic=-1 oops=panic loglevel=4 gpws=$WS gprepo=$PWD $2 systemd.unit=multi-user.target"
	start=$(date +%s)
	timeout "$3" qemu-system-x86_64 -accel tcg -M q35 -cpu max -m 1G -nographic -no-reboot -nic none \
		-kernel "$VM/vmlinux-$KVER" -initrd "$WS/initrd.cpio" -append "$append" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$WS,mount_tag=ws,security_model=none,multidevs=remap" \
		"${args[@]}" </dev/null >"$WS/console.log" 2>&1
	echo "# guest with systemd: $(($(date +%s) - start)) s"
	if ! grep -q 'GPUP2P-VM-DONE rc=' "$WS/console.log"; then
		echo "not ok - the systemd guest did not finish: last console lines:"
		tail -15 "$WS/console.log" | sed 's/^/#   /'
		return 2
	fi
	# the guest's checks must have run and said something: a run that wrote nothing, or failed, fails
	rc=$(sed -n 's/.*GPUP2P-VM-DONE rc=\([0-9]*\).*/\1/p' "$WS/console.log" | head -1)
	if [ ! -s "$WS/out.txt" ]; then
		echo "not ok - the guest's checks wrote nothing (rc $rc): last console lines:"
		tail -15 "$WS/console.log" | sed 's/^/#   /'
		return 2
	fi
	cat "$WS/out.txt"
	grep -q '^ok ' "$WS/out.txt" || echo "not ok - the guest's checks printed no ok line"
	[ "$rc" = 0 ] || echo "not ok - the guest's script exited $rc"
}
