/* gpup2p — NVML's P2P status per GPU pair, from libnvidia-ml.so.1 loaded at run time. The three entry
 * points are declared here from NVML's documented ABI (no NVML header at build time). */
#include <dlfcn.h>
#include <pthread.h>
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

/* One source GPU's row of statuses (its own thread). */
struct row {
	int (*status)(nvml_dev, nvml_dev, int, int *);
	nvml_dev *dev;
	struct gp_gpu_p2p *p;
	int i;
};

static void *row_one(void *arg)
{
	struct row *r = arg;

	for (int j = 0; j < r->p->n; j++)
		for (int k = 0; k < GP_P2P_NCAPS && r->i != j && r->dev[r->i] && r->dev[j]; k++) {
			int s = -1;

			if (r->status(r->dev[r->i], r->dev[j], k, &s) == 0 && s >= 0 && s < 127)
				r->p->st[r->i][j][k] = (signed char)s;
		}
	return NULL;
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
	{
		/* ~1.7 ms a call on an H200 and n x (n-1) x 4 calls: one thread per source GPU */
		struct row r[GP_GPU_MAX];
		pthread_t t[GP_GPU_MAX];
		int started[GP_GPU_MAX];

		for (int i = 0; i < p->n; i++) {
			r[i] = (struct row){ .status = status, .dev = dev, .p = p, .i = i };
			started[i] = p->n > 2 && pthread_create(&t[i], NULL, row_one, &r[i]) == 0;
			if (!started[i])
				row_one(&r[i]);
		}
		for (int i = 0; i < p->n; i++)
			if (started[i])
				pthread_join(t[i], NULL);
	}
	p->available = 1;
	shutdown();
	dlclose(lib);
}
