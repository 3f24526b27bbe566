#!/bin/bash
# Regenerate tests/cli/golden from the current binary. Review the diff before committing:
# the golden files are the reviewed, expected output.
set -eu
BUILD=${BUILD:-build}
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
. tests/cli/cases.sh
tmperr=$(mktemp)
trap 'rm -f "$tmperr"' EXIT
for fx in $FIXTURES; do
	mkdir -p tests/cli/golden/$fx
	for c in "${CASES[@]}"; do
		name=${c%%|*}
		args=${c#*|}
		# shellcheck disable=SC2086
		"$BUILD/gpup2p" --root "$BUILD/fixtures/$fx" $args >tests/cli/golden/$fx/$name.out 2>"$tmperr" && rc=0 || rc=$?
		if [ $rc -ne 0 ]; then echo $rc >tests/cli/golden/$fx/$name.rc; else rm -f tests/cli/golden/$fx/$name.rc; fi
		sed "s|$PWD/||g" "$tmperr" >tests/cli/golden/$fx/$name.err
		[ -s tests/cli/golden/$fx/$name.err ] || rm -f tests/cli/golden/$fx/$name.err
	done
done
