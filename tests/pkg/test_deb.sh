#!/bin/bash
# The Debian packages: builds gpup2p and gpup2p-dkms with dpkg-buildpackage from a copy of this tree,
# checks both file lists, runs lintian (errors fail; warnings are printed as comments), runs the packaged
# binary unpacked (dpkg -x) on a captured snapshot and a planted-fault fixture, then installs both with a
# real `dpkg -i` in a throwaway root (an overlay of this system, discarded at the end): the unit is
# installed disabled, DKMS builds gpup2p.ko for every installed kernel with headers, and purging removes
# the module and the sources. Prints ok/not ok/skip lines (tests/run.sh). The packages it needs are in
# tests/deps.sh.
set -u
. tests/cli/lib.sh
export NO_COLOR=1 GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids
unset GPUP2P_ROOT MAKEFLAGS MFLAGS MAKELEVEL WERROR CPPFLAGS CFLAGS LDFLAGS LDLIBS
V=$(cat VERSION)
T=$(mktemp -d)
trap '${SUDO:-} rm -rf "$T"' EXIT

for c in dpkg-buildpackage dh dh_dkms lintian dkms; do
	command -v "$c" >/dev/null || { nok "$c is not installed (make deps installs it)"; exit 0; }
done

# --- build, from the files git knows (tracked and new, not ignored): what a clean clone would hold
mkdir -p "$T/src/gpup2p"
git ls-files -co --exclude-standard -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null |
	tar -C "$T/src/gpup2p" -xf -
