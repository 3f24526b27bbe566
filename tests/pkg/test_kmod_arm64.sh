#!/bin/bash
# make check-kmod-arm64: build gpup2p.ko for arm64 (Grace, BlueField hosts) on this amd64 machine,
# against Debian's own arm64 kernel headers, with warnings as errors. The headers are fetched with a
# private apt state under $BUILD/kmod-arm64 (the machine's apt sources and architectures are not
# touched), unpacked, not installed; their scripts/ (fixdep, modpost: host tools) come from the
# machine's linux-kbuild of the same version. Needs gcc-aarch64-linux-gnu and linux-kbuild-6.1
# (tests/deps.sh kmod-arm64). Prints TAP lines; exit 1 when the build fails or warns.
set -u
unset MAKEFLAGS MFLAGS MAKELEVEL
BUILD=${BUILD:-build}
D=$PWD/$BUILD/kmod-arm64
mkdir -p "$D/apt/lists/partial" "$D/apt/cache/archives/partial"
APTO=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o "Dir::State::Lists=$D/apt/lists"
      -o "Dir::Cache=$D/apt/cache" -o "Dir::State::status=$D/apt/status" -o APT::Sandbox::User=root)
touch "$D/apt/status"
fail() { echo "not ok - $*"; exit 1; }
[ -n "$(ls "$D"/apt/lists/*Packages* 2>/dev/null)" ] || apt-get "${APTO[@]}" update -q >"$D/apt.log" 2>&1 ||
	fail "apt-get update for arm64 failed ($D/apt.log)"
# the kernel Debian's linux-headers-arm64 points at
KVER=$(apt-cache "${APTO[@]}" depends linux-headers-arm64 2>/dev/null |
	sed -n 's/.*Depends: linux-headers-\(.*-arm64\)$/\1/p' | head -1)
[ -n "$KVER" ] || fail "cannot tell Debian's arm64 kernel version (apt-cache depends linux-headers-arm64)"
HR=$D/hroot
KDIR=$HR/usr/src/linux-headers-$KVER
if [ ! -f "$KDIR/Makefile" ] || [ ! -s "$D/version" ]; then
	rm -rf "$HR" && mkdir -p "$HR"
	common=$(apt-cache "${APTO[@]}" depends "linux-headers-$KVER" | sed -n 's/.*Depends: \(linux-headers-.*-common\)$/\1/p')
	(cd "$HR" && apt-get "${APTO[@]}" download -q "linux-headers-$KVER" ${common:+"$common"} >>"$D/apt.log" 2>&1) ||
		fail "downloading linux-headers-$KVER failed ($D/apt.log)"
	for d in "$HR"/*.deb; do dpkg-deb -x "$d" "$HR"; done
	dpkg-deb -f "$HR"/linux-headers-"$KVER"_*.deb Version >"$D/version"
	rm -f "$HR"/*.deb
	# the headers' Makefile includes the common part from /usr/src: here instead
	sed -i "s|include /usr/src/|include $HR/usr/src/|" "$KDIR/Makefile"
fi
# scripts/ and tools/ point at ../../lib/linux-kbuild-X.Y, the arm64 package's (arm64 binaries):
# the host's of the same version stands there instead (fixdep, modpost run on the build machine)
kb=$(readlink "$KDIR/scripts" | sed -n 's|.*lib/\(linux-kbuild-[0-9.]*\)/scripts$|\1|p')
if [ -z "$kb" ] || [ ! -d "/usr/lib/$kb/scripts" ]; then
	fail "no /usr/lib/${kb:-linux-kbuild-?}/scripts (apt-get install ${kb:-linux-kbuild})"
fi
hv=$(dpkg-query -W -f='${Version}' "$kb" 2>/dev/null)
kv=$(cat "$D/version" 2>/dev/null)
[ "$hv" = "$kv" ] || fail "$kb $hv on this machine, headers $kv: apt-get install $kb=$kv"
mkdir -p "$HR/usr/lib"
ln -sfn "/usr/lib/$kb" "$HR/usr/lib/$kb"
command -v aarch64-linux-gnu-gcc >/dev/null || fail "no aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu)"
# out of the source tree, as tests/vm/build-kmod.sh does
rm -rf "$D/kmod" && mkdir -p "$D/kmod" && cp -r kmod/. "$D/kmod/"
start=$(date +%s%N)
make -s -C "$KDIR" M="$D/kmod" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- KBUILD_MODPOST_WARN=1 \
	KCFLAGS=-Werror modules >"$D/build.log" 2>&1
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
# the nvidia_p2p_* symbols are resolved at load time (no NVIDIA Module.symvers): modpost's notes
# about them are expected; anything else is a warning
warn=$(grep -iE "warning|error" "$D/build.log" | grep -vE 'WARNING: modpost: "nvidia_p2p_[a-z_]*" \[.*\] undefined!')
if [ $rc -ne 0 ] || [ -n "$warn" ]; then
	sed 's/^/#   /' "$D/build.log"
	fail "gpup2p.ko for arm64 ($KVER): build failed or warned"
fi
arch=$(file -b "$D/kmod/gpup2p.ko" 2>/dev/null || od -An -tx1 -j18 -N2 "$D/kmod/gpup2p.ko")
case $arch in *aarch64* | *" b7 00"*) ;; *) fail "gpup2p.ko is not an arm64 object ($arch)" ;; esac
echo "ok - gpup2p.ko builds for arm64 against Debian's linux-headers-$KVER, -Werror, no warning ($ms ms)"
