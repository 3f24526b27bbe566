#!/bin/bash
# The CUDA driver API subset gpup2p declares itself (libcore/cuda/drv.h), so that the build needs no CUDA
# toolkit: no source includes <cuda.h>, and where a real cuda.h is found (CUDA_HOME only, when set;
# else /usr/local/cuda, /usr) tests/fakecuda/abi_check.c compares every value, type and signature with
# it. Without a cuda.h that comparison is reported as skipped, never as passed.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}
ABI_HEADER=libcore/cuda/drv.h

inc=$(grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]cuda\.h[">]' libcore cli tests \
	--include='*.c' --include='*.h' | grep -vx tests/fakecuda/abi_check.c)
[ -z "$inc" ] && ok "no source but the ABI check includes <cuda.h>" || nok "these include <cuda.h>: $inc"
err=$(echo '#include "cuda/drv.h"' | $CC -std=c11 -pedantic -Wall -Wextra -Werror -Ilibcore -fsyntax-only -x c - 2>&1) &&
	ok "cuda_drv.h stands alone (C11, -pedantic, $CC)" || nok "cuda_drv.h alone: $err"

if [ -n "${CUDA_HOME:-}" ]; then dirs="$CUDA_HOME/include"; else dirs="/usr/local/cuda/include /usr/include"; fi
cudainc=
for d in $dirs; do
	[ -f "$d/cuda.h" ] && { cudainc=$d; break; }
done
if [ -z "$cudainc" ]; then
	# the reason is exactly what tests/expected-skips declares
	echo "# cuda_drv.h not compared with the toolkit's cuda.h: none in $dirs"
	echo "skip - no cuda.h"
	exit 0
fi

# compile_check INCDIR COMPILER: the ABI check against $cudainc/cuda.h, cuda_drv.h from INCDIR
compile_check() {
	$2 -std=c11 -Wall -Wextra -Werror -I"$cudainc" -I"$1" -o "$T/abi" tests/fakecuda/abi_check.c 2>&1
}
abi_compare "$cudainc/cuda.h"

# The comparison must be able to fail (plant, tests/cli/lib.sh).
plant "a wrong CUresult value" 's/PEER_ACCESS_NOT_ENABLED, 705/PEER_ACCESS_NOT_ENABLED, 706/' \
	"GP_CUDA_ERROR_PEER_ACCESS_NOT_ENABLED differs from cuda.h"
plant "a wrong flag value" 's/CU_MEMHOSTALLOC_DEVICEMAP, 0x02/CU_MEMHOSTALLOC_DEVICEMAP, 0x04/' \
	"GP_CU_MEMHOSTALLOC_DEVICEMAP differs"
plant "a wrong parameter type" 's/(gp_cu_dptr \*, size_t)/(gp_cu_dptr *, unsigned)/' "cuMemAlloc_v2: parameters differ"
plant "an old symbol version" 's/cuMemFree, cuMemFree_v2/cuMemFree, cuMemFree/' "bound_cuMemFree_v2"
plant "a wrong handle type" 's/typedef unsigned long long gp_cu_dptr/typedef unsigned long gp_cu_dptr/' \
	"gp_cu_dptr is not CUdeviceptr"
plant "a signed enum" 's/X(CU_MEM_RANGE_HANDLE_TYPE_MAX, 0x7fffffff)/X(CU_MEM_RANGE_HANDLE_TYPE_MAX, 0x7fffffff) X(GP_NEG, -1)/' \
	"gp_cu_mem_range_handle_type: integer type differs"
