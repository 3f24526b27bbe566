#!/bin/bash
# Install the Debian 12 packages gpup2p needs to build and test (only what is missing).
# Used by `make deps`, `make check` and `make check-pkg` (.ci/run). Needs root (or sudo) when something
# is missing.
set -eu
# zsh, bash-completion: tests/cli/test_install.sh asks zsh where completions belong and runs both
# completion scripts; strace: tests/cli/test_snapshot_perf.sh counts calls; time: tests/cli/test_scale.sh
# measures peak memory (/usr/bin/time -f %M);
# libibverbs-dev, librdmacm-dev: headers only, for tests/cli/test_verbs_abi.sh (the build needs none)
PKGS="gcc make pkg-config libpci-dev libkmod-dev zlib1g-dev pciutils python3 tar gzip man-db zsh bash-completion strace time libibverbs-dev librdmacm-dev"
# `deps.sh pkg` (make check-pkg): also what building and testing the Debian packages needs (tests/pkg)
[ "${1:-}" != pkg ] ||
	PKGS="$PKGS dpkg-dev debhelper dh-dkms lintian dkms linux-headers-$(dpkg --print-architecture)"
# `deps.sh kmod-arm64` (make check-kmod-arm64): the cross compiler, and the host's kbuild tools that
# stand in for the arm64 headers' own (tests/pkg/test_kmod_arm64.sh)
[ "${1:-}" != kmod-arm64 ] || PKGS="$PKGS gcc-aarch64-linux-gnu linux-kbuild-6.1"
# `deps.sh fleet` (make check-fleet): the real programs tests/fleet drives (nagios4-core: the daemon
# without the web front end; monitoring-plugins-basic: check_dummy and the utils)
[ "${1:-}" != fleet ] ||
	PKGS="$PKGS slurmctld slurmd slurm-client munge prometheus-node-exporter prometheus nagios4-core \
monitoring-plugins-basic systemd util-linux bsdutils iproute2 procps"
# `deps.sh fuzz` (make fuzz-inproc): clang and its libFuzzer runtime for the in-process targets (tests/fuzz/harness)
[ "${1:-}" != fuzz ] || PKGS="$PKGS clang libclang-rt-14-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# python3 may come from elsewhere (pyenv): accept any python3 on PATH
if command -v python3 >/dev/null; then missing=${missing/ python3/}; fi
if [ -z "${missing// /}" ]; then
	echo "deps: all present ($PKGS)"
	exit 0
fi
echo "deps: installing:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
