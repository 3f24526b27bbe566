#!/bin/bash
# The test runner itself (tests/run.sh): skips are counted and fail the run unless declared expected,
# a test that runs no check, dies without a failed one or does not parse is a failure, and unit tests fail (rather
# than skip or pass) when their fixture trees are missing.
set -u
BUILD=${BUILD:-build}
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# a run.sh that ignored its arguments would run this script again, and again
[ -z "${GPUP2P_RUNNER_TEST:-}" ] || { nok "run.sh ran every test although told which"; exit 0; }
export GPUP2P_RUNNER_TEST=1

# run.sh on the given tests with the given expected-skips file: "rc|last line"
runner() {
	local allow=$1 out rc
	shift
	out=$(GPUP2P_EXPECTED_SKIPS=$allow BUILD=$BUILD bash tests/run.sh "$@" 2>&1)
	rc=$?
	echo "$rc|$(tail -1 <<<"$out")"
}

printf '#!/bin/sh\necho "ok - one"\necho "skip - needs a thing"\n' >"$T/test_fakeskip"
printf '#!/bin/sh\necho "ok - one"\necho "ok - two"\n' >"$T/test_fakeok"
printf '#!/bin/sh\necho "ok - one"\nexit 3\n' >"$T/test_fakedies"
printf '#!/bin/sh\necho "nothing here"\n' >"$T/test_fakenone"
chmod +x "$T"/test_fake*
printf '. tests/cli/lib.sh\nok "one"\nskip "no widget here"\n' >"$T/test_fakecli.sh"
: >"$T/none"
printf '# comment\n\ntest_fakeskip needs a thing\n' >"$T/allow"
printf 'test_other needs a thing\n' >"$T/other"
printf '*\tno widget here\n' >"$T/any"

r=$(runner "$T/none" "$T/test_fakeok")
[ "$r" = "0|2 passed, 0 failed, 0 skipped" ] && ok "runner: two passes -> exit 0, 'N passed, N failed, N skipped'" ||
	nok "runner on passing test: $r"
r=$(runner "$T/none" "$T/test_fakeskip")
[ "$r" = "1|1 passed, 1 failed, 0 skipped" ] && ok "runner: an undeclared skip fails the run" || nok "undeclared skip: $r"
r=$(runner "$T/allow" "$T/test_fakeskip")
[ "$r" = "0|1 passed, 0 failed, 1 skipped" ] && ok "runner: a declared skip is counted as skipped, exit 0" ||
	nok "declared skip: $r"
r=$(runner "$T/other" "$T/test_fakeskip")
[ "$r" = "1|1 passed, 1 failed, 0 skipped" ] && ok "runner: a skip declared for another test still fails" ||
	nok "skip declared elsewhere: $r"
r=$(runner "$T/none" "$T/test_fakecli.sh")
[ "$r" = "1|1 passed, 1 failed, 0 skipped" ] && ok "runner: lib.sh skip in a CLI script fails unless declared" ||
	nok "CLI skip: $r"
r=$(runner "$T/any" "$T/test_fakecli.sh" "$T/test_fakeok")
[ "$r" = "0|3 passed, 0 failed, 1 skipped" ] && ok "runner: '* REASON' declares a skip for any test" || nok "wildcard: $r"
r=$(runner "$T/none" "$T/test_fakedies")
[ "${r%%|*}" = 1 ] && [ "${r#*|}" = "1 passed, 1 failed, 0 skipped" ] && ok "runner: exit 3 without a failed check fails" ||
	nok "dying test: $r"
r=$(runner "$T/none" "$T/test_fakenone")
[ "$r" = "1|0 passed, 1 failed, 0 skipped" ] && ok "runner: a test that runs no check fails" || nok "no checks: $r"
r=$(runner "$T/none" "$T/test_missing")
[ "$r" = "1|0 passed, 1 failed, 0 skipped" ] && ok "runner: a named test that does not exist fails" || nok "missing test: $r"
# a script with a quote left open passes every check before the error and stops there
printf '. tests/cli/lib.sh\nok "one"\npy '"'"'assert 1\nok "two"\n' >"$T/test_fakeparse.sh"
r=$(runner "$T/none" "$T/test_fakeparse.sh")
[ "$r" = "1|0 passed, 1 failed, 0 skipped" ] && ok "runner: a script that does not parse fails" || nok "no parse: $r"
# one line per test as it finishes, with its counts and seconds, before the total
out=$(GPUP2P_EXPECTED_SKIPS=$T/allow BUILD=$BUILD bash tests/run.sh "$T/test_fakeok" "$T/test_fakeskip" 2>&1)
grep -qE '^test_fakeok: 2 passed, 0 failed, 0 skipped, [0-9]+ s$' <<<"$out" &&
	grep -qE '^test_fakeskip: 1 passed, 0 failed, 1 skipped, [0-9]+ s$' <<<"$out" &&
	[ "$(tail -1 <<<"$out")" = "3 passed, 0 failed, 1 skipped" ] &&
	ok "runner: a line per test (name, counts, seconds) as it finishes, then the total" || nok "per-test lines: $out"
# the project's list: each entry names a test and a reason
bad=$(grep -vE '^(#|$)' tests/expected-skips | grep -cvE '^[^[:space:]]+[[:space:]]+[^[:space:]]')
[ "$bad" = 0 ] && ok "tests/expected-skips: every entry has a test and a reason" || nok "tests/expected-skips: $bad bad lines"

# unit tests whose fixture trees are missing fail: no silent pass, no skip
mkdir "$T/empty"
for u in test_acs test_topo test_pci test_misc test_acs_write test_doctor test_root; do
	[ -x "$BUILD/tests/$u" ] || { nok "$u not built"; continue; }
	out=$(GPUP2P_FIXTURES=$T/empty TMPDIR=$T "$BUILD/tests/$u" 2>&1)
	rc=$?
	[ $rc -ne 0 ] && grep -q '^not ok - ' <<<"$out" && ! grep -q '^skip - ' <<<"$out" &&
		ok "$u without its fixtures: failed checks, exit $rc" || nok "$u without fixtures: exit $rc"
done
