/* gpup2p unit tests — bench rdma's engine against the test doubles (test_rdma, test_rdma_cm): libibverbs' and
 * librdmacm's (tests/fakeverbs), libcuda's that exports dma-bufs (tests/fakecuda-dmabuf), and an empty root. */
#ifndef GPUP2P_UNIT_RDMA_FX_H
#define GPUP2P_UNIT_RDMA_FX_H

#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/rdma.h"
#include "unit.h"

static char verbs_path[1024];    /* the libibverbs double, which is librdmacm's too */
static struct gp_root live;      /* the empty root (rdma_fx_init) */
static char tmproot[64];         /* its folder */

/* The doubles' knobs back to one ACTIVE RoCE device, rxe0, with nothing planted. */
static inline void env_reset(void)
{
	static const char *const v[] = { "FAKEVERBS_PORT_STATE", "FAKEVERBS_LINK", "FAKEVERBS_GID_TYPES",
		"FAKEVERBS_REG_FAIL", "FAKEVERBS_REG_FAIL_OVER", "FAKEVERBS_DMABUF_FAIL", "FAKEVERBS_STALL",
		"FAKEVERBS_CORRUPT", "FAKEVERBS_LOG", "FAKEVERBS_MTU", "FAKEVERBS_PORTS", "FAKEVERBS_LINK_rxe1" };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		unsetenv(v[i]);
	setenv("FAKEVERBS_DEVICES", "rxe0", 1);
}

/* Point gpup2p at the test doubles (built next to $GPUP2P_FIXTURES) and open the empty root. */
static inline void rdma_fx_init(void)
{
	const char *fx = getenv("GPUP2P_FIXTURES");
	char path[1024];
	struct gp_err e = { 0 };

	snprintf(verbs_path, sizeof(verbs_path), "%s/../tests/fakeverbs/libibverbs.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBIBVERBS", verbs_path, 1);
	setenv("GPUP2P_LIBRDMACM", verbs_path, 1);        /* the double is both libraries */
	snprintf(path, sizeof(path), "%s/../tests/fakecuda-dmabuf/libcuda.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBCUDA", path, 1);
	snprintf(tmproot, sizeof(tmproot), "/tmp/gpup2p-rdma-%d", (int)getpid());
	mkdir(tmproot, 0755);
	gp_root_init(&live, tmproot, &e);       /* an empty root: no nvidia_peermem, no NUMA node */
}

#endif
