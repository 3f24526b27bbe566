#!/bin/bash
# make install PREFIX DESTDIR puts the binary, man pages and completions where they belong,
# and make uninstall removes them.
set -u
# make check WERROR=1 (CI) hands its variables down (MAKEFLAGS, environment): builds here pick their own
unset MAKEFLAGS MFLAGS MAKELEVEL WERROR CPPFLAGS CFLAGS LDFLAGS LDLIBS
BUILD=${BUILD:-build}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
make -s --no-print-directory install PREFIX=/usr DESTDIR="$d" BUILD="$BUILD" >/dev/null 2>&1 &&
	echo "ok - make install succeeds" || echo "not ok - make install failed"
for f in usr/bin/gpup2p usr/share/man/man1/gpup2p.1 usr/share/man/man1/gpup2p-topo.1 \
	usr/share/man/man1/gpup2p-bar.1 usr/share/man/man1/gpup2p-snapshot.1 \
	usr/share/man/man1/gpup2p-acs.1 usr/lib/systemd/system/gpup2p-acs.service usr/lib/udev/rules.d/60-gpup2p.rules \
	usr/share/bash-completion/completions/gpup2p; do
	[ -f "$d/$f" ] && echo "ok - installed $f" || echo "not ok - missing $f"
done
[ -x "$d/usr/bin/gpup2p" ] && "$d/usr/bin/gpup2p" --version >/dev/null && echo "ok - installed binary runs" ||
	echo "not ok - installed binary"
u=$d/usr/lib/systemd/system/gpup2p-acs.service
grep -qx 'ExecStart=/usr/bin/gpup2p acs --disable $GPUP2P_ACS_OPTS' "$u" 2>/dev/null &&
	grep -qx 'ExecStop=/usr/bin/gpup2p acs --restore' "$u" && grep -qx 'Type=oneshot' "$u" &&
	echo "ok - systemd unit runs the installed binary (oneshot, restore on stop)" || echo "not ok - systemd unit content"
grep -q 'KERNEL=="gpup2p".*MODE="0660"' "$d/usr/lib/udev/rules.d/60-gpup2p.rules" 2>/dev/null &&
	echo "ok - udev rule: /dev/gpup2p mode 0660, group-owned" || echo "not ok - udev rule"
if command -v udevadm >/dev/null; then
	udevadm verify "$d/usr/lib/udev/rules.d/60-gpup2p.rules" >/dev/null 2>&1 && echo "ok - udevadm verify" ||
		{ udevadm verify --help >/dev/null 2>&1 && echo "not ok - udevadm verify: $(udevadm verify "$d/usr/lib/udev/rules.d/60-gpup2p.rules" 2>&1 | head -2)"; }
fi
# systemd-analyze verify, the unit's ordering and its commands: tests/cli/test_acs_unit.sh
# the unit where systemd looks for units (the installed unit's directory is one of systemd's unit paths)
unit_check() { # PREFIX
	local u
	u=$(cd "$d" && find . -name gpup2p-acs.service | sed 's|^\.||')
	command -v systemd-analyze >/dev/null || return 0
	[ -n "$u" ] && systemd-analyze unit-paths 2>/dev/null | grep -qx "$(dirname "$u")" &&
		echo "ok - PREFIX=$1: unit in one of systemd's unit paths ($u)" || echo "not ok - PREFIX=$1: unit at '$u'"
}
unit_check /usr
# zsh completion: where zsh's $fpath looks. Debian's zsh reads /usr/local/share/zsh/site-functions and
# /usr/share/zsh/vendor-completions (it has no /usr/share/zsh/site-functions); zsh's own default is
# $prefix/share/zsh/site-functions.
zsh_fpath=$(zsh -fc 'print -l $fpath' 2>/dev/null)
zsh_check() { # PREFIX DIR-WITHOUT-ZSH
	local z
	z=$(cd "$d" && find . -name _gpup2p | sed 's|^\.||')
	if [ -n "$zsh_fpath" ]; then
		[ -n "$z" ] && grep -qx "$(dirname "$z")" <<<"$zsh_fpath" &&
			echo "ok - PREFIX=$1: zsh completion in zsh's fpath ($z)" ||
			echo "not ok - PREFIX=$1: zsh completion at '$z', not in zsh's fpath: $(echo $zsh_fpath | head -c 200)"
	else
		[ "$z" = "$2/_gpup2p" ] && echo "ok - PREFIX=$1: zsh completion in $2 (no zsh here to ask)" ||
			echo "not ok - PREFIX=$1: zsh completion at '$z', want $2"
	fi
}
zsh_check /usr /usr/share/zsh/vendor-completions
make -s --no-print-directory uninstall PREFIX=/usr DESTDIR="$d" BUILD="$BUILD" >/dev/null 2>&1
n=$(find "$d" -type f | wc -l)
[ "$n" -eq 0 ] && echo "ok - make uninstall removes every file" || echo "not ok - $n files left after uninstall"
make -s --no-print-directory install PREFIX=/usr/local DESTDIR="$d" BUILD="$BUILD" >/dev/null 2>&1 &&
	[ -x "$d/usr/local/bin/gpup2p" ] && echo "ok - make install PREFIX=/usr/local" || echo "not ok - make install PREFIX=/usr/local"
zsh_check /usr/local /usr/local/share/zsh/site-functions
unit_check /usr/local
make -s --no-print-directory uninstall PREFIX=/usr/local DESTDIR="$d" BUILD="$BUILD" >/dev/null 2>&1
n=$(find "$d" -type f | wc -l)
[ "$n" -eq 0 ] && echo "ok - make uninstall PREFIX=/usr/local removes every file" || echo "not ok - $n files left after uninstall"
