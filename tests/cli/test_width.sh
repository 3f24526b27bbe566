#!/bin/bash
# Output for people fits an 80-column terminal: every help screen, and doctor's text on every fixture
# under a pseudo-terminal (script) of COLUMNS=80; not a terminal: not wrapped. Identical findings fold
# into one in text (JSON keeps one per subject), one heading per check; acs.redirect's fix is chosen
# from the machine (iommu=pt first where the IOMMU translates) and its /etc/default/grub line keeps
# the ';' of pci=disable_acs_redir=A;B through grub.cfg's lexer.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FX=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT COLUMNS
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# too_wide WIDTH: stdin's lines wider than WIDTH, but for a lone word (a boot parameter printed whole so
# that it can be copied)
too_wide() { awk -v w="$1" 'length($0) > w && $0 ~ /[^ ] +[^ ]/'; }

# --- help screens -------------------------------------------------------------------------------------
for cmd in "" doctor topo bar acs enable pin map copy bench "bench rdma" report snapshot; do
	# shellcheck disable=SC2086
	out=$("$BIN" $cmd --help 2>&1); rc=$?
	wide=$(awk 'length($0) > 80' <<<"$out")
	[ $rc -eq 0 ] && [ -z "$wide" ] && ok "gpup2p $cmd --help fits 80 columns" ||
		cli_fail "help wider than 80 columns" "$rc" "$wide" "$cmd --help"
done

# --- doctor under a terminal of 80 columns --------------------------------------------------------------
# tty ARGS...: gpup2p ARGS on a pseudo-terminal (script's has no size: COLUMNS decides), escapes removed
tty() { COLUMNS=${W:-80} script -qec "$(printf '%q ' "$BIN" "$@")" /dev/null | tr -d '\r' | sed 's/\x1b\[[0-9;]*m//g'; }
command -v script >/dev/null || { nok "script (util-linux) is missing"; exit 0; }
for f in "$FX"/*/; do
	f=${f%/}
	[ -d "$f/sys" ] || continue
	out=$(tty --root "$f" doctor -v 2>/dev/null)
	wide=$(grep -v '^gpup2p: ' <<<"$out" | too_wide 80)
	[ -n "$out" ] && [ -z "$wide" ] && ok "doctor -v on $(basename "$f") fits 80 columns on a terminal" ||
		cli_fail "doctor wider than 80 columns" "?" "$wide" "--root $f doctor -v"
done
out=$(W=60 tty --root "$FX/dgx-h100" doctor)
grep -q '^  pcie.relaxed_ordering  0000:15:00.0 (NIC0),' <<<"$out" && [ -z "$(too_wide 60 <<<"$out")" ] &&
	ok "COLUMNS=60: wrapped at 60, the subject on the finding's first line" || nok "COLUMNS=60: $out"
out=$("$BIN" --root "$FX/dgx-h100" doctor)
grep -q 'strictly ordered, which costs GPUDirect RDMA bandwidth on some platforms (AMD EPYC, virtual machines)$' \
	<<<"$out" && ok "not a terminal: a finding's message is one line" || nok "not a terminal: wrapped: $out"

# --- acs, bar and topo under a terminal of 80 columns ----------------------------------------------------
# Their text and stderr's warnings wrap on a terminal; topo's matrix is nvidia-smi's, cell for cell (its
# rows, the lines with tabs, grow with the devices: gpup2p-topo(1) says so), its legend wraps.
for f in "$FX"/*/; do
	f=${f%/}
	[ -d "$f/sys" ] || continue
	for cmd in acs bar "topo --tree" topo; do
		# shellcheck disable=SC2086
		out=$(tty --root "$f" $cmd 2>&1)
		# a GRUB_CMDLINE_LINUX line is printed whole, to be copied into /etc/default/grub
		wide=$(grep -v "$(printf '\t')" <<<"$out" | grep -v '^  GRUB_CMDLINE_LINUX=' | too_wide 80)
		[ -n "$out" ] && [ -z "$wide" ] && ok "$cmd on $(basename "$f") fits 80 columns on a terminal" ||
			cli_fail "$cmd wider than 80 columns" "?" "$wide" "--root $f $cmd"
	done
done
out=$(W=60 tty --root "$FX/seed4x2" topo --tree)
grep -q '^|   `-- 0000:01:00.0 GPU0 \[10de:1db4\]' <<<"$out" && grep -q '^|             ' <<<"$out" &&
	[ -z "$(too_wide 60 <<<"$out")" ] && ok "topo --tree at 60 columns: a long line goes on below, the bars kept" ||
	nok "topo --tree at 60 columns: $out"
out=$("$BIN" --root "$FX/sriov" acs)
grep -q '^  on the path of: SYS GPU0-GPU2 GPU0-NIC2+3VFs GPU1-GPU2 GPU1-NIC2+3VFs GPU2-NIC0+6VFs .*NIC1+2VFs-NIC2+3VFs$' \
	<<<"$out" && ok "acs not on a terminal: one line per list" || nok "acs not a terminal: wrapped: $out"
out=$(tty --root "$FX/broken-optional" topo | grep -A1 '^gpup2p: warning:')
[ -n "$out" ] && [ -z "$(too_wide 80 <<<"$out")" ] && ok "stderr's warnings wrap on a terminal" ||
	nok "stderr's warnings on a terminal: $out"

