/* Device-only diagnostic: how long each NVML call that gpup2p's gpu module makes takes,
 * to see where `gpup2p topo`'s time goes. Build: cc -O2 -o nvml_timing nvml_timing.c -ldl */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef int (*fn0)(void);
typedef int (*fn_u)(unsigned *);
typedef int (*fn_h)(unsigned, void **);
typedef int (*fn_dp)(void *, void *);
typedef int (*fn_dlp)(void *, unsigned, void *);

int main(void)
{
	double t0 = now(), t;
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW), *dev[8];
	char buf[4096];
	unsigned n = 0;
	int v;

	printf("dlopen %.2f ms\n", now() - t0);
	if (!lib)
		return 1;
	t = now(); ((fn0)dlsym(lib, "nvmlInit_v2"))(); printf("nvmlInit_v2 %.2f ms\n", now() - t);
	t = now(); ((fn_u)dlsym(lib, "nvmlDeviceGetCount_v2"))(&n); printf("count %.2f ms (%u)\n", now() - t, n);
	for (unsigned i = 0; i < n && i < 8; i++) {
		double a = 0, b = 0, c = 0;
		int active = 0;

		t = now(); ((fn_h)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"))(i, &dev[i]); printf("handle %.2f ms\n", now() - t);
		t = now(); ((fn_dp)dlsym(lib, "nvmlDeviceGetPciInfo_v3"))(dev[i], buf); printf("pci %.2f ms\n", now() - t);
		t = now(); ((fn_dp)dlsym(lib, "nvmlDeviceGetMemoryInfo"))(dev[i], buf); printf("memory %.2f ms\n", now() - t);
		t = now(); ((fn_dp)dlsym(lib, "nvmlDeviceGetBAR1MemoryInfo"))(dev[i], buf); printf("bar1 %.2f ms\n", now() - t);
		for (unsigned l = 0; l < 18; l++) {
			t = now(); ((fn_dlp)dlsym(lib, "nvmlDeviceGetNvLinkState"))(dev[i], l, &v); a += now() - t;
			active += v;
			t = now(); ((fn_dlp)dlsym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2"))(dev[i], l, buf); b += now() - t;
			t = now(); ((fn_dlp)dlsym(lib, "nvmlDeviceGetNvLinkRemoteDeviceType"))(dev[i], l, &v); c += now() - t;
		}
		printf("18x link state %.2f ms (%d active), remote pci %.2f ms, remote type %.2f ms\n", a, active, b, c);
	}
	t = now(); ((fn0)dlsym(lib, "nvmlShutdown"))(); printf("shutdown %.2f ms\n", now() - t);
	printf("total %.2f ms\n", now() - t0);
	return 0;
}
