# shellcheck shell=bash
# Helpers of the tests that drive the real fleet programs (tests/fleet/test_*.sh, make check-fleet).
# Sourced after tests/cli/lib.sh. Each test runs in private mount, network and UTS namespaces
# (unshare): its daemons listen on their usual ports on a loopback nobody else sees, /usr/local and
# /etc/default are its own copies, and nothing it starts outlives it.

# fleet_ns "$0": re-run the calling test inside the namespaces (root only); returns in the copy
fleet_ns() {
	[ "${GPUP2P_FLEET_NS:-}" = 1 ] && return 0
	if [ "$(id -u)" != 0 ] || ! unshare -mnu true 2>/dev/null; then
		echo "not ok - $(basename "$1") needs root and unshare (mount, network, UTS namespaces)"
		exit 0
	fi
	exec env GPUP2P_FLEET_NS=1 unshare -mnu --fork --kill-child bash "$1"
}

# fleet_net HOST: the host name, loopback up with HOST's address (10.77.0.1) in /etc/hosts. An
# address outside 127/8 makes getaddrinfo's AI_ADDRCONFIG (Slurm uses it) answer.
fleet_net() {
	hostname "$1"
	ip link set lo up
	ip addr add 10.77.0.1/32 dev lo
	{ cat /etc/hosts; echo "10.77.0.1 $1"; } >"$T/hosts"
	mount --bind "$T/hosts" /etc/hosts
}

# fleet_install: `make install` into $T/dest (PREFIX=/usr/local), then seen at /usr/local
fleet_install() {
	make --no-print-directory -s install BUILD="$BUILD" DESTDIR="$T/dest" PREFIX=/usr/local >"$T/install.log" 2>&1 &&
		mount --bind "$T/dest/usr/local" /usr/local
}

# fleet_etc_default: a private copy of /etc/default (gpup2p's settings written there stay here)
fleet_etc_default() {
	mkdir -p "$T/etc-default"
	cp -a /etc/default/. "$T/etc-default/"
	mount --bind "$T/etc-default" /etc/default
}

# wait_for SECONDS CMD...: run CMD every 0.3 s until it succeeds; 1 when SECONDS pass first
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.3
	done
}

# alive PID: running (a zombie, which PID 1 here may be slow to reap, is not)
alive() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $st != Z* ]]
}

# stop_pidfile FILE...: TERM the process each names, wait up to 10 s, then KILL
stop_pidfile() {
	local f p
	for f in "$@"; do
		[ -s "$f" ] || continue
		p=$(cat "$f")
		kill "$p" 2>/dev/null
		wait_for 10 eval '! alive '"$p" || kill -9 "$p" 2>/dev/null
	done
}
