#!/bin/bash
# The Makefile as a user and a packager meet it: CPPFLAGS, CFLAGS and LDFLAGS reach the compiler and the
# linker (GNU conventions), a warning is not an error unless WERROR=1 (CI), and missing -dev packages
# are named up front ("run make deps") instead of a compiler's "kmod.h: No such file". Each case builds
# one file in a copy of the build directory.
set -u
# make check WERROR=1 (CI) hands its variables down (MAKEFLAGS, environment): builds here pick their own
unset MAKEFLAGS MFLAGS MAKELEVEL WERROR CPPFLAGS CFLAGS LDFLAGS LDLIBS
BUILD=${BUILD:-build}
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x "$BUILD/gpup2p" ] && [ -f "$BUILD/libgpup2p.a" ] || { nok "build $BUILD first"; exit 0; }
cp -a "$BUILD" "$T/b"
B=$T/b
m() { make -s --no-print-directory BUILD="$B" "$@"; }
# a header that makes any file warn (-Wunused-variable, from -Wall)
printf 'static int gp_probe_unused_variable;\n' >"$T/warn.h"

rm -f "$B/libcore/base/err.o"
err=$(m CFLAGS="-O2 -include $T/warn.h" "$B/libcore/base/err.o" 2>&1 >/dev/null) && grep -q gp_probe_unused_variable <<<"$err" &&
	ok "a warning does not stop the default build" || nok "a warning in the default build: $(head -3 <<<"$err")"
rm -f "$B/libcore/base/err.o"
err=$(m CPPFLAGS="-include $T/warn.h" "$B/libcore/base/err.o" 2>&1 >/dev/null)
grep -q gp_probe_unused_variable <<<"$err" && ok "CPPFLAGS reach the compiler" || nok "CPPFLAGS ignored: $err"
rm -f "$B/libcore/base/err.o"
err=$(m WERROR=1 CPPFLAGS="-include $T/warn.h" "$B/libcore/base/err.o" 2>&1) &&
	nok "WERROR=1 let a warning through" ||
	{ grep -q 'gp_probe_unused_variable.*-Werror' <<<"$err" && ok "WERROR=1 makes warnings errors (CI)" ||
		nok "WERROR=1 failed for another reason: $(head -3 <<<"$err")"; }
rm -f "$B/libcore/base/err.o"
err=$(m CPPFLAGS="-include $T/warn.h" CFLAGS="-O1 -Wno-unused-variable" "$B/libcore/base/err.o" 2>&1 >/dev/null) && [ -z "$err" ] &&
	ok "CFLAGS come after the project's warnings (they can turn one off)" || nok "CFLAGS order: $err"

rm -f "$B/gpup2p"
m LDFLAGS="-Wl,-Map=$T/gpup2p.map" "$B/gpup2p" >/dev/null 2>&1
[ -s "$T/gpup2p.map" ] && ok "LDFLAGS reach the link of gpup2p" || nok "LDFLAGS ignored linking gpup2p"
rm -f "$B/tests/test_misc"
m LDFLAGS="-Wl,-Map=$T/unit.map" "$B/tests/test_misc" >/dev/null 2>&1
[ -s "$T/unit.map" ] && ok "LDFLAGS reach the link of the unit tests" || nok "LDFLAGS ignored linking unit tests"
rm -f "$B/tests/fakecuda/libcuda.so.1"
err=$(m CPPFLAGS="-include $T/warn.h" LDFLAGS="-Wl,-Map=$T/fake.map" "$B/tests/fakecuda/libcuda.so.1" 2>&1)
[ -s "$T/fake.map" ] && grep -q gp_probe_unused_variable <<<"$err" && ok "CPPFLAGS and LDFLAGS reach the libcuda test double" ||
	nok "flags ignored building the test double: $err"

