#!/bin/bash
# The libibverbs/librdmacm ABI gpup2p declares itself (libcore/rdma/verbs_abi.h), so that the build needs no
# rdma-core headers: no source includes them, and where rdma-core's own headers are installed
# (libibverbs-dev, librdmacm-dev: tests/deps.sh installs them) tests/fakeverbs/abi_check.c compares every
# field offset, structure size, value and signature with them. Without them that comparison is reported
# as skipped, never as passed.
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}
ABI_HEADER=libcore/rdma/verbs_abi.h
INC=${RDMA_INCLUDE:-/usr/include}

inc=$(grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](infiniband/verbs|rdma/rdma_cma)\.h[">]' libcore cli tests \
	--include='*.c' --include='*.h' | grep -vx tests/fakeverbs/abi_check.c)
[ -z "$inc" ] && ok "no source but the ABI check includes rdma-core's headers" || nok "these include rdma-core headers: $inc"
err=$(echo '#include "rdma/verbs_abi.h"' | $CC -std=c11 -D_GNU_SOURCE -pedantic -Wall -Wextra -Werror -Ilibcore -fsyntax-only -x c - 2>&1) &&
	ok "verbs_abi.h stands alone (C11, -pedantic, $CC)" || nok "verbs_abi.h alone: $err"

if [ ! -f "$INC/infiniband/verbs.h" ] || [ ! -f "$INC/rdma/rdma_cma.h" ]; then
	echo "# verbs_abi.h not compared with rdma-core's headers: none in $INC (apt install libibverbs-dev librdmacm-dev)"
	echo "skip - no infiniband/verbs.h"
	exit 0
fi

# compile_check DIR COMPILER: the ABI check with verbs_abi.h from DIR
compile_check() {
	$2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$1" -o "$T/abi" tests/fakeverbs/abi_check.c 2>&1
}
abi_compare "rdma-core's verbs.h and rdma_cma.h"

# The comparison must be able to fail (plant, tests/cli/lib.sh).
plant "an ops slot missing before post_send" 's/void \*slots2_\[13\];/void *slots2_[12];/' \
	"gp_ibv_context_ops.post_send: offset differs"
plant "a wrong opcode" 's/X(IBV_WR_RDMA_READ, 4)/X(IBV_WR_RDMA_READ, 3)/' "GP_IBV_WR_RDMA_READ differs"
plant "a wrong parameter type" 's/(struct gp_ibv_pd \*, void \*, size_t, int)/(struct gp_ibv_pd *, void *, unsigned, int)/' \
	"ibv_reg_mr: signature differs"
plant "a short device attribute" 's/int rest_\[16\];/int rest_[15];/' "gp_ibv_device_attr: size differs"
plant "a wrong send_wr layout" 's/	uint32_t imm_data;             \/\* network byte order \*\//	uint64_t imm_data;/' \
	"gp_ibv_send_wr.imm_data: size differs"
plant "a wrong cm_id layout" "s/^\tint ps;/\tlong ps;/" "gp_rdma_cm_id.ps: size differs"
