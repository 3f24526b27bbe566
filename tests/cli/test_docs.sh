#!/bin/bash
# Documentation matches the code: every option a command's --help lists is in its man page and among
# the completions (`gpup2p __complete CMD --`, which both scripts call: tests/cli/test_install.sh runs
# them); every command is in the README and the man page; README examples run.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
FX=$PWD/$BUILD/fixtures

opts_of() { "$BIN" help "$1" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
# has OPT: stdin holds OPT as a whole token (--all does not match inside --all-pairs)
has() { grep -qE -- "(^|[^a-z0-9-])$1(\$|[^a-z0-9-])"; }
! has --all <<<"copy --all-pairs" && ! has --all <<<"--allx" && has --all <<<'\fB--all\fR' && has --all <<<"x --all=1" &&
	has --all-pairs <<<"--all-pairs" && echo "ok - option matcher: whole tokens only" || echo "not ok - option matcher"
globals=$("$BIN" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
# the commands are those gpup2p --help lists: a new command cannot miss its documentation
cmds=$("$BIN" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ "$(wc -w <<<"$cmds")" -ge 6 ] && echo "ok - commands listed by --help: $(echo $cmds)" || echo "not ok - commands: $cmds"
for cmd in $cmds; do
	roff=$(sed 's/\\-/-/g' "man/gpup2p-$cmd.1" man/gpup2p.1)
	comp=$("$BIN" __complete "$cmd" -- | cut -f1)
	[ -n "$comp" ] && echo "ok - $cmd has completions" || echo "not ok - $cmd: no completion"
	for o in $(opts_of "$cmd"); do
		grep -qxF -- "$o" <<<"$globals" && [ "$o" = --version ] && continue # gpup2p --version alone
		has "$o" <<<"$roff" && echo "ok - $cmd $o in man page" || echo "not ok - $cmd $o missing from man page"
		has "$o" <<<"$comp" && echo "ok - $cmd $o completes" || echo "not ok - $cmd $o not among its completions"
	done
	grep -q "gpup2p $cmd" README.md && echo "ok - README documents $cmd" || echo "not ok - README lacks $cmd"
	[ -f "man/gpup2p-$cmd.1" ] && grep -q "gpup2p\\\\-$cmd" man/gpup2p.1 && echo "ok - gpup2p.1 refers to $cmd" ||
		echo "not ok - gpup2p.1 does not refer to $cmd"
done
for o in $globals; do
	has "$o" < <(sed 's/\\-/-/g' man/gpup2p.1) && echo "ok - global $o in gpup2p.1" || echo "not ok - global $o not in gpup2p.1"
	"$BIN" __complete -- | cut -f1 | has "$o" && echo "ok - global $o completes" || echo "not ok - global $o does not complete"
done
# every exit code of the README table is in the man page
for c in 0 1 2 3 64 69 77; do
	grep -qE "^\| $c \|" README.md && grep -qE "^$c	" man/gpup2p.1 && echo "ok - exit code $c documented" ||
		echo "not ok - exit code $c"
done
# README examples ("$ gpup2p ..." and "$ sudo gpup2p ...") run, against a private copy of a fixture
# root (acs --disable/--restore write into it), in the README's order; copy and bench run over the
# libcuda test double (no GPU here)
export GPUP2P_LIBCUDA=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
# bench rdma over the libibverbs test double, with the fixture's eight ConnectX-7s at NDR 4x (400 Gb/s):
# the double's own clock gives 45 GB/s whatever the machine's load, so --min-bw write=20 holds
export GPUP2P_LIBIBVERBS=$PWD/$BUILD/tests/fakeverbs/libibverbs.so.1 FAKEVERBS_DEVICES=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export FAKEVERBS_SPEED=128 FAKEVERBS_WIDTH=2
unset FAKEVERBS_GBPS
EX=$(mktemp -d)
cp -a "$FX/dgx-h100" "$EX/root"
grep -E '^    \$ (sudo )?gpup2p ' README.md | sed -E 's/^    \$ (sudo )?//; s/ +#.*$//' | while read -r line; do
	case $line in *snapshot*|*"&&"*) continue ;; esac
	# shellcheck disable=SC2086
	out=$(GPUP2P_ROOT=$EX/root "$BIN" ${line#gpup2p } 2>&1) && echo "ok - README example runs: $line" ||
		cli_fail "README example fails" $? "$out" "$line"
done
# the quick start says where the binary is, how to try it on fixtures (every machine it names exists,
# every generated machine is named), and that bash completion needs bash-completion (recommended)
qs=$(sed -n '/^## Quick start/,/^## /p' README.md)
named=$(grep -oE '`[a-z0-9-]+`' <<<"$(sed -n '/^Machines (build\/fixtures\/NAME)/,/^$/p' README.md)" | tr -d '`' | sort -u)
have=$(for d in "$FX"/*/; do [ -d "$d/sys" ] && basename "$d"; done | sort -u)
grep -q 'build/gpup2p' <<<"$qs" && grep -q 'make install' <<<"$qs" && grep -q 'make fixtures' <<<"$qs" &&
	grep -q -- '--root build/fixtures/' <<<"$qs" && [ -n "$have" ] && [ -z "$(comm -13 <(echo "$named") <(echo "$have"))" ] &&
	ok "README quick start: the binary, make install, make fixtures and every fixture machine" ||
	nok "README quick start: machines not named: $(comm -13 <(echo "$named") <(echo "$have") | tr '\n' ' ')"
for m in $(grep -oE 'build/fixtures/(doctor/)?[a-z0-9-]+' <<<"$qs" | grep -v NAME | sort -u); do
	[ -d "$PWD/$BUILD/${m#build/}" ] && ok "README names $m: it exists" || nok "README names $m: missing"
done
grep -q 'bash-completion' <<<"$qs" && grep -A3 '^Package: gpup2p$' debian/control | grep -q '^Recommends:.*bash-completion' &&
	ok "bash completion: README says it needs bash-completion, the package recommends it" ||
	nok "bash-completion not in README or debian/control Recommends"
grep -qE 'make check. about [0-9]+ min' <<<"$qs" && grep -qE '\.ci/run.*about [0-9]+ min' <<<"$qs" &&
	ok "README says how long make check and CI take" || nok "README: no durations"
tmp=$(mktemp -d)
(cd "$tmp" && GPUP2P_ROOT=$FX/dgx-h100 "$OLDPWD/$BIN" -q snapshot node17.tar.gz && tar xzf node17.tar.gz &&
	"$OLDPWD/$BIN" --root node17 topo >/dev/null) && echo "ok - README snapshot example runs" ||
	echo "not ok - README snapshot example"
rm -rf "$tmp"
# man pages format without errors
for m in man/*.1; do
	err=$(man -l -Tutf8 "$m" 2>&1 >/dev/null | grep -v 'table wider than line width' | grep -v "around line")
	[ -z "$err" ] && [ -n "$(man -l -Tutf8 "$m" 2>/dev/null)" ] && echo "ok - $m formats" || echo "not ok - $m: $err"
done
bash -n completions/gpup2p.bash && echo "ok - bash completion parses" || echo "not ok - bash completion syntax"
zsh -n completions/_gpup2p && echo "ok - zsh completion parses" || echo "not ok - zsh completion syntax"
rm -rf "$EX"
