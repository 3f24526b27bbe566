#!/bin/bash
# The SM kernels are PTX text in the binary (libcore/cuda/ptx_kernels.c), JIT-compiled by the driver at run
# time. Where the CUDA toolkit's ptxas is found (CUDA_HOME, else /usr/local/cuda, else PATH), assemble
# that very text for the GPUs gpup2p's users run (A100 sm_80, H100/H200 sm_90) and check that both
# kernels are there; a planted error must fail. Without ptxas this is reported as skipped, never passed.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}

cat >"$T/dump.c" <<'C'
#include <stdio.h>
#include <string.h>
extern const char gp_ptx_text[], gp_ptx_bulk_text[], gp_ptx_verify_text[];
int main(int argc, char **argv)
{
	const char *t = argc < 2 ? gp_ptx_text : !strcmp(argv[1], "bulk") ? gp_ptx_bulk_text : gp_ptx_verify_text;

	return fputs(t, stdout) < 0;
}
C
if $CC -std=c11 -Ilibcore/include -Ilibcore -o "$T/dump" "$T/dump.c" libcore/cuda/ptx_kernels.c libcore/cuda/ptx_verify.c &&
	"$T/dump" >"$T/k.ptx" && "$T/dump" bulk >"$T/b.ptx" && "$T/dump" verify >"$T/v.ptx"; then
	ok "PTX texts extracted ($(wc -l <"$T/k.ptx"), $(wc -l <"$T/b.ptx") and $(wc -l <"$T/v.ptx") lines)"
else
	nok "cannot build the PTX dumper"
	exit 0
fi
grep -q '^\.visible \.entry gp_copy16($' "$T/k.ptx" && grep -q '^\.visible \.entry gp_chase($' "$T/k.ptx" &&
	grep -q '^\.visible \.entry gp_copy_duplex($' "$T/k.ptx" &&
	ok "the kernels declared (gp_copy16, gp_copy_duplex, gp_chase)" || nok "kernel entries missing"
grep -q '^\.visible \.entry gp_copy_bulk($' "$T/b.ptx" && grep -q '^\.target sm_90$' "$T/b.ptx" &&
	ok "the bulk copy's module: gp_copy_bulk, target sm_90" || nok "bulk module: entry or target missing"
grep -q '^\.visible \.entry gp_fill($' "$T/v.ptx" && grep -q '^\.visible \.entry gp_check($' "$T/v.ptx" &&
	grep -q '^\.target sm_50$' "$T/v.ptx" && ok "the verification module: gp_fill, gp_check, target sm_50" ||
	nok "verification module: entries or target missing"

ptxas=
for p in ${CUDA_HOME:+"$CUDA_HOME/bin/ptxas"} /usr/local/cuda/bin/ptxas "$(command -v ptxas 2>/dev/null)"; do
	[ -n "$p" ] && [ -x "$p" ] && { ptxas=$p; break; }
done
if [ -z "$ptxas" ]; then
	echo "# the PTX was not assembled: no ptxas (CUDA toolkit) on this machine"
	echo "skip - no ptxas"
	exit 0
fi
for arch in sm_80 sm_90; do
	if err=$("$ptxas" -arch=$arch -o "$T/k.cubin" "$T/k.ptx" 2>&1); then
		ok "ptxas assembles the PTX for $arch"
	else
		nok "ptxas $arch: $(head -3 <<<"$err")"
	fi
	if err=$("$ptxas" -arch=$arch -o "$T/v.cubin" "$T/v.ptx" 2>&1); then
		ok "ptxas assembles the verification kernels for $arch"
	else
		nok "ptxas verify $arch: $(head -3 <<<"$err")"
	fi
done
# the bulk copy: Hopper (sm_90) and Blackwell (sm_100, where this ptxas knows it) assemble it; an
# Ampere target must refuse it (gpup2p loads it only from compute capability 9.0 on)
for arch in sm_90 sm_100; do
	if [ "$arch" = sm_100 ] && ! "$ptxas" --help 2>/dev/null | grep -q 'sm_100'; then
		echo "# this ptxas does not know sm_100"
		continue
	fi
	if err=$("$ptxas" -arch=$arch -o "$T/b.cubin" "$T/b.ptx" 2>&1); then
		ok "ptxas assembles the bulk copy for $arch"
	else
		nok "ptxas bulk $arch: $(head -3 <<<"$err")"
	fi
done
"$ptxas" -arch=sm_80 -o "$T/b.cubin" "$T/b.ptx" >/dev/null 2>&1 && nok "ptxas sm_80 assembles the sm_90 bulk copy" ||
	ok "ptxas sm_80 refuses the bulk copy (it needs sm_90)"
sed 's/ld.global.u64 %rd1, \[%rd1\];/ld.global.u64 %rd1, [%rq1];/' "$T/k.ptx" >"$T/bad.ptx"
if cmp -s "$T/k.ptx" "$T/bad.ptx"; then
	nok "planted error: the edit did not apply"
elif "$ptxas" -arch=sm_90 -o "$T/k.cubin" "$T/bad.ptx" >/dev/null 2>&1; then
	nok "planted error (an undeclared register): ptxas still assembles"
else
	ok "planted error (an undeclared register): ptxas refuses it"
fi