# --- folding, headings, counts --------------------------------------------------------------------------
out=$("$BIN" --root "$FX/dgx-h100" doctor)
# --pretty: every finding (one-line --json keeps the most urgent under 64 KiB, and this 16-device tree
# comes near the bound: the folding, not the bound, is tested here)
n=$("$BIN" --root "$FX/dgx-h100" doctor --json --pretty | python3 -c 'import json,sys
print(sum(f["id"] == "pcie.relaxed_ordering" for f in json.load(sys.stdin)["findings"]))' 2>&1)
[ "$(grep -c 'pcie.relaxed_ordering' <<<"$out")" = 1 ] && [ "$(grep -c '^ *fix' <<<"$out")" = 1 ] &&
	grep -q '^  pcie.relaxed_ordering  0000:15:00.0 (NIC0), 0000:16:00.0 (NIC1), .*0000:b6:00.0 (NIC7): Relaxed Ordering disabled' <<<"$out" &&
	grep -q 'fix ({} = each subject): setpci -s {} CAP_EXP+8.w=0010:0010' <<<"$out" &&
	grep -q '^info (8 findings)$' <<<"$out" && grep -q '^ok (145 findings of 20 checks)$' <<<"$out" && [ "$n" = 8 ] &&
	ok "eight NICs' identical advice: one finding, eight subjects, one fix in text; 8 findings in JSON" ||
	nok "folding: json $n; $out"
for f in "$FX"/*/; do
	[ -d "$f/sys" ] || continue
	dup=$("$BIN" --root "$f" doctor -v 2>/dev/null | awk '/^[a-z]+ \([0-9]+ finding/ { h = $1; next }
		/^  [a-z_]+\.[a-z_0-9]+ / { if (seen[$1] && seen[$1] != h) print $1; seen[$1] = h }')
	[ -z "$dup" ] && ok "doctor -v on $(basename "$f"): each check under one heading" ||
		nok "$(basename "$f"): under two headings: $dup"
done

# --- acs.redirect's fix, from what doctor knows ---------------------------------------------------------
out=$("$BIN" --root "$FX/workstation" doctor --only acs.redirect)
"$BIN" --root "$FX/workstation" acs --disable --dry-run >/dev/null 2>&1; rc=$?
grep -q 'fix: first boot with iommu=pt .*GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX iommu=pt".* then systemctl enable --now gpup2p-acs.service' <<<"$out" &&
	! grep -q 'fix: gpup2p acs --disable' <<<"$out" && [ $rc = 64 ] &&
	ok "translating IOMMU (acs --disable refuses, exit 64): the fix is iommu=pt first, then the unit" ||
	nok "IOMMU fix: acs rc=$rc; $out"
out=$("$BIN" --root "$FX/acsguard" doctor --only acs.redirect)
grep -q 'fix: none while VFIO owns a device below it: 0000:07:00.0 below it is bound to vfio-pci' <<<"$out" &&
	ok "a VFIO-owned device below: no command that would refuse" || nok "VFIO fix: $out"

# the /etc/default/grub line: sourced by sh, copied into grub.cfg's linux line as grub-mkconfig's
# 10_linux does, then split by a lexer with grub.cfg's rules (POSIX quoting, ';' a separator)
line=$("$BIN" --root "$FX/seed4x2" doctor --only acs.redirect | grep -om1 'GRUB_CMDLINE_LINUX=.*"$')
want=$("$BIN" --root "$FX/seed4x2" acs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["boot_parameter"])')
printf 'GRUB_CMDLINE_LINUX="quiet"\n%s\n' "$line" >"$T/grub"
# shellcheck disable=SC2016
sh -c '. "$1" && printf "menuentry x {\n\tlinux\t/vmlinuz root=/dev/sda1 ro %s\n}\n" "$GRUB_CMDLINE_LINUX"' sh "$T/grub" >"$T/grub.cfg"
got=$(python3 - "$T/grub.cfg" <<'EOF'
import shlex, sys
for l in open(sys.argv[1]):
    if l.strip().startswith("linux"):
        lx = shlex.shlex(l, posix=True, punctuation_chars=";&|<>")
        lx.whitespace_split = True
        toks = list(lx)
        assert ";" not in toks, toks
        print(" ".join(toks[2:]))
EOF
)
[[ $want == *';'* ]] && [ "$got" = "root=/dev/sda1 ro quiet $want" ] &&
	ok "the GRUB line keeps pci=disable_acs_redir's ';' through sh and grub.cfg ($(grep -o ';' <<<"$want" | wc -l) of them)" ||
	nok "GRUB line: '$line' gives '$got', want '$want'"
if command -v grub-script-check >/dev/null; then
	grub-script-check "$T/grub.cfg" && ok "grub-script-check accepts the generated grub.cfg" || nok "grub-script-check"
else
	skip "no grub-script-check"
fi

# --- bench --help: one latency unit per mode, said once ------------------------------------------------
out=$("$BIN" bench --help)
[ "$(grep -oE '\bns\b|µs|microseconds?|nanoseconds?|\bus\b' <<<"$out" | wc -l)" = 2 ] &&
	grep -q 'latency in us$' <<<"$out" && grep -q '(microseconds): per copy, or per load with --sm' <<<"$out" &&
	! grep -qE '\bns\b' <<<"$out" && ok "bench --help: latency in us for both modes, said once" ||
	nok "bench --help latency units: $(grep -nE 'ns|us|seconds' <<<"$out")"
