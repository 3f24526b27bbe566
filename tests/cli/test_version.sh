#!/bin/bash
# VERSION is the one source of the version. The binary takes it at build time; the files that must state
# it literally (man pages' .TH lines, the module's MODULE_VERSION, dkms.conf, debian/changelog's newest
# entry) are copies written by
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
	# the packages' version: the newest debian/changelog entry (no Debian revision: a native package)
	head -1 "$1/debian/changelog" | grep -q "^gpup2p ($want) " || bad="$bad debian/changelog"
	echo "$bad"
}
bad=$(check .)
[ -z "$bad" ] && ok "man pages, MODULE_VERSION, dkms.conf and debian/changelog say $v" ||
	nok "not VERSION ($v):$bad (run make version-sync)"
[ "$("$BUILD/gpup2p" --version)" = "gpup2p $v" ] && ok "gpup2p --version says $v" ||
	nok "gpup2p --version: $("$BUILD/gpup2p" --version 2>&1)"

# make version-sync in a copy of the tree: a new VERSION reaches every copy (and check sees a stale one)
mkdir -p "$T/t/kmod"
cp -r Makefile man debian "$T/t/" && cp kmod/main.c kmod/dkms.conf "$T/t/kmod/"
echo 9.8.7 >"$T/t/VERSION"
bad=$(check "$T/t")
[ -n "$bad" ] && ok "a changed VERSION is noticed ($(wc -w <<<"$bad") stale copies)" || nok "a changed VERSION went unnoticed"
make -s --no-print-directory -C "$T/t" version-sync >/dev/null 2>&1
bad=$(check "$T/t")
[ -z "$bad" ] && ok "make version-sync writes VERSION into every copy" || nok "after make version-sync, stale:$bad"
n=$(diff <(sed 's/9\.8\.7/'"$v"'/' "$T/t/kmod/main.c") kmod/main.c | grep -c '^[<>]')
[ "$n" -eq 0 ] && ok "version-sync changes nothing in kmod/main.c but the version" || nok "version-sync changed $n other lines in main.c"
head -1 "$T/t/debian/changelog" | grep -qx 'gpup2p (9.8.7) unstable; urgency=medium' &&
	[ "$(grep -c '^gpup2p (' "$T/t/debian/changelog")" -eq $(($(grep -c '^gpup2p (' debian/changelog) + 1)) ] &&
	{ ! command -v dpkg-parsechangelog >/dev/null || dpkg-parsechangelog -l "$T/t/debian/changelog" -S Version | grep -qx 9.8.7; } &&
	ok "version-sync adds a debian/changelog entry for 9.8.7 above the old ones (dpkg-parsechangelog reads it)" ||
	nok "debian/changelog after version-sync: $(head -5 "$T/t/debian/changelog" | tr '\n' '|')"
make -s --no-print-directory -C "$T/t" version-sync >/dev/null 2>&1
[ "$(grep -c '^gpup2p (' "$T/t/debian/changelog")" -eq $(($(grep -c '^gpup2p (' debian/changelog) + 1)) ] &&
	ok "a second version-sync adds no second entry" || nok "version-sync twice: $(grep '^gpup2p (' "$T/t/debian/changelog" | tr '\n' '|')"
