#!/bin/bash
# Prepare the QEMU guest harness (Debian 12): packages, Debian's kernel (unpacked under build/vm, not
# installed), the uncompressed vmlinux for a fast PVH boot, and a small busybox initramfs.
# Idempotent: what is already there is kept. See ../shared/notes/vm-harness.md for why each step.
set -eu
BUILD=${BUILD:-build}
VM=$PWD/$BUILD/${GPUP2P_VM:-vm}
mkdir -p "$VM"
# GPUP2P_VM_SUITE=bullseye (say): that Debian release's kernel and headers, fetched with a private apt
# state under $VM/apt (the machine's apt sources are not touched), unpacked, not installed
SUITE=${GPUP2P_VM_SUITE:-}
APTO=()
if [ -n "$SUITE" ]; then
	mkdir -p "$VM/apt/lists/partial" "$VM/apt/cache/archives/partial"
	echo "deb http://deb.debian.org/debian $SUITE main" >"$VM/apt/sources.list"
	APTO=(-o "Dir::Etc::SourceList=$VM/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	      -o "Dir::State::Lists=$VM/apt/lists" -o "Dir::Cache=$VM/apt/cache" -o APT::Sandbox::User=root)
	[ -n "$(ls "$VM"/apt/lists/*Packages* 2>/dev/null)" ] || apt-get "${APTO[@]}" update -q >/dev/null ||
		{ echo "vm setup: apt-get update for $SUITE failed" >&2; exit 69; }
fi

need=()
# the soft-RoCE guests use the host's rdma-core (libibverbs, librxe, ibv_* tools, librdmacm) and rdma/ip
for p in qemu-system-x86 busybox-static kmod cpio xz-utils pciutils dkms ibverbs-providers ibverbs-utils librdmacm1 \
	iproute2; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "vm setup: installing ${need[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "vm setup: need root to install ${need[*]} (or install them first)" >&2
		exit 69
	fi
	[ -n "$(ls /var/lib/apt/lists/*Packages* 2>/dev/null)" ] || apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >"$VM/apt.log" 2>&1 || {
		echo "vm setup: apt-get install failed, see $VM/apt.log" >&2
		exit 69
	}
fi

# the kernel Debian's linux-image-amd64 points at
KVER=$(apt-cache "${APTO[@]}" depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
[ -n "$KVER" ] || { [ -n "$(ls /var/lib/apt/lists/*Packages* 2>/dev/null)" ] || apt-get update -q >/dev/null
	KVER=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1); }
[ -n "$KVER" ] || { echo "vm setup: cannot tell Debian's kernel version (apt-cache depends linux-image-amd64)" >&2; exit 69; }
echo "$KVER" >"$VM/kver"
KROOT=$VM/kroot
if [ ! -f "$KROOT/lib/modules/$KVER/modules.dep" ]; then
	echo "vm setup: fetching linux-image-$KVER"
	rm -rf "$KROOT" "$VM"/linux-image-*.deb
	mkdir -p "$KROOT"
	(cd "$VM" && apt-get "${APTO[@]}" download -q "linux-image-$KVER" >/dev/null 2>&1) || {
		echo "vm setup: apt-get download linux-image-$KVER failed" >&2
		exit 69
	}
	dpkg-deb -x "$VM"/linux-image-"$KVER"_*.deb "$KROOT"
	rm -f "$VM"/linux-image-*.deb
	depmod -b "$KROOT" "$KVER"
fi

# headers to build gpup2p.ko and the test stub for that kernel: another release's are unpacked under
# $VM/hroot (their Makefile points at /usr/src: pointed here instead)
if [ -n "$SUITE" ]; then
	HR=$VM/hroot
	if [ ! -f "$HR/usr/src/linux-headers-$KVER/Makefile" ]; then
		echo "vm setup: fetching linux-headers-$KVER ($SUITE)"
		rm -rf "$HR" && mkdir -p "$HR"
		deps=$(apt-cache "${APTO[@]}" depends "linux-headers-$KVER" | sed -n 's/.*Depends: \(linux-\(headers\|kbuild\)-.*\)$/\1/p')
		(cd "$HR" && apt-get "${APTO[@]}" download -q "linux-headers-$KVER" $deps >/dev/null 2>&1) ||
			{ echo "vm setup: downloading the headers of $KVER failed" >&2; exit 69; }
		for d in "$HR"/*.deb; do dpkg-deb -x "$d" "$HR"; done
		rm -f "$HR"/*.deb
		sed -i "s|include /usr/src/|include $HR/usr/src/|" "$HR/usr/src/linux-headers-$KVER/Makefile"
	fi
	echo "$HR/usr/src/linux-headers-$KVER" >"$VM/kdir"
elif [ ! -d "/usr/src/linux-headers-$KVER" ]; then
	echo "vm setup: installing linux-headers-$KVER"
	[ "$(id -u)" -eq 0 ] || { echo "vm setup: need root to install linux-headers-$KVER (or install it first)" >&2; exit 69; }
	[ -n "$(ls /var/lib/apt/lists/*Packages* 2>/dev/null)" ] || apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "linux-headers-$KVER" \
		>"$VM/apt-headers.log" 2>&1 || { echo "vm setup: apt-get install linux-headers-$KVER failed" >&2; exit 69; }
fi

# vmlinux: the xz stream inside vmlinuz, uncompressed (PVH boot: ~4 s to init instead of ~10)
if [ ! -s "$VM/vmlinux-$KVER" ]; then
	off=$(LC_ALL=C grep -abo $'\xfd7zXZ' "$KROOT/boot/vmlinuz-$KVER" | head -1 | cut -d: -f1)
	[ -n "$off" ] || { echo "vm setup: no xz stream in vmlinuz-$KVER" >&2; exit 69; }
	tail -c +$((off + 1)) "$KROOT/boot/vmlinuz-$KVER" | xz -dc 2>/dev/null >"$VM/vmlinux-$KVER.tmp" || true
	[ -s "$VM/vmlinux-$KVER.tmp" ] || { echo "vm setup: could not unpack vmlinux" >&2; exit 69; }
	mv "$VM/vmlinux-$KVER.tmp" "$VM/vmlinux-$KVER"
fi

# initramfs: busybox, the modules that mount the host over 9p, and init
if [ ! -s "$VM/initrd.cpio" ] || [ tests/vm/init -nt "$VM/initrd.cpio" ] || [ tests/vm/setup.sh -nt "$VM/initrd.cpio" ]; then
	ir=$VM/initrd
	rm -rf "$ir"
	mkdir -p "$ir/bin" "$ir/mods"
	cp /bin/busybox "$ir/bin/busybox"
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' >"$ir/order.tmp"
	: >"$ir/mods/order"
	while read -r ko; do
		cp "$ko" "$ir/mods/"
		basename "$ko" >>"$ir/mods/order"
	done <"$ir/order.tmp"
	rm -f "$ir/order.tmp"
	cp tests/vm/init "$ir/init"
	chmod 0755 "$ir/init"
	(cd "$ir" && find . | cpio -o -H newc --quiet) >"$VM/initrd.cpio"
fi
echo "vm setup: kernel $KVER ready in $VM"
