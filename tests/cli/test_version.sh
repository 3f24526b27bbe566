#!/bin/bash
# VERSION is the one source of the version. The binary takes it at build time; the files that must state
# it literally (man pages' .TH lines, the module's MODULE_VERSION, dkms.conf) are copies written by
# `make version-sync`, and this test fails while any of them differs.
set -u
BUILD=${BUILD:-build}
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
v=$(cat VERSION)
grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' VERSION && ok "VERSION is one line x.y.z ($v)" || nok "VERSION: '$v'"

# check DIR: every copy of the version under DIR equals DIR/VERSION (prints the ones that differ)
check() {
	local want bad=
	want=$(cat "$1/VERSION")
	for m in "$1"/man/*.1; do
		grep -qx "\.TH [^ ]* 1 \"[^\"]*\" \"gpup2p $want\" .*" "$m" || bad="$bad ${m#"$1"/}"
	done
	grep -qx "MODULE_VERSION(\"$want\");" "$1/kmod/main.c" || bad="$bad kmod/main.c"
	grep -qx "PACKAGE_VERSION=\"$want\"" "$1/kmod/dkms.conf" || bad="$bad kmod/dkms.conf"
	echo "$bad"
}
bad=$(check .)
[ -z "$bad" ] && ok "man pages, MODULE_VERSION and dkms.conf say $v" ||
	nok "not VERSION ($v):$bad (run make version-sync)"
[ "$("$BUILD/gpup2p" --version)" = "gpup2p $v" ] && ok "gpup2p --version says $v" ||
	nok "gpup2p --version: $("$BUILD/gpup2p" --version 2>&1)"

# make version-sync in a copy of the tree: a new VERSION reaches every copy (and check sees a stale one)
mkdir -p "$T/t/kmod"
cp -r Makefile man "$T/t/" && cp kmod/main.c kmod/dkms.conf "$T/t/kmod/"
echo 9.8.7 >"$T/t/VERSION"
bad=$(check "$T/t")
[ -n "$bad" ] && ok "a changed VERSION is noticed ($(wc -w <<<"$bad") stale copies)" || nok "a changed VERSION went unnoticed"
make -s --no-print-directory -C "$T/t" version-sync >/dev/null 2>&1
bad=$(check "$T/t")
[ -z "$bad" ] && ok "make version-sync writes VERSION into every copy" || nok "after make version-sync, stale:$bad"
n=$(diff <(sed 's/9\.8\.7/'"$v"'/' "$T/t/kmod/main.c") kmod/main.c | grep -c '^[<>]')
[ "$n" -eq 0 ] && ok "version-sync changes nothing in kmod/main.c but the version" || nok "version-sync changed $n other lines in main.c"
