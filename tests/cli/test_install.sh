#!/bin/bash
# make install PREFIX DESTDIR puts the binary, man pages and completions where they belong, the
# installed completions offer every option of every command, and make uninstall removes them.
set -u
# make check WERROR=1 (CI) hands its variables down (MAKEFLAGS, environment): builds here pick their own
unset MAKEFLAGS MFLAGS MAKELEVEL WERROR CPPFLAGS CFLAGS LDFLAGS LDLIBS
BUILD=${BUILD:-build}
. tests/cli/lib.sh
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
# --- completion: both scripts ask the installed binary (`gpup2p __complete`, from the option tables) ---
# every option each command's --help lists completes, in bash (bash-completion's own _init_completion)
# and in zsh (its completion functions stubbed: the candidates the script hands them are recorded)
G=$d/usr/bin/gpup2p
cmds=$("$G" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }')
# help_opts CMD...: the options a help screen lists ("  --a, --b  text", "  -v, --verbose", "--color=WHEN")
help_opts() { "$G" "$@" --help | grep -oE '^  (-[a-z]|--[a-z0-9-]+)(, --?[a-z0-9-]+)*' | grep -oE -- '--?[a-z0-9-]+'; }
"$G" --help | grep -q __complete && nok "__complete is listed in help" || ok "__complete is hidden from help"
miss=""
while read -r cmd; do
	[ -n "$cmd" ] || continue
	# shellcheck disable=SC2086
	got=$("$G" __complete $cmd -- | cut -f1 | sed 's/=$//')
	for o in $(help_opts $cmd) $([ -z "$cmd" ] || help_opts | grep -vx -- --version); do
		grep -qx -- "$o" <<<"$got" || miss+=" [$cmd] $o"
	done
done <<<"$(printf '\n%s\n' "$cmds" "bench rdma")"
[ -n "$cmds" ] && [ -z "$miss" ] && ok "__complete offers every option of every command's help" ||
	nok "__complete misses:$miss"
bc=$d/usr/share/bash-completion/completions/gpup2p
if [ -f /usr/share/bash-completion/bash_completion ]; then
	# bashcomp LINE...: what bash offers for each LINE (cursor at its end), one "LINE => a b c" per line
	bashcomp() {
		PATH=$d/usr/bin:$PATH bash -c '. /usr/share/bash-completion/bash_completion; . "$1"; shift
		for l; do
			COMP_LINE=$l COMP_POINT=${#l}
			read -ra COMP_WORDS <<<"$l"; [[ $l == *" " ]] && COMP_WORDS+=("")
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMPREPLY=()
			_gpup2p gpup2p "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
			echo "$l => ${COMPREPLY[*]}"
		done' bash "$bc" "$@" 2>&1
	}
	lines=()
	while read -r cmd; do
		for o in $(help_opts $cmd); do lines+=("gpup2p $cmd ${o}"); done
	done <<<"$(printf '%s\n' "$cmds" "bench rdma")"
	out=$(bashcomp "${lines[@]}")
	bad=$(awk -F ' => ' '{ n = split($1, w, " "); if ((" " $2 " ") !~ (" " w[n] "=? ")) print }' <<<"$out")
	[ "${#lines[@]}" -gt 50 ] && [ -z "$bad" ] && ok "bash: each of ${#lines[@]} options completes from its prefix" ||
		nok "bash completion: $(head -5 <<<"$bad")"
	out=$(cd "$d" && bashcomp "gpup2p --color=al" "gpup2p acs --mode " "gpup2p to" "gpup2p copy " \
		"gpup2p bench rdma --op r" "gpup2p doctor --only pcie.acs,bar.s" "gpup2p help sn")
	grep -qx 'gpup2p --color=al => always' <<<"$out" && grep -qx 'gpup2p acs --mode  => redirect zero' <<<"$out" &&
		grep -qx 'gpup2p to => topo' <<<"$out" && grep -qx 'gpup2p copy  => h2d d2h d2d peer' <<<"$out" &&
		grep -qx 'gpup2p bench rdma --op r => read' <<<"$out" && grep -qx 'gpup2p help sn => snapshot' <<<"$out" &&
		grep -qx 'gpup2p doctor --only pcie.acs,bar.s => pcie.acs,bar.small' <<<"$out" &&
		ok "bash: values, commands, paths, check lists" || nok "bash values: $out"
else
	skip "no bash-completion"
fi
if command -v zsh >/dev/null; then
	# zshcomp WORD...: the candidates the zsh script hands to _describe/compadd for the last WORD
	zshcomp() {
		PATH=$d/usr/bin:$PATH zsh -fc '
		_describe() { shift 3; print -l -- ${(P)1%%:*} }
		compadd() { local a; for a in "$@"; [[ $a == -a ]] && { print -l -- ${(P)@[-1]}; return }; }
		_files() { print -- "(files $*)" }; _directories() { print -- "(directories)" }
		_call_program() { shift; "$@" }
		f=$1; shift; words=("$@"); CURRENT=$#; source "$f"' zsh "$(find "$d" -name _gpup2p)" "$@" 2>&1
	}
	zmiss=""
	while read -r cmd; do
		# shellcheck disable=SC2086
		got=$(zshcomp gpup2p $cmd -- | sed 's/\\//g; s/=$//')
		for o in $(help_opts $cmd); do grep -qx -- "$o" <<<"$got" || zmiss+=" [$cmd] $o"; done
	done <<<"$(printf '%s\n' "$cmds" "bench rdma")"
	[ -z "$zmiss" ] && ok "zsh: every option of every command" || nok "zsh misses:$zmiss"
	out=$(zshcomp gpup2p --color=; zshcomp gpup2p snapshot ''; zshcomp gpup2p --root '')
	grep -qx -- '--color=always' <<<"$out" && grep -qx '(files -g \*.tar.gz)' <<<"$out" &&
		grep -qx '(directories)' <<<"$out" && ok "zsh: values, archives, directories" || nok "zsh values: $out"
fi
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
