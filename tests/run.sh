#!/bin/bash
# gpup2p test runner: unit tests, CLI golden tests, snapshot round trip.
# The last line is "N passed, N failed"; exit status 0 only when nothing failed.
set -u
BUILD=${BUILD:-build}
export GPUP2P_FIXTURES=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids
export NO_COLOR=1
unset GPUP2P_ROOT
pass=0
fail=0

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	out=$("$t" 2>&1)
	rc=$?
	p=$(grep -c '^ok ' <<<"$out")
	f=$(grep -c '^not ok ' <<<"$out")
	pass=$((pass + p))
	fail=$((fail + f))
	grep '^not ok ' <<<"$out" | sed "s|^|$(basename "$t"): |"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$(basename "$t"): exited $rc without a failed check"
		echo "$out" | tail -5
		fail=$((fail + 1))
	fi
done

for s in tests/cli/test_*.sh; do
	out=$(BUILD=$BUILD bash "$s" 2>&1)
	p=$(grep -c '^ok ' <<<"$out")
	f=$(grep -c '^not ok ' <<<"$out")
	pass=$((pass + p))
	fail=$((fail + f))
	grep -A12 '^not ok ' <<<"$out" | sed "s|^|$(basename "$s"): |"
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "$(basename "$s"): ran no checks"
		echo "$out" | tail -5
		fail=$((fail + 1))
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
