# Helpers shared by the CLI test scripts (sourced; $BIN is the gpup2p binary).
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
# skip REASON: a check that cannot run on this machine; tests/run.sh fails unless tests/expected-skips
# declares REASON for this script
skip() { echo "skip - $*"; }

# expect CODE PATTERN ARGS...: gpup2p ARGS exits CODE with a one-line stderr matching PATTERN
expect() {
	local code=$1 pat=$2 err rc
	shift 2
	err=$("$BIN" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq "$code" ] && grep -qE -- "$pat" <<<"$err" && [ "$(printf '%s' "$err" | grep -c '')" -le 1 ]; then
		ok "gpup2p $* -> $code"
	else
		nok "gpup2p $*: exit $rc (want $code), stderr: $err"
	fi
}