# Missing -dev packages: pkg-config finds no .pc file (an empty search path) or is not there at all.
mkdir -p "$T/nopc" "$T/pc"
rm -f "$B/libcore/base/err.o"
err=$(PKG_CONFIG_LIBDIR=$T/nopc PKG_CONFIG_PATH= m "$B/libcore/base/err.o" 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(head -1 <<<"$err")" = "gpup2p: no development files for libpci libkmod zlib (pkg-config): run 'make deps' (Debian: apt install libpci-dev libkmod-dev zlib1g-dev)" ] &&
	! grep -q "No such file" <<<"$err" &&
	[ ! -e "$B/libcore/base/err.o" ] && ok "no libpci/libkmod/zlib .pc files: one line saying run make deps (zlib's package is zlib1g-dev), nothing compiled" ||
	nok "missing -dev packages: rc=$rc: $err"
pc=$(pkg-config --variable=pcfiledir libpci 2>/dev/null)/libpci.pc
cp "$pc" "$(pkg-config --variable=pcfiledir zlib 2>/dev/null)/zlib.pc" "$T/pc/" 2>/dev/null
err=$(PKG_CONFIG_LIBDIR=$T/pc PKG_CONFIG_PATH= m "$B/libcore/base/err.o" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "no development files for libkmod (pkg-config): run 'make deps' (Debian: apt install libkmod-dev)" <<<"$err" &&
	ok "only libkmod missing: named alone" || nok "libkmod missing: rc=$rc: $err ($pc)"
err=$(m PKG_CONFIG=/nonexistent/pkg-config "$B/libcore/base/err.o" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "pkg-config not found: run 'make deps'" <<<"$err" && ok "no pkg-config: run make deps" ||
	nok "no pkg-config: rc=$rc: $err"

# Debian's hardening flags in the default build (not only the .deb): PIE, full RELRO (relro + now), the
# stack protector and fortified libc calls in the binary; the user's CFLAGS and LDFLAGS still override.
bin=$BUILD/gpup2p
hdr=$(readelf -h "$bin" 2>/dev/null) dyn=$(readelf -d "$bin" 2>/dev/null) ph=$(readelf -lW "$bin" 2>/dev/null)
syms=$(nm -D "$bin" 2>/dev/null)
grep -q 'Type: *DYN' <<<"$hdr" && grep -q 'FLAGS_1.*PIE' <<<"$dyn" && ok "the default build is PIE" || nok "not PIE: $(grep Type <<<"$hdr")"
grep -q GNU_RELRO <<<"$ph" && grep -q 'BIND_NOW\|FLAGS.*NOW' <<<"$dyn" && ok "full RELRO (-z relro -z now)" ||
	nok "no full RELRO: $(grep -c GNU_RELRO <<<"$ph") relro, $(grep FLAGS <<<"$dyn")"
grep -q '__stack_chk_fail' <<<"$syms" && ok "stack protector in the binary" || nok "no __stack_chk_fail in $bin"
grep -qE '__(snprintf|vsnprintf|memcpy|fprintf|printf|read)_chk' <<<"$syms" && ok "_FORTIFY_SOURCE: fortified libc calls" ||
	nok "no __*_chk call in $bin (no _FORTIFY_SOURCE)"
flags=$(make -s --no-print-directory -n BUILD="$T/x" "$T/x/libcore/base/err.o" 2>/dev/null | grep -- ' -c ')
for f in -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Werror=format-security -fstack-clash-protection -fPIE; do
	grep -q -- " $f" <<<"$flags" || nok "the default compile lacks $f"
done
if [ "$(uname -m)" = x86_64 ] && grep -q -- ' -fcf-protection' <<<"$flags"; then ok "-fcf-protection on x86_64"
elif [ "$(uname -m)" = x86_64 ]; then nok "no -fcf-protection on x86_64: $flags"; fi
rm -f "$B/libcore/report/report.o"
m CFLAGS="-O2 -fno-stack-protector" "$B/libcore/report/report.o" >/dev/null 2>&1
n1=$(nm "$B/libcore/report/report.o" 2>/dev/null | grep -c __stack_chk_fail)
rm -f "$B/libcore/report/report.o"
m "$B/libcore/report/report.o" >/dev/null 2>&1
n2=$(nm "$B/libcore/report/report.o" 2>/dev/null | grep -c __stack_chk_fail)
[ "$n1" = 0 ] && [ "$n2" = 1 ] && ok "CFLAGS=-fno-stack-protector overrides the default stack protector" ||
	nok "stack protector override: $n1 with -fno-stack-protector, $n2 without"
rm -f "$B/gpup2p"
m LDFLAGS="-Wl,-z,lazy" "$B/gpup2p" >/dev/null 2>&1
readelf -d "$B/gpup2p" 2>/dev/null | grep -q 'BIND_NOW\|FLAGS.*NOW' && nok "LDFLAGS=-Wl,-z,lazy did not override -z now" ||
	{ [ -x "$B/gpup2p" ] && ok "LDFLAGS=-Wl,-z,lazy overrides the default -z now"; }
flags=$(make -s --no-print-directory -n BUILD="$T/x" CFLAGS=-O0 "$T/x/libcore/base/err.o" 2>/dev/null | grep -- ' -c ')
flags3=$(make -s --no-print-directory -n BUILD="$T/x" CPPFLAGS=-D_FORTIFY_SOURCE=3 "$T/x/libcore/base/err.o" 2>/dev/null | grep -- ' -c ')
! grep -q -- -D_FORTIFY_SOURCE <<<"$flags" && ! grep -q -- -D_FORTIFY_SOURCE=2 <<<"$flags3" &&
	ok "_FORTIFY_SOURCE: not at -O0; a user's own -D_FORTIFY_SOURCE=3 alone" || nok "fortify at -O0 or twice: $flags $flags3"
