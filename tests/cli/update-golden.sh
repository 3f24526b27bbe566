#!/bin/bash
# Propose new golden files (tests/cli/golden) from the current binary. The golden files are reviewed
# data: no test writes them. This script renders every case into a scratch folder, shows the diff
# against the golden files, and checks the new outputs' key facts against the fixture specs and
# nvidia-smi's output (tests/cli/golden_facts.py). Only with --write, and only when those checks
# pass, does it replace the golden files; review `git diff tests/cli/golden` before committing.
# usage: BUILD=build bash tests/cli/update-golden.sh [--write]
set -eu
BUILD=${BUILD:-build}
write=0
case ${1-} in
--write) write=1 ;;
"") ;;
*) echo "usage: update-golden.sh [--write]" >&2; exit 64 ;;
esac
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
. tests/cli/cases.sh
new=$(mktemp -d)
trap 'rm -rf "$new"' EXIT
for fx in $FIXTURES; do
	mkdir -p "$new/$fx"
	fixture_cases "$fx"
	for c in "${FCASES[@]}"; do
		name=${c%%|*}
		args=${c#*|}
		# shellcheck disable=SC2086
		"$BUILD/gpup2p" --root "$BUILD/fixtures/$fx" $args >"$new/raw" 2>"$new/err" && rc=0 || rc=$?
		golden_norm <"$new/raw" >"$new/$fx/$name.out"
		[ $rc -eq 0 ] || echo $rc >"$new/$fx/$name.rc"
		sed "s|$PWD/||g" "$new/err" >"$new/$fx/$name.err"
		[ -s "$new/$fx/$name.err" ] || rm -f "$new/$fx/$name.err"
	done
done
rm -f "$new/err" "$new/raw"
changed=0
for fx in $FIXTURES; do
	diff -ruN "tests/cli/golden/$fx" "$new/$fx" || changed=1
done
if ! python3 tests/cli/golden_facts.py tests/fixtures/specs "$new" $FIXTURES | grep '^not ok'; then
	echo "the new outputs agree with the fixture specs and nvidia-smi's output"
else
	echo "update-golden.sh: the new outputs contradict the fixture specs or nvidia-smi (above): not written" >&2
	exit 1
fi
if [ $changed = 0 ]; then
	echo "golden files unchanged"
elif [ $write = 0 ]; then
	echo "golden files would change (diff above): review it, then run again with --write"
else
	for fx in $FIXTURES; do
		mkdir -p "tests/cli/golden/$fx"
		rm -f "tests/cli/golden/$fx"/*.rc "tests/cli/golden/$fx"/*.err
		cp "$new/$fx"/* "tests/cli/golden/$fx/"
	done
	echo "golden files written: review git diff tests/cli/golden before committing"
fi
