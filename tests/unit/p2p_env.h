/* gpup2p unit tests — the environment of the libcuda and NVML test doubles for the p2p checks. */
#ifndef GPUP2P_UNIT_P2P_ENV_H
#define GPUP2P_UNIT_P2P_ENV_H

#include <stdlib.h>

#include "gpup2p/topo.h"

static inline void unit_setenv(const char *k, const char *v)
{
	if (v)
		setenv(k, v, 1);
	else
		unsetenv(k);
}

/* CUDA sees the topology's GPUs (t; NULL: the double's own), refuses the pairs in nopeer
 * (FAKECUDA_NOPEER), NVML answers status nvml for read and write and nvlink for NVLink (NULL: the
 * double's defaults), copies of kind corrupt go wrong. GPUP2P_LIBNVML names the NVML double. */
static inline void unit_p2p_env(const struct gp_topo *t, const char *nopeer, const char *nvml, const char *nvlink,
				const char *corrupt)
{
	static char ids[64 * 14], lib[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");

	ids[0] = '\0';
	for (int i = 0; t && i < t->ngpu && i < 64; i++)
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s", i ? "," : "", t->pci->devs[t->devs[i].pci].bdf);
	unit_setenv("FAKECUDA_BUSIDS", ids[0] ? ids : NULL);
	unit_setenv("FAKECUDA_NOPEER", nopeer);
	unit_setenv("FAKECUDA_CORRUPT", corrupt);
	unsetenv("FAKECUDA_CORRUPT_NTH");
	unsetenv("FAKECUDA_PEER_GBPS");
	unit_setenv("FAKENVML_P2P", nvml);
	unit_setenv("FAKENVML_P2P_NVLINK", nvlink);
	snprintf(lib, sizeof(lib), "%s/../tests/fakenvml/libnvidia-ml.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBNVML", lib, 1);
}

#endif
