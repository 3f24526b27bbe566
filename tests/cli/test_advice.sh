#!/bin/bash
# Advice cannot drift from the parser: every `gpup2p CMD --opt` that libcore's strings (fix texts,
# explanations), the man pages, README and HACKING name is an option in CMD's table (tests/cli/advice.py
# asks `gpup2p __complete`); a planted bad spelling is caught; and cli/ parses no option by hand outside
# the tables (cli/opts*.c; complete.c reads the tables).
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

mapfile -t files < <(git ls-files 'libcore/*.c' 'libcore/*.h' 'man/*.1' README.md HACKING.md)
[ "${#files[@]}" -gt 50 ] || nok "only ${#files[@]} files to read (not a git checkout?)"
out=$(python3 tests/cli/advice.py "$BIN" "${files[@]}"); rc=$?
[ $rc -eq 0 ] && ok "every gpup2p CMD --opt named in libcore, man, README, HACKING exists (${out##*# })" ||
	cli_fail "advice names options the tables lack" $rc "$out" __complete

# planted: a fix text split over two C literals, a roff spelling, a sub-command, a global option first,
# a code span without the program's name
printf 'f(c, "then run gpup2p acs "\n\t"--disabel --all");\n' >"$T/fix.c"
printf '.B gpup2p \\-\\-root DIR bench rdma \\-\\-server \\-\\-bnd ADDR\n' >"$T/page.1"
printf 'run `gpup2p doctor --actve` and `gpup2p bench --engine sm` (fine), `snapshot --info`\n' >"$T/README.md"
out=$(python3 tests/cli/advice.py "$BIN" "$T/fix.c" "$T/page.1" "$T/README.md"); rc=$?
[ $rc -eq 1 ] && grep -q 'gpup2p acs --disabel' <<<"$out" && grep -q 'gpup2p bench rdma --bnd' <<<"$out" &&
	grep -q 'gpup2p doctor --actve' <<<"$out" && grep -q 'gpup2p snapshot --info' <<<"$out" &&
	[ "$(grep -c 'has no' <<<"$out")" -eq 4 ] &&
	ok "planted bad spellings caught, the right ones let through" || cli_fail "planted spellings" $rc "$out" __complete

# libcore's strings spell none of gpup2p's options bare: each names its command (checked above), other
# programs' options pass, BARE_ALLOWED in advice.py lists what cannot (with why)
mapfile -t csrc < <(git ls-files 'libcore/*.c' 'libcore/*.h')
out=$(python3 tests/cli/advice.py --bare "$BIN" "${csrc[@]}"); rc=$?
[ $rc -eq 0 ] && ok "no bare option of gpup2p in libcore's strings (${out##*# })" ||
	cli_fail "libcore spells options without their command" $rc "$out" __complete
printf 'f(c, "not requested: may need root: run doctor "\n\t"--kmsg");\ng("systemctl enable --now x; or gpup2p doctor --kmsg");\n' >"$T/bare.c"
out=$(python3 tests/cli/advice.py --bare "$BIN" "$T/bare.c"); rc=$?
[ $rc -eq 1 ] && [ "$(grep -c ': bare ' <<<"$out")" -eq 1 ] && grep -q 'bare --kmsg' <<<"$out" &&
	ok "planted bare --kmsg caught; systemctl --now and gpup2p doctor --kmsg let through" ||
	cli_fail "planted bare spelling" $rc "$out" __complete

# no option spelled by hand in cli/: strcmp against "-x..." outside the option tables
hand=$(grep -nE 'str(n)?cmp\([^;]*"-[-a-zA-Z]' cli/*.c | grep -vE '^cli/(opts[a-z_]*|complete)\.c:')
[ -z "$hand" ] && ok "cli/ parses no option outside the tables" || nok "options parsed by hand: $hand"

# the rules' own terms: each option, --opt=VALUE and word is one the command has (else a rule never fires)
out=$(python3 tests/cli/advice.py --rules "$BIN" cli/cmd_*.c); rc=$?
[ $rc -eq 0 ] && ok "every rule term names an option, value or word of its command (${out##*# })" ||
	cli_fail "rules name what the tables lack" $rc "$out" __complete
sed -e 's/{ OPT_NEEDS, "--pinned --pageable", "h2d d2h"/{ OPT_NEEDS, "--pinned --pagable", "h2d d2h"/' \
	-e 's/"--via=map", "h2d d2h"/"--via=mapp", "h2d d2h"/' -e 's/"--to", "peer"/"--to", "pear"/' cli/cmd_copy.c >"$T/cmd_copy.c"
out=$(python3 tests/cli/advice.py --rules "$BIN" "$T/cmd_copy.c"); rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'has no such' <<<"$out")" -eq 3 ] && grep -q 'term --pagable' <<<"$out" &&
	grep -q 'term --via=mapp' <<<"$out" && grep -q 'term pear' <<<"$out" && ok "planted misspelt rule terms caught" ||
	cli_fail "planted rule terms" $rc "$out" __complete
