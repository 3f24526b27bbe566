#!/bin/bash
# make check-asan: the unit tests built with AddressSanitizer, LeakSanitizer and UBSan ($BUILD/fuzz/tests,
# the sanitizer build `make fuzz` uses), then the fuzz regression cases (tests/fuzz/regress) replayed by
# $BUILD/fuzz/gpup2p with LeakSanitizer on, and the in-process targets' inputs by $BUILD/fuzz/replay-TARGET.
# Any sanitizer report fails: the reports go to files, read at the end, so that one from a process whose
# exit status no test looks at counts too.
set -u
BUILD=${BUILD:-build}
SAN=$BUILD/fuzz
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=

ASAN_OPTIONS="detect_leaks=1:log_path=$T/asan" UBSAN_OPTIONS="print_stacktrace=1:log_path=$T/ubsan" \
	BUILD=$BUILD bash tests/run.sh "$SAN"/tests/test_* || fail="$fail unit-tests"
# fuzz.py sets the sanitizers' options itself and reads their reports from stderr
python3 tests/fuzz/fuzz.py --bin "$SAN/gpup2p" --fixtures "$BUILD/fixtures" --leaks 1 \
	--replay tests/fuzz/regress/*.json || fail="$fail fuzz-cases"
# the in-process targets' regression inputs (tests/fuzz/regress/TARGET/, tests/fuzz/README.md): a finding aborts
for t in report tree doctor rdma; do
	[ -d tests/fuzz/regress/$t ] || continue
	ASAN_OPTIONS="detect_leaks=1:log_path=$T/asan-$t" UBSAN_OPTIONS="print_stacktrace=1:log_path=$T/ubsan-$t" \
		GPUP2P_FUZZ_FIXTURES=$BUILD/fixtures "$SAN/replay-$t" tests/fuzz/regress/$t || fail="$fail fuzz-$t"
done
for f in "$T"/*; do
	[ -e "$f" ] || continue
	echo "sanitizer report ($(basename "$f")):"
	cat "$f"
	fail="$fail $(basename "$f")"
done
if [ -n "$fail" ]; then
	echo "check-asan: FAILED:$fail"
	exit 1
fi
echo "check-asan: no sanitizer report"
