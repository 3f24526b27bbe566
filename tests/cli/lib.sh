# Helpers shared by the CLI test scripts (sourced; $BIN is the gpup2p binary).
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
# skip REASON: a check that cannot run on this machine; tests/run.sh fails unless tests/expected-skips
# declares REASON for this script
skip() { echo "skip - $*"; }
# sans_root: stdin to stdout without the JSON envelope's "root" line, which names the directory read
# (two roots holding the same tree print the same otherwise)
sans_root() { grep -v '^    "root": '; }
# cli_fail WHAT RC OUTPUT COMMAND...: a failed check of a gpup2p run, with the command, its exit status
# and its output (indented, at most 20 lines) so that the log alone says what happened
cli_fail() {
	local what=$1 rc=$2 out=$3
	shift 3
	echo "not ok - $what: gpup2p $*: exit $rc"
	head -20 <<<"$out" | sed 's/^/#   /'
}

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

# ABI checks of the project's own declarations of a library's interface (test_cuda_abi.sh, test_verbs_abi.sh).
# The caller sets T (a scratch folder), CC and ABI_HEADER (libcore/DIR/NAME.h) and defines compile_check DIR
# COMPILER, which builds its check into $T/abi with NAME.h taken from DIR.
# abi_compare WHAT: the check built with $CC, and clang when $CC is another compiler, and run
abi_compare() {
	local cc err out
	for cc in "$CC" clang; do
		command -v "$cc" >/dev/null || continue
		[ "$cc" = clang ] && [ "$($CC --version 2>/dev/null | grep -c clang)" != 0 ] && continue
		if err=$(compile_check libcore "$cc") && out=$("$T/abi"); then
			ok "$(basename "$ABI_HEADER") matches $1 ($out; $cc)"
		else
			nok "$(basename "$ABI_HEADER") differs from $1 ($cc): $(grep -m3 error <<<"$err")"
		fi
	done
}

# plant WHAT SED WANT: the comparison must be able to fail: a copy of ABI_HEADER with one wrong thing
# (the sed script) must fail to compile, naming WANT
plant() {
	local what=$1 sed=$2 want=$3 h
	h=${ABI_HEADER#libcore/}
	mkdir -p "$T/p/$(dirname "$h")"
	sed "$sed" "$ABI_HEADER" >"$T/p/$h"
	if cmp -s "$ABI_HEADER" "$T/p/$h"; then
		nok "planted $what: the edit did not apply"
	elif err=$(compile_check "$T/p" "$CC"); then
		nok "planted $what: the check still compiles"
	elif grep -q -- "$want" <<<"$err"; then
		ok "planted $what: caught ($want)"
	else
		nok "planted $what: failed, but not naming $want: $(grep -m2 error <<<"$err")"
	fi
}

# fakecuda_scratch: FAKE, the libcuda test double ($BUILD's; the script ends with a "not ok" when it is not
# built), and T, a scratch folder removed when the script exits
fakecuda_scratch() {
	FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
	[ -f "$FAKE" ] || { nok "test double $FAKE not built"; exit 0; }
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
}
