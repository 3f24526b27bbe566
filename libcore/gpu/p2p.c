/* gpup2p — NVML's P2P status per GPU pair, from libnvidia-ml.so.1 loaded at run time. The three entry
 * points are declared here from NVML's documented ABI (no NVML header at build time). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/gpu_p2p.h"

typedef struct nvml_device *nvml_dev;

const char *gp_gpu_p2p_status_name(int st)
{
	static const char *const n[] = { "OK", "chipset not supported", "GPU not supported",
					 "IOH topology not supported", "disabled by registry key", "not supported",
					 "unknown" };

	if (st == GP_P2P_FAILED)
		return "call failed";
	return st >= 0 && st < (int)(sizeof(n) / sizeof(n[0])) ? n[st] : "unknown";
}

const char *gp_gpu_p2p_cap_name(int cap)
{
	static const char *const n[GP_P2P_NCAPS] = { "read", "write", "nvlink", "atomics" };

	return cap >= 0 && cap < GP_P2P_NCAPS ? n[cap] : "?";
}

/* The statuses of the pair a, b, both ways. The driver answers for the pair, not a direction: NVML's call
 * is NVIDIA's RM control NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2 on the two GPUs' ids, whose capability
 * statuses are "the peer to peer capabilities discovered between the GPUs" of the list
 * (open-gpu-kernel-modules, ctrl0000system.h); only its optimal copy engines have a direction. So one
 * call per unordered pair and capability (1.7 ms each on an H200), half of what both orders cost. */
static void pair_one(int (*status)(nvml_dev, nvml_dev, int, int *), nvml_dev a, nvml_dev b, signed char *ab,
		     signed char *ba)
{
	for (int k = 0; k < GP_P2P_NCAPS; k++) {
		int s = -1;

		if (status(a, b, k, &s) == 0 && s >= 0 && s < 127)
			ab[k] = ba[k] = (signed char)s;
	}
}

void gp_gpu_p2p_query(const char (*bdf)[GP_BDF_LEN], int n, struct gp_gpu_p2p *p)
{
	const char *path = getenv("GPUP2P_LIBNVML");
	int (*init)(void), (*shutdown)(void), (*handle)(const char *, nvml_dev *);
	int (*status)(nvml_dev, nvml_dev, int, int *);
	const char *(*err)(int);
	nvml_dev dev[GP_GPU_MAX];
	void *lib;
	int rc;

	memset(p, 0, sizeof(*p));
	memset(p->st, GP_P2P_FAILED, sizeof(p->st));
	p->n = n < GP_GPU_MAX ? n : GP_GPU_MAX;
	lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(p->why, sizeof(p->why), "libnvidia-ml.so.1 not found (NVIDIA driver not installed)");
		return;
	}
	*(void **)&init = dlsym(lib, "nvmlInit_v2");
	*(void **)&shutdown = dlsym(lib, "nvmlShutdown");
	*(void **)&err = dlsym(lib, "nvmlErrorString");
	*(void **)&handle = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&status = dlsym(lib, "nvmlDeviceGetP2PStatus");
	if (!init || !shutdown || !err || !handle || !status) {
		snprintf(p->why, sizeof(p->why), "libnvidia-ml.so.1 lacks nvmlDeviceGetP2PStatus (driver too old)");
		dlclose(lib);
		return;
	}
	if ((rc = init())) {
		snprintf(p->why, sizeof(p->why), "NVML: %s", err(rc));
		dlclose(lib);
		return;
	}
	for (int i = 0; i < p->n; i++)
		if (handle(bdf[i], &dev[i]))
			dev[i] = NULL;
	/* one thread: the driver answers one NVML call at a time (results/nvml-serial-h200x4-*.txt) */
	for (int i = 0; i < p->n; i++)
		for (int j = i + 1; j < p->n && dev[i]; j++)
			if (dev[j])
				pair_one(status, dev[i], dev[j], p->st[i][j], p->st[j][i]);
	p->available = 1;
	shutdown();
	dlclose(lib);
}
