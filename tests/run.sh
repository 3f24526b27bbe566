#!/bin/bash
# gpup2p test runner: unit tests, CLI golden tests, snapshot round trip.
# Tests print "ok - ...", "not ok - ..." and "skip - REASON" lines. A skip that tests/expected-skips
# (or the file $GPUP2P_EXPECTED_SKIPS) does not declare for that test counts as failed.
# One line per test as it finishes ("NAME: N passed, N failed, N skipped, S s"); the last line is
# "N passed, N failed, N skipped"; exit status 0 only when nothing failed.
# Arguments: the tests to run (unit test binaries, CLI scripts *.sh); default all of them.
set -u
BUILD=${BUILD:-build}
EXPECTED=${GPUP2P_EXPECTED_SKIPS:-tests/expected-skips}
export GPUP2P_FIXTURES=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids
export NO_COLOR=1
unset GPUP2P_ROOT
pass=0
fail=0
skipped=0

# expected TEST REASON: is the skip declared ("TEST REASON" or "* REASON" in $EXPECTED)?
expected() {
	local name reason
	[ -f "$EXPECTED" ] || return 1
	while read -r name reason; do
		case $name in '' | '#'*) continue ;; esac
		[ "$name" = "$1" ] || [ "$name" = '*' ] || continue
		[ "$reason" = "$2" ] && return 0
	done <"$EXPECTED"
	return 1
}

# tally TEST OUTPUT: add its checks to the counts; print its skips
tally() {
	local line
	pass=$((pass + $(grep -c '^ok ' <<<"$2")))
	fail=$((fail + $(grep -c '^not ok ' <<<"$2")))
	while IFS= read -r line; do
		if expected "$1" "${line#skip - }"; then
			skipped=$((skipped + 1))
			echo "$1: $line (expected: $EXPECTED)"
		else
			fail=$((fail + 1))
			echo "$1: $line: not an expected skip (declare it in $EXPECTED, with the reason)"
		fi
	done < <(grep '^skip - ' <<<"$2")
	grep -qE '^(ok|not ok|skip) - ' <<<"$2" && return
	echo "$1: ran no checks"
	tail -5 <<<"$2"
	fail=$((fail + 1))
}

[ $# -gt 0 ] || set -- "$BUILD"/tests/test_* tests/cli/test_*.sh
for t in "$@"; do
	name=$(basename "$t")
	p0=$pass f0=$fail s0=$skipped t0=$SECONDS
	case $t in
	*.sh)
		# a script that does not parse would stop at the error and count only the checks before it
		if ! out=$(bash -n "$t" 2>&1); then
			echo "$name: does not parse: $out"
			fail=$((fail + 1))
			continue
		fi
		out=$(BUILD=$BUILD bash "$t" 2>&1)
		grep -A12 '^not ok ' <<<"$out" | sed "s|^|$name: |"
		tally "$name" "$out"
		;;
	*)
		if [ ! -x "$t" ]; then # an unmatched default pattern is no test; a named one must run
			[[ $t == *'*'* ]] || { echo "$name: not an executable test"; fail=$((fail + 1)); }
			continue
		fi
		out=$("$t" 2>&1)
		rc=$?
		grep '^not ok ' <<<"$out" | sed "s|^|$name: |"
		tally "$name" "$out"
		if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' <<<"$out"; then
			echo "$name: exited $rc without a failed check"
			tail -5 <<<"$out"
			fail=$((fail + 1))
		fi
		;;
	esac
	[ -x "$t" ] || [[ $t == *.sh ]] || continue
	echo "$name: $((pass - p0)) passed, $((fail - f0)) failed, $((skipped - s0)) skipped, $((SECONDS - t0)) s"
done

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
