#!/bin/bash
# The may-use rules of HACKING.md's table hold for every include of libcore/ and cli/ (tests/cli/layers.py):
# no module includes one it may not use, no circle in the table, every public header has an owner;
# cli/ is compiled against include/gpup2p/ only. Each kind of break is planted in a copy to show the
# check can fail.
set -u
unset MAKEFLAGS MFLAGS MAKELEVEL
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if out=$(python3 tests/cli/layers.py 2>&1); then
	ok "every include keeps HACKING.md's may-use table, and the table has no circle"
else
	nok "includes break HACKING.md's may-use table: $out"
fi

# plant NAME WANT SETUP: in a copy of libcore/, cli/ and HACKING.md, SETUP (run there) breaks a rule;
# the check must fail with a line matching WANT
plant() {
	rm -rf "$T/t" && mkdir "$T/t" && cp -r libcore cli HACKING.md "$T/t/" || { nok "planted $1: copy failed"; return; }
	(cd "$T/t" && eval "$3") || { nok "planted $1: the edit failed"; return; }
	if out=$(python3 tests/cli/layers.py --top "$T/t" 2>&1); then
		nok "planted $1: not caught"
	elif grep -qE -- "$2" <<<"$out"; then
		ok "planted $1: caught"
	else
		nok "planted $1: failed without naming it ($2): $out"
	fi
}
plant "pci including doctor" 'libcore/pci/pci.c:[0-9]+: pci may not use doctor' \
	"sed -i '0,/#include \"gpup2p\\/pci.h\"/s//#include \"gpup2p\\/pci.h\"\\n#include \"gpup2p\\/doctor.h\"/' libcore/pci/pci.c"
plant "cuda including an xfer header again" 'smcopy.h:[0-9]+: cuda may not use xfer' \
	"sed -i 's|#include \"gpup2p/cuda.h\"|#include \"gpup2p/cuda.h\"\\n#include \"gpup2p/xfer.h\"|' libcore/include/gpup2p/smcopy.h"
plant "an internal header of another folder" 'libcore/report/report.c:[0-9]+: report may not use acs' \
	"sed -i 's|#include \"report/internal.h\"|&\\n#include \"acs/state.h\"|' libcore/report/report.c"
plant "cli including an internal header" 'cli/cmd_acs.c:[0-9]+: cli/ includes gpup2p' \
	"sed -i '0,/#include \"cli.h\"/s//#include \"cli.h\"\\n#include \"acs\\/state.h\"/' cli/cmd_acs.c"
plant "a circle in the table" 'circle in HACKING.md.s table: .*base' \
	"sed -i 's/^| base | \\(.*\\) | |\$/| base | \\1 | pci |/' HACKING.md"
plant "a header nobody owns" 'include/gpup2p/orphan.h: no module owns' "touch libcore/include/gpup2p/orphan.h"

# cli/ objects are compiled without -Ilibcore: an internal header cannot even be found from there
line=$(make -n --no-print-directory -W cli/cmd_acs.c "${BUILD:-build}/cli/cmd_acs.o" 2>/dev/null | grep -- '-c -o')
if [ -z "$line" ]; then
	nok "make -n printed no compile line for cli/cmd_acs.o"
elif grep -qE -- '-Ilibcore( |$)' <<<"$line"; then
	nok "cli/ is compiled with -Ilibcore: $line"
elif grep -q -- '-Ilibcore/include' <<<"$line"; then
	ok "cli/ is compiled against libcore/include only"
else
	nok "cli/ compile line without -Ilibcore/include: $line"
fi
line=$(make -n --no-print-directory -W libcore/topo.c "${BUILD:-build}/libcore/topo.o" 2>/dev/null | grep -- '-c -o')
grep -qE -- '-Ilibcore( |$)' <<<"$line" && ok "libcore/ is compiled with -Ilibcore (its folders' internal headers)" ||
	nok "libcore/ compile line lacks -Ilibcore: $line"