if (cd "$T/src/gpup2p" && nice -n 10 dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b"
else
	nok "dpkg-buildpackage failed: $(tail -5 "$T/build.log" | tr '\n' ' ')"
	exit 0
fi
deb=$T/src/gpup2p_${V}_$(dpkg --print-architecture).deb
dkmsdeb=$T/src/gpup2p-dkms_${V}_all.deb
[ -f "$deb" ] && [ -f "$dkmsdeb" ] && ok "both packages are version $V (VERSION)" ||
	nok "no gpup2p_$V / gpup2p-dkms_$V package: $(cd "$T/src" && echo *.deb)"

# --- file lists: exactly these regular files, worked out from the tree (not from the build)
files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||' | sort; }
{
	echo usr/bin/gpup2p
	for m in man/*.1; do echo "usr/share/man/man1/${m#man/}.gz"; done
	echo usr/share/bash-completion/completions/gpup2p
	echo usr/share/zsh/vendor-completions/_gpup2p
	echo lib/systemd/system/gpup2p-acs.service
	echo lib/systemd/system/gpup2p-textfile.service
	echo lib/systemd/system/gpup2p-textfile.timer
	for c in $(git ls-files contrib); do echo "usr/share/gpup2p/$c"; done
	echo lib/udev/rules.d/60-gpup2p.rules
	echo usr/share/doc/gpup2p/changelog.gz
	echo usr/share/doc/gpup2p/copyright
} | sort >"$T/want"
files "$deb" >"$T/got"
cmp -s "$T/want" "$T/got" && ok "gpup2p holds the binary, $(ls man/*.1 | wc -l) man pages, completions, units, udev rule, contrib" ||
	nok "gpup2p file list: $(diff "$T/want" "$T/got" | grep '^[<>]' | tr '\n' ' ')"
{
	git ls-files kmod | grep -v '^kmod/README.md$' | sed "s|^kmod/|usr/src/gpup2p-$V/|"
	echo usr/share/doc/gpup2p-dkms/changelog.gz
	echo usr/share/doc/gpup2p-dkms/copyright
} | sort >"$T/want"
files "$dkmsdeb" >"$T/got"
cmp -s "$T/want" "$T/got" && ok "gpup2p-dkms holds kmod/ in /usr/src/gpup2p-$V" ||
	nok "gpup2p-dkms file list: $(diff "$T/want" "$T/got" | grep '^[<>]' | tr '\n' ' ')"
dpkg-deb -f "$dkmsdeb" Depends | grep -q '\bdkms\b' && ok "gpup2p-dkms depends on dkms" || nok "gpup2p-dkms: no dkms dependency"
dpkg-deb -f "$deb" Depends | grep -qi 'cuda\|nvidia' && nok "gpup2p depends on CUDA/NVIDIA packages" ||
	ok "gpup2p needs nothing of CUDA or NVIDIA to install"

# --- lintian: no errors; warnings listed
lintian --no-tag-display-limit "$T"/src/*.changes >"$T/lintian" 2>&1
grep '^[WE]: ' "$T/lintian" | sed 's/^/# lintian: /'
grep -q '^E: ' "$T/lintian" && nok "lintian: $(grep -c '^E: ' "$T/lintian") errors" ||
	ok "lintian: no errors ($(grep -c '^W: ' "$T/lintian") warnings)"

# --- the packaged binary, unpacked
X=$T/x
dpkg-deb -x "$deb" "$X"
[ "$("$X/usr/bin/gpup2p" --version 2>&1)" = "gpup2p $V" ] && ok "packaged gpup2p --version says $V" ||
	nok "packaged gpup2p --version: $("$X/usr/bin/gpup2p" --version 2>&1)"
# a snapshot of a healthy 2x H200 server (tests/fixtures/h200x2-live): topo as printed live there, and
# doctor with no error or warning (as on that machine: tests/perf/results)
tar -C "$T" -xzf tests/fixtures/h200x2-live/h200-live.tar.gz
"$X/usr/bin/gpup2p" --root "$T/h200-live" topo --json >"$T/topo.json" 2>&1
# the NUMA columns and the envelope came after that output was recorded (tests/cli/topo_live_cmp.py)
python3 tests/cli/topo_live_cmp.py "$T/topo.json" tests/fixtures/h200x2-live/topo.json &&
	ok "packaged binary: topo --json of the snapshot as printed live" ||
	nok "packaged binary: topo --json differs from the live output"
out=$("$X/usr/bin/gpup2p" --root "$T/h200-live" doctor 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q '^summary: 0 errors, 0 warnings' <<<"$out" && ok "packaged binary: doctor --root snapshot: healthy (exit 0)" ||
	nok "packaged binary: doctor on the healthy snapshot: exit $rc: $(tail -2 <<<"$out")"
# a planted fault (tests/fixtures/doctor/acs-boot.spec: ACS cleared under an IOMMU, nothing to clear it at boot)
python3 tests/fixtures/gen.py tests/fixtures/doctor/acs-boot.spec "$T/acs-boot" >/dev/null 2>&1
out=$("$X/usr/bin/gpup2p" --root "$T/acs-boot" doctor --json 2>&1); rc=$?
[ $rc -eq 1 ] && python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
assert any(f["id"] == "acs.boot" and f["severity"] == "warning" for f in d["findings"])' <<<"$out" 2>/dev/null &&
	ok "packaged binary: doctor --root planted fault: acs.boot warning (exit 1)" ||
	nok "packaged binary: doctor on acs-boot: exit $rc: $(head -c 300 <<<"$out")"

# --- dpkg -i in a throwaway root: an overlay over this system, in a private mount namespace
SUDO=
[ "$(id -u)" -eq 0 ] || ! sudo -n true 2>/dev/null || SUDO="sudo -n"
if { [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; } || ! command -v unshare >/dev/null; then
	skip "dpkg -i in a throwaway root needs root"
	exit 0
fi
KVERS=$(for m in /lib/modules/*/build/Makefile; do [ -f "$m" ] && basename "$(dirname "$(dirname "$m")")"; done)
mkdir -p "$T/ov/up" "$T/ov/work" "$T/ov/root"
cp "$deb" "$dkmsdeb" "$T/ov/"
# runs inside the overlay root; prints key=value lines and the logs
cat >"$T/ov/inroot.sh" <<EOF
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive
dpkg -i /tmp/gp/$(basename "$deb") /tmp/gp/$(basename "$dkmsdeb") >/tmp/gp/dpkg.log 2>&1; echo "install=\$?"
echo "version=\$(gpup2p --version 2>&1)"
echo "enabled=\$(systemctl is-enabled gpup2p-acs.service 2>&1)"
echo "verify=\$(systemd-analyze verify --man=no gpup2p-acs.service 2>&1 | tr '\n' ' ')"
echo "wants=\$(ls /etc/systemd/system/*.wants 2>/dev/null | grep -c gpup2p)"
echo "man=\$(man -w gpup2p-acs 2>&1)"
echo "bashcomp=\$(ls /usr/share/bash-completion/completions/gpup2p 2>&1)"
for k in $KVERS; do
	ko=\$(ls /lib/modules/\$k/updates/dkms/gpup2p.ko* 2>/dev/null | head -1)
	echo "ko \$k \$(dkms status -m gpup2p -v $V -k \$k 2>&1 | grep -c ': installed') \$(modinfo -F version "\$ko" 2>&1) \$(modinfo -F vermagic "\$ko" 2>&1 | cut -d' ' -f1)"
done
dpkg --purge gpup2p-dkms gpup2p >/tmp/gp/purge.log 2>&1; echo "purge=\$?"
echo "left=\$(ls -d /usr/src/gpup2p-* /lib/modules/*/updates/dkms/gpup2p.ko* /var/lib/dkms/gpup2p /usr/bin/gpup2p 2>/dev/null | tr '\n' ' ')"
EOF
$SUDO unshare -m sh -c 'o=$1; mount -t overlay overlay -o "lowerdir=/,upperdir=$o/up,workdir=$o/work" "$o/root" &&
	mount -t proc proc "$o/root/proc" && mount --rbind /dev "$o/root/dev" && mkdir -p "$o/root/tmp/gp" &&
	cp "$o"/*.deb "$o/inroot.sh" "$o/root/tmp/gp/" && chroot "$o/root" sh /tmp/gp/inroot.sh &&
	cp "$o/root/tmp/gp/dpkg.log" "$o/root/tmp/gp/purge.log" "$o/"' sh "$T/ov" >"$T/res" 2>&1
kv() { sed -n "s/^$1=//p" "$T/res"; }
[ "$(kv install)" = 0 ] && ok "dpkg -i gpup2p gpup2p-dkms in a throwaway root" ||
	nok "dpkg -i: $(cat "$T/res" "$T/ov/dpkg.log" 2>/dev/null | tail -5 | tr '\n' ' ')"
[ "$(kv version)" = "gpup2p $V" ] && ok "installed gpup2p --version: $V" || nok "installed --version: $(kv version)"
[ "$(kv enabled)" = disabled ] && [ "$(kv wants)" = 0 ] && ok "gpup2p-acs.service installed disabled" ||
	nok "unit after install: is-enabled '$(kv enabled)', $(kv wants) wants links"
grep -qx 'verify=' "$T/res" && ok "installed unit: systemd-analyze verify clean" || nok "installed unit: $(kv verify)"
[ "$(kv man)" = /usr/share/man/man1/gpup2p-acs.1.gz ] && ok "man finds gpup2p-acs(1)" || nok "man -w gpup2p-acs: $(kv man)"
[ -n "$KVERS" ] || nok "no kernel headers installed (/lib/modules/*/build): cannot test the DKMS build"
for k in $KVERS; do
	grep -qx "ko $k 1 $V $k" "$T/res" && ok "DKMS built and installed gpup2p.ko $V for $k (version, vermagic)" ||
		nok "DKMS for $k: $(grep "^ko $k " "$T/res") $(grep -i 'error\|fail' "$T/ov/dpkg.log" | head -3 | tr '\n' ' ')"
done
[ "$(kv purge)" = 0 ] && [ -z "$(kv left)" ] && ok "dpkg --purge removes the module, its sources and the binary" ||
	nok "purge: exit $(kv purge), left: $(kv left)"
