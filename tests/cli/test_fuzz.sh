#!/bin/bash
# The fuzz target that stays: gpup2p built with ASan+UBSan ($BUILD/fuzz/gpup2p, tests/fuzz/fuzz.mk) replays
# every minimised finding under tests/fuzz/regress/, then runs a short seeded round of tests/fuzz/fuzz.py
# (FUZZ_CHECK_TIME seconds, default 40; FUZZ_CHECK_SEED, default 1) on mutated trees and one on report's
# input (FUZZ_CHECK_REPORT_TIME, default 20). Longer rounds: `make fuzz`.
set -u
BUILD=${BUILD:-build}
FBIN=$BUILD/fuzz/gpup2p
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ ! -x "$FBIN" ]; then
	nok "sanitizer build $FBIN missing (make $FBIN)"
	exit 0
fi
# the sanitizers really are in: a binary without them would make every check below pass
if nm -u "$FBIN" 2>/dev/null | grep -q '__asan_init' && nm -u "$FBIN" | grep -q '__ubsan_handle_shift_out_of_bounds' &&
	nm -u "$FBIN" | grep -q '__ubsan_handle_float_cast_overflow'; then
	ok "$FBIN is built with AddressSanitizer and UndefinedBehaviorSanitizer (float-cast-overflow too)"
else
	nok "$FBIN lacks ASan/UBSan instrumentation"
fi

cases=(tests/fuzz/regress/*.json)
if [ -e "${cases[0]}" ]; then
	nice -n 10 python3 tests/fuzz/fuzz.py --bin "$FBIN" --fixtures "$BUILD/fixtures" --replay "${cases[@]}"
else
	nok "no regression case under tests/fuzz/regress"
fi

for target in tree doctor report; do
	t=${FUZZ_CHECK_TIME:-40}
	[ $target = report ] && t=${FUZZ_CHECK_REPORT_TIME:-20}
	[ $target = doctor ] && t=${FUZZ_CHECK_DOCTOR_TIME:-20}
	out=$(nice -n 10 python3 tests/fuzz/fuzz.py --bin "$FBIN" --fixtures "$BUILD/fixtures" --time "$t" --target $target \
		--seed "${FUZZ_CHECK_SEED:-1}" --findings "$BUILD/fuzz/findings" --pending tests/fuzz/pending 2>&1)
	rc=$?
	grep '^# pending' <<<"$out"
	summary=$(grep '^fuzz: ' <<<"$out")
	if [ $rc -eq 0 ] && grep -q ', 0 new finding' <<<"$summary"; then
		ok "$summary"
	else
		nok "fuzz round ($target): ${summary:-no summary} (exit $rc)"
		grep '^finding: ' <<<"$out"
		echo "$out" | grep -v '^finding: \|^fuzz: ' | tail -5
		echo "  replay: python3 tests/fuzz/fuzz.py --bin $FBIN --fixtures $BUILD/fixtures --replay FILE"
	fi
done
